package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"
)

// revalidateSite is a documentation site that validates like a real
// server: every page has a strong ETag (a hash of its body) and a
// Last-Modified, answers If-None-Match and If-Modified-Since with 304,
// and lists its pages (with <lastmod> when set) in /sitemap.xml. It
// counts the answers by status and the body bytes it sends.
type revalidateSite struct {
	srv      *httptest.Server
	mu       sync.Mutex
	pages    map[string]string    // path -> body
	modified map[string]time.Time // path -> Last-Modified
	lastmod  map[string]string    // path -> sitemap <lastmod>
	status   map[int]int          // answers by status (pages only)
	bytes    int64                // body bytes sent (pages only)
	requests []string             // page paths requested
}

func newRevalidateSite(t testing.TB, n int) *revalidateSite {
	s := &revalidateSite{pages: map[string]string{}, modified: map[string]time.Time{}, lastmod: map[string]string{}, status: map[int]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	var list strings.Builder
	for i := range n {
		fmt.Fprintf(&list, `<li><a href="/docs/p%03d.html">Page %d</a></li>`, i, i)
	}
	s.setPage("/docs/", revalidateLayout("Contents", "<ul>"+list.String()+"</ul>"))
	for i := range n {
		s.setPage(fmt.Sprintf("/docs/p%03d.html", i), revalidatePageBody(i, ""))
	}
	return s
}

// revalidateLayout wraps content in the site's shared navigation and
// footer, plain <div>s that only the crawl's cross-page boilerplate rule
// removes (so a crawl that reads one page must still count the others).
func revalidateLayout(title, content string) string {
	return `<html><head><title>` + title + `</title></head><body>
<div class="top"><p>Home · Guide · Reference · Download the manual as a PDF file</p></div>
<div class="main"><h1>` + title + `</h1>` + content + `</div>
<div class="bottom"><p>Copyright the Example project. Licensed under the Apache License.</p></div></body></html>`
}

// revalidatePageBody is page i: three sections, each its own chunk at a
// chunk size of 200, so that an edit of one section changes one chunk.
func revalidatePageBody(i int, edit string) string {
	words := []string{"compression", "backup", "scheduler", "mirror", "quota", "journal", "cipher", "snapshot"}
	w := words[i%len(words)]
	first := fmt.Sprintf("The %s module number %d keeps its settings in a file of its own.", w, i)
	if edit != "" {
		first = edit
	}
	return revalidateLayout(fmt.Sprintf("Topic %d", i),
		`<h2>Overview</h2><p>`+first+`</p>`+
			fmt.Sprintf(`<h2>Options</h2><p>Option %d of the %s module changes how often it runs, from once an hour to once a week.</p>`, i, w)+
			fmt.Sprintf(`<h2>Errors</h2><p>When the %s module %d fails it writes the reason to the system log and retries later.</p>`, w, i))
}

func (s *revalidateSite) url(path string) string { return s.srv.URL + path }

func (s *revalidateSite) setPage(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = body
	s.modified[path] = time.Now().UTC().Truncate(time.Second)
}

func (s *revalidateSite) removePage(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pages, path)
}

// reset clears the counters.
func (s *revalidateSite) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.bytes, s.requests = map[int]int{}, 0, nil
}

func (s *revalidateSite) counts() (map[int]int, int64, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.status), s.bytes, slices.Clone(s.requests)
}

