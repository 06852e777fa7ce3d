package engine

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// longPageTestDocs is a manual where a describing query's words stand in
// a long page's chunk, each once and far apart, and together in a short
// page's one chunk, which is longer and says them less often.
func longPageTestDocs() []*ai.Document {
	var docs []*ai.Document
	add := func(url, crumb, text string) {
		docs = append(docs, ai.DocumentFromText(text, map[string]any{MetaSource: "manual", MetaURL: url, MetaBreadcrumb: crumb, "n": len(docs)}))
	}
	add("file:///guide.html", "Guide > Upgrading",
		"When you upgrade, allocate time for testing. Old settings are read and converted to the new format on first start. "+
			"Check the free space on the disk before you begin, since logs grow. The dynamic reports page shows each "+
			"step. The memory of the previous run is kept in the state file.")
	for i := range 15 {
		add("file:///guide.html", fmt.Sprintf("Guide > Part %d", i),
			fmt.Sprintf("Part %d of the upgrade guide lists the settings renamed in release %d and what replaces each of them.", i, i))
	}
	add("file:///heap.html", "Heap",
		"These functions allocate and free dynamic memory on the heap. The first one returns a pointer to the block it "+
			"reserved, or an error value when the request cannot be met; the second one takes such a pointer back. "+
			"A block must be given back exactly once, and never used after that, or the program's behaviour is undefined. "+
			"Blocks are aligned for any object type, and their content is not cleared.")
	for i := range 6 {
		add(fmt.Sprintf("file:///other%d.html", i), "Other",
			fmt.Sprintf("Other page %d: commands, options and files, with an example of each.", i))
	}
	return docs
}

// TestKeywordLongPagesAndProximity checks the long-page and proximity
// rules (search_rank_pages.go) on every store: a description finds the
// short page holding its words together before a long page's chunk
// holding them scattered, which plain BM25 ranks first (as the same words
// asked as a question show: the rules leave questions alone); a chunk
// whose heading holds a keyword keeps its place.
func TestKeywordLongPagesAndProximity(t *testing.T) {
	ctx := context.Background()
	docs := longPageTestDocs()
	first := func(t *testing.T, s Searcher, q string) string {
		t.Helper()
		got, err := s.SearchText(ctx, q, 5, nil)
		if err != nil || len(got) == 0 {
			t.Fatalf("%q: %v, %d results", q, err, len(got))
		}
		url, _ := got[0].Metadata[MetaURL].(string)
		return strings.TrimPrefix(url, "file:///")
	}
	for name, s := range keywordTestStores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.Index(ctx, docs); err != nil {
				t.Fatal(err)
			}
			if got := first(t, s, "how do I allocate and free dynamic memory?"); got != "guide.html" {
				t.Errorf("the question (no rule) ranks %s first, want guide.html: the test no longer tests the rules", got)
			}
			if got := first(t, s, "allocate and free dynamic memory"); got != "heap.html" {
				t.Errorf("the description ranks %s first, want heap.html", got)
			}
		})
	}
}

// TestReweighKeepsHeadingMatches checks the long-page rule's exemption: a
// long page's chunk whose own headings hold a keyword keeps its score,
// one whose headings do not is divided by its page's length.
func TestReweighKeepsHeadingMatches(t *testing.T) {
	an := localvecDefaultAnalyzer
	var docs []*ai.Document
	for i := range 20 {
		docs = append(docs, ai.DocumentFromText(fmt.Sprintf("chunk %d of the long page", i), map[string]any{MetaURL: "file:///long.html", MetaBreadcrumb: "Long > Part", "n": i}))
	}
	docs[0].Metadata[MetaBreadcrumb] = "Long > Signal handlers"
	docs = append(docs, ai.DocumentFromText("the short page", map[string]any{MetaURL: "file:///short.html", "n": 20}))
	v := newLocalvecBM25(an, docs).view(docs, localvecTestKeys(docs), nil)
	p := newBM25Plan(an, "signal handlers", nil)
	for _, tc := range []struct {
		long int
		want string
	}{{0, "0 20"}, {1, "20 1"}} {
		got := []*ai.Document{docs[tc.long], docs[20]}
		ranks := []keywordHit{{score: 1.1}, {score: 1}}
		if err := reweighKeywordDocs(t.Context(), v, p, got, ranks, nil); err != nil {
			t.Fatal(err)
		}
		if s := docMetaN(got); s != "["+tc.want+"]" {
			t.Errorf("long page's chunk %d against the short page: %s, want [%s]", tc.long, s, tc.want)
		}
	}
}

// TestProximityScore checks BM25TP's sum on small texts: adjacent
// keywords count 1, two words apart 1/4, past the window nothing, a
// keyword next to itself nothing; each pair saturated with k1 and weighed
// by its rarer keyword's weight.
func TestProximityScore(t *testing.T) {
	an := localvecDefaultAnalyzer
	p := newBM25Plan(an, "alpha beta gamma", nil)
	sat := func(x float64) float64 { return x * (bm25K1 + 1) / (x + bm25K1) }
	for _, tc := range []struct {
		text    string
		weights []float64
		want    float64
	}{
		{"alpha beta gamma", []float64{1, 1, 1}, sat(1) + sat(1) + sat(0.25)},
		{"alpha beta gamma", []float64{1, 0.5, 1}, 0.5*sat(1) + 0.5*sat(1) + sat(0.25)},
		{"alpha one two three four five beta", []float64{1, 1, 1}, 0},
		{"alpha one two three four beta", []float64{1, 1, 1}, sat(1.0 / 25)},
		{"alpha alpha", []float64{1, 1, 1}, 0},
		{"beta x alpha beta", []float64{1, 1, 1}, sat(0.25 + 1)},
	} {
		if got := proximityScore(p, tc.weights, tc.text); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%q, weights %v: %g, want %g", tc.text, tc.weights, got, tc.want)
		}
	}
}

