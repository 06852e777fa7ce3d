package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// crawlPageSource is the IngestSource an app writes around IndexPageFunc:
// one crawled page, upserted by URL.
type crawlPageSource struct {
	url   string
	paras []Paragraph
}

func (s crawlPageSource) Name() string { return s.url }

func (s crawlPageSource) Fetch(ctx context.Context) ([]Paragraph, error) { return s.paras, nil }

func (s crawlPageSource) Documents(chunks []Chunk) []*ai.Document {
	docs := make([]*ai.Document, len(chunks))
	for i, c := range chunks {
		docs[i] = ai.DocumentFromText(c.Text, map[string]any{MetaURL: s.url, MetaSource: "crawl", "breadcrumb": c.Breadcrumb})
	}
	return docs
}

func (s crawlPageSource) DeleteStale(ctx context.Context, store VectorStore) (int, error) {
	return store.DeleteByURL(ctx, s.url)
}

// crawlStoreChunks reads every chunk of a LocalvecStore's file: URL -> texts.
func crawlStoreChunks(t *testing.T, store *LocalvecStore) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(store.path)
	if err != nil {
		t.Fatal(err)
	}
	var db map[string]localvec.DbValue
	if err := json.Unmarshal(data, &db); err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]string)
	for _, v := range db {
		u, _ := v.Doc.Metadata[MetaURL].(string)
		out[u] = append(out[u], DocText(v.Doc))
	}
	for u := range out {
		slices.Sort(out[u])
	}
	return out
}

// End to end: crawl the site with the shared layout into a LocalvecStore
// through IndexSource; no chunk holds the layout, every page's own text is
// indexed, and replaying the cache into a second store gives the same
// chunks.
func TestRunCrawlIndexSourceEndToEnd(t *testing.T) {
	site := newCrawlTestSite(t)
	links := []string{"/docs/", "/docs/borrowing.html", "/docs/printing.html", "/docs/wifi.html"}
	own := map[string]string{
		"/docs/":               "Welcome to the library documentation.",
		"/docs/borrowing.html": "Students may borrow up to 30 books for four weeks.",
		"/docs/printing.html":  "Printing costs 5 cents per page in black and white.",
		"/docs/wifi.html":      "Connect to the eduroam network with your university account.",
	}
	for _, p := range links {
		site.html(p, crawlTestLayout("Page "+p, "<p>"+own[p]+"</p><h2>Details</h2><p>More about "+p+" follows here.</p>", links...))
	}
	ctx := t.Context()
	g := genkit.Init(ctx)
	emb := newTestEmbedder(64)
	newStore := func(name string) *LocalvecStore {
		s, err := NewLocalvecStore(g, name, emb, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	indexInto := func(store *LocalvecStore) IndexPageFunc {
		return func(ctx context.Context, pageURL string, paras []Paragraph) (int, error) {
			n, _, err := IndexSource(ctx, store, crawlPageSource{url: pageURL, paras: paras}, 120, 20, nil)
			return n, err
		}
	}
	live := newStore("live")
	cacheDir := t.TempDir()
	res, err := runCrawl(ctx, CrawlInput{SeedURLs: []string{site.url("/docs/")}}, cacheDir, indexInto(live), nil, crawlSaveOptions())
	if err != nil || res.PagesIndexed != 4 || len(res.Errors) != 0 {
		t.Fatalf("crawl: %+v, %v", res, err)
	}
	chunks := crawlStoreChunks(t, live)
	if len(chunks) != 4 {
		t.Fatalf("chunks for %d URLs, want 4", len(chunks))
	}
	for p, text := range own {
		texts := chunks[site.url(p)]
		all := strings.Join(texts, "\n")
		if !strings.Contains(all, text) || !strings.Contains(all, "More about "+p) {
			t.Errorf("%s: own text missing from its chunks %q", p, texts)
		}
		for _, c := range texts {
			for _, b := range crawlTestBoilerplate {
				if strings.Contains(c, b) {
					t.Errorf("%s: chunk %q contains boilerplate %q", p, c, b)
				}
			}
		}
	}
	// The index answers from the right page.
	resp, err := live.Retriever.Retrieve(ctx, &ai.RetrieverRequest{
		Query:   ai.DocumentFromText("eduroam network university account", nil),
		Options: &localvec.RetrieverOptions{K: 1},
	})
	if err != nil || len(resp.Documents) != 1 || resp.Documents[0].Metadata[MetaURL] != site.url("/docs/wifi.html") {
		t.Fatalf("retrieve: %v, %+v", err, resp)
	}

	replayed := newStore("replayed")
	rres, err := ReindexCrawlData(ctx, cacheDir, indexInto(replayed), nil)
	if err != nil || rres.PagesIndexed != 4 || len(rres.Errors) != 0 {
		t.Fatalf("reindex: %+v, %v", rres, err)
	}
	if got := crawlStoreChunks(t, replayed); !mapsEqualStrings(got, chunks) {
		t.Fatalf("replayed chunks differ from the live crawl's:\nlive   %q\nreplay %q", chunks, got)
	}
	// Re-crawling replaces each page's chunks instead of duplicating them.
	if _, err := runCrawl(ctx, CrawlInput{SeedURLs: []string{site.url("/docs/")}}, filepath.Join(cacheDir, "again"), indexInto(live), nil, testCrawlOptions()); err != nil {
		t.Fatal(err)
	}
	if got := crawlStoreChunks(t, live); !mapsEqualStrings(got, chunks) {
		t.Fatalf("second crawl changed the index: %q", got)
	}
}

func mapsEqualStrings(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