func (s *revalidateSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", s.srv.URL)
		return
	case "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		paths := make([]string, 0, len(s.pages))
		for p := range s.pages {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			fmt.Fprintf(&b, "<url><loc>%s%s</loc>", s.srv.URL, p)
			if m := s.lastmod[p]; m != "" {
				fmt.Fprintf(&b, "<lastmod>%s</lastmod>", m)
			}
			b.WriteString("</url>")
		}
		b.WriteString("</urlset>")
		w.Write([]byte(b.String()))
		return
	}
	s.requests = append(s.requests, r.URL.Path)
	body, ok := s.pages[r.URL.Path]
	if !ok {
		s.status[http.StatusNotFound]++
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256([]byte(body))
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", s.modified[r.URL.Path].Format(http.TimeFormat))
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == etag {
		s.status[http.StatusNotModified]++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	s.status[http.StatusOK]++
	s.bytes += int64(len(body))
	w.Write([]byte(body))
}

// revalidateIndex is an IndexPageFunc into store through IndexSource.
func revalidateIndex(store VectorStore) IndexPageFunc {
	return func(ctx context.Context, pageURL string, paras []Paragraph) (int, error) {
		n, _, err := IndexSource(ctx, store, crawlPageSource{url: pageURL, paras: paras}, 200, 0, nil)
		return n, err
	}
}

// A re-crawl with the previous crawl's pages: an unchanged 200-page site
// answers 304 for every page and embeds nothing; one edited page is read
// again and only its edited chunk embedded; a page removed from the site
// and from the contents page is still revalidated and reported gone; the
// index ends equal to a fresh crawl's.
func TestRunCrawlRevalidates(t *testing.T) {
	const n = 200
	site := newRevalidateSite(t, n)
	ctx := t.Context()
	g := genkit.Init(ctx)
	emb := newTestEmbedder(64)
	store, err := NewLocalvecStore(g, "live", emb, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	crawl := func(prev []CrawlPage) CrawlResult {
		t.Helper()
		res, err := runCrawl(ctx, CrawlInput{SeedURLs: []string{site.url("/docs/")}, MaxPages: 300, Previous: prev},
			"", revalidateIndex(store), nil, testCrawlOptions())
		if err != nil {
			t.Fatalf("crawl: %v (%+v)", err, res.Errors)
		}
		return res
	}

	first := crawl(nil)
	if first.PagesIndexed != n+1 || len(first.Pages) != n+1 || first.PagesUnchanged != 0 {
		t.Fatalf("first crawl: %d indexed, %d pages recorded, %d unchanged, errors %q", first.PagesIndexed, len(first.Pages), first.PagesUnchanged, first.Errors)
	}
	for _, p := range first.Pages {
		if p.ETag == "" || p.LastModified == "" || len(p.Paragraphs) == 0 || p.NotModified {
			t.Fatalf("page state %+v: validators or fingerprints missing", p)
		}
	}
	firstChunks := crawlStoreChunks(t, store)

	// Unchanged: 304 everywhere, nothing extracted, nothing embedded. The
	// state goes through JSON as an app would keep it.
	var prev []CrawlPage
	data, _ := json.Marshal(first.Pages)
	if err := json.Unmarshal(data, &prev); err != nil {
		t.Fatal(err)
	}
	site.reset()
	embedded := emb.docs.Load()
	second := crawl(prev)
	status, sent, _ := site.counts()
	if status[http.StatusNotModified] != n+1 || status[http.StatusOK] != 0 || sent != 0 {
		t.Fatalf("unchanged re-crawl: answers %v, %d body bytes; want %d 304s and nothing else", status, sent, n+1)
	}
	if second.PagesUnchanged != n+1 || second.PagesIndexed != 0 || emb.docs.Load() != embedded || len(second.Pages) != n+1 {
		t.Fatalf("unchanged re-crawl: %d unchanged, %d indexed, %d embedded, %d pages recorded",
			second.PagesUnchanged, second.PagesIndexed, emb.docs.Load()-embedded, len(second.Pages))
	}
	if got := crawlStoreChunks(t, store); !mapsEqualStrings(got, firstChunks) {
		t.Fatal("an unchanged re-crawl changed the index")
	}

	// One page edited in one section: one page read, one chunk embedded.
	site.setPage("/docs/p007.html", revalidatePageBody(7, "The mirror module keeps a copy of every repository on a second disk."))
	site.reset()
	embedded = emb.docs.Load()
	third := crawl(second.Pages)
	status, _, requests := site.counts()
	if status[http.StatusOK] != 1 || status[http.StatusNotModified] != n || third.PagesIndexed != 1 {
		t.Fatalf("re-crawl after one edit: answers %v, %d indexed", status, third.PagesIndexed)
	}
	if got := emb.docs.Load() - embedded; got != 1 {
		t.Fatalf("re-crawl after one edit embedded %d chunks, want the 1 edited", got)
	}
	if !slices.Contains(requests, "/docs/p007.html") {
		t.Fatalf("the edited page was not requested: %q", requests)
	}

	// A page removed with its link: still revalidated, reported gone.
	var list strings.Builder
	for i := range n {
		if i != 42 {
			fmt.Fprintf(&list, `<li><a href="/docs/p%03d.html">Page %d</a></li>`, i, i)
		}
	}
	site.setPage("/docs/", revalidateLayout("Contents", "<ul>"+list.String()+"</ul>"))
	site.removePage("/docs/p042.html")
	site.reset()
	fourth := crawl(third.Pages)
	gone := site.url("/docs/p042.html")
	if !slices.ContainsFunc(fourth.Errors, func(e string) bool { return strings.HasPrefix(e, gone+": HTTP status 404") }) {
		t.Fatalf("the removed page was not reported gone: %q", fourth.Errors)
	}
	if slices.ContainsFunc(fourth.Pages, func(p CrawlPage) bool { return p.URL == gone }) {
		t.Fatal("the removed page is still in the crawl's pages")
	}
	if _, err := store.DeleteByURL(ctx, gone); err != nil { // what the app does with a 404
		t.Fatal(err)
	}

	// The index equals a fresh crawl's of the site as it is now.
	fresh, err := NewLocalvecStore(g, "fresh", emb, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fresh.Close() })
	if _, err := runCrawl(ctx, CrawlInput{SeedURLs: []string{site.url("/docs/")}, MaxPages: 300}, "", revalidateIndex(fresh), nil, testCrawlOptions()); err != nil {
		t.Fatal(err)
	}
	if got, want := crawlStoreChunks(t, store), crawlStoreChunks(t, fresh); !mapsEqualStrings(got, want) {
		t.Fatalf("revalidated index differs from a fresh crawl's: %d vs %d pages", len(got), len(want))
	}
}

// A sitemap's <lastmod> older than a page's last fetch skips the request
// altogether; a newer one (or none) makes the crawl ask.
func TestRunCrawlSitemapLastmodSkips(t *testing.T) {
	site := newRevalidateSite(t, 20)
	ctx := t.Context()
	g := genkit.Init(ctx)
	store, err := NewLocalvecStore(g, "live", newTestEmbedder(64), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	crawl := func(prev []CrawlPage) CrawlResult {
		t.Helper()
		res, err := runCrawl(ctx, CrawlInput{SeedURLs: []string{site.url("/docs/")}, Previous: prev},
			"", revalidateIndex(store), nil, testCrawlOptions())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := crawl(nil)
	if first.PagesIndexed != 21 {
		t.Fatalf("first crawl indexed %d pages: %q", first.PagesIndexed, first.Errors)
	}
	site.mu.Lock()
	for p := range site.pages {
		site.lastmod[p] = "2020-01-02" // long before the first crawl
	}
	site.lastmod["/docs/p003.html"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	site.mu.Unlock()
	site.reset()
	second := crawl(first.Pages)
	_, _, requests := site.counts()
	if !slices.Equal(requests, []string{"/docs/p003.html"}) {
		t.Fatalf("requests %q, want only the page whose lastmod is newer", requests)
	}
	if second.PagesUnchanged != 21 || second.PagesIndexed != 0 {
		t.Fatalf("%d unchanged (want 21: 20 skipped, 1 answered 304), %d indexed", second.PagesUnchanged, second.PagesIndexed)
	}
	// A skipped page keeps the time it was fetched, so that a later lastmod
	// still makes the crawl ask.
	for _, p := range second.Pages {
		if p.URL == site.url("/docs/p001.html") {
			if i := slices.IndexFunc(first.Pages, func(q CrawlPage) bool { return q.URL == p.URL }); !p.Fetched.Equal(first.Pages[i].Fetched) {
				t.Fatalf("skipped page's Fetched moved: %v -> %v", first.Pages[i].Fetched, p.Fetched)
			}
		}
	}
}

func TestParseSitemapLastmod(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"2026-03-04", "2026-03-04T23:59:59.999999999Z"},
		{"2026-03", "2026-03-31T23:59:59.999999999Z"},
		{"2026", "2026-12-31T23:59:59.999999999Z"},
		{"2026-03-04T10:20:30+01:00", "2026-03-04T09:20:30Z"},
		{"2026-03-04T10:20+01:00", "2026-03-04T09:20:59.999999999Z"},
	} {
		got, ok := parseSitemapLastmod(c.in)
		if !ok || got.UTC().Format(time.RFC3339Nano) != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, got.UTC().Format(time.RFC3339Nano), ok, c.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-13-01", "04/03/2026"} {
		if _, ok := parseSitemapLastmod(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	sm, err := parseCrawlSitemap([]byte(`<urlset><url><lastmod>2026-01-02</lastmod><loc>https://x.test/a</loc></url><url><loc>https://x.test/b</loc></url><url><loc>https://x.test/c</loc><lastmod>junk</lastmod></url></urlset>`))
	if err != nil || len(sm.pages) != 3 || len(sm.lastmod) != 1 || sm.lastmod[0].Format("2006-01-02") != "2026-01-02" {
		t.Fatalf("lastmod of a <url> with it before <loc>: %+v %v", sm, err)
	}
}