// TestKeywordNameRule checks the name rule (search_rank_pages.go) on
// every store: a description whose words stand in a page's name ranks
// that page first, though another page says them more often, which plain
// BM25 ranks first (as the same words asked as a question show: the rule
// leaves questions alone).
func TestKeywordNameRule(t *testing.T) {
	ctx := context.Background()
	var docs []*ai.Document
	add := func(url, text string) {
		docs = append(docs, ai.DocumentFromText(text, map[string]any{MetaSource: "manual", MetaURL: url}))
	}
	add("file:///man7/crypto-io.7.txt", "Files and BIOs: a file BIO reads a file, a BIO chain filters the file data, and BIO pairs connect two BIOs without a file.")
	add("file:///man3/BIO_s_file.3.txt", "BIO_s_file returns the method that wraps a stdio stream. Reads and writes go to the stream, a seek moves its "+
		"position and a flush empties the stream's buffer; closing the object can close the stream too. The stream may be a "+
		"standard one, opened elsewhere by the application, or opened by name through a helper.")
	for i := range 6 {
		add(fmt.Sprintf("file:///man1/other%d.1.txt", i), fmt.Sprintf("Other page %d: commands, options and settings, with an example of each.", i))
	}
	for name, s := range keywordTestStores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.Index(ctx, docs); err != nil {
				t.Fatal(err)
			}
			first := func(q string) string {
				got, err := s.SearchText(ctx, q, 5, nil)
				if err != nil || len(got) == 0 {
					t.Fatalf("%q: %v, %d results", q, err, len(got))
				}
				url, _ := got[0].Metadata[MetaURL].(string)
				return strings.TrimPrefix(url, "file:///")
			}
			if got := first("how do I use a FILE bio?"); got != "man7/crypto-io.7.txt" {
				t.Errorf("the question (no rule) ranks %s first, want man7/crypto-io.7.txt: the test no longer tests the rule", got)
			}
			if got := first("FILE bio"); got != "man3/BIO_s_file.3.txt" {
				t.Errorf("the description ranks %s first, want man3/BIO_s_file.3.txt", got)
			}
		})
	}
}

// keywordTestStores returns a new, empty store of each kind by name
// (PgvecStore only with a database; under scripts/test it must have one).
func keywordTestStores(t *testing.T) map[string]Searcher {
	ctx := context.Background()
	local, err := NewLocalvecStore(genkit.Init(ctx), "names", newTestEmbedder(8), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	lite, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(t.TempDir(), "names.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	out := map[string]Searcher{"localvec": local, "sqlite": lite}
	if pgTestDSNOptional(t) != "" {
		out["pgvector"] = pgTestStoreWith(t, newTestEmbedder(8), 8, nil)
	}
	return out
}

// TestNameScore checks what the name rule counts: the keywords a chunk's
// page name and own headings hold, each by its IDF, and of a query's
// identifier the whole, not its parts.
func TestNameScore(t *testing.T) {
	an := localvecDefaultAnalyzer
	idfs := func(p bm25Plan) []float64 {
		out := make([]float64, len(p.keywords))
		for i := range out {
			out[i] = float64(i + 1)
		}
		return out
	}
	doc := func(url, crumb string) *ai.Document {
		return ai.DocumentFromText("text", map[string]any{MetaURL: url, MetaBreadcrumb: crumb})
	}
	p := newBM25Plan(an, "package registry", nil) // package: 1, registry: 2
	for _, tc := range []struct {
		doc  *ai.Document
		want float64
	}{
		{doc("file:///CMAKE_EXPORT_PACKAGE_REGISTRY.html", ""), 3},
		{doc("file:///cmake-packages.7.html", "cmake-packages(7) > Package Registry"), 3},
		{doc("file:///cmake-packages.7.html", "cmake-packages(7) > Creating Packages"), 1},
		{doc("file:///install.html", "install > Registry"), 2},
		{doc("file:///other.html", ""), 0},
	} {
		url, _ := tc.doc.Metadata[MetaURL].(string)
		if got := nameScore(p, idfs(p), p.nameKeywords(), tc.doc); got != tc.want {
			t.Errorf("%s %q: %v, want %v", url, tc.doc.Metadata[MetaBreadcrumb], got, tc.want)
		}
	}
	q := newBM25Plan(an, "color.status", nil)
	counted := q.nameKeywords()
	for i, k := range q.keywords {
		if counted[i] != (k == "color.status") {
			t.Errorf("keyword %q counted %v: only the identifier's whole counts", k, counted[i])
		}
	}
	if got := nameScore(q, idfs(q), counted, doc("file:///git-status.html", "")); got != 0 {
		t.Errorf("git-status page scores %v for color.status: an identifier's part counted", got)
	}
	if got := nameScore(q, idfs(q), counted, doc("file:///git-config.html", "git-config > color.status")); got == 0 {
		t.Error("a heading naming the identifier whole scores nothing")
	}
}
