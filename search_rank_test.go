package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// rankTestDocs is the corpus of the differential test: keywordParityDocs
// (breadcrumbs, merged headings, repeated texts, heading-pair twins) and
// chunks in German and Japanese, with identifiers and a text whose words
// repeat another's in a different order, and listTestDocs' manual (a
// list chunk the list rule reorders).
func rankTestDocs() []*ai.Document {
	docs := keywordParityDocs(240)
	for i, text := range []string{
		"Die Rechnungsnummer steht oben rechts auf der ersten Seite der Rechnung.",
		"Rechnungen werden monatlich per E-Mail verschickt.",
		"受験者数は10ページに記載されています。試験問題用紙を印刷してください。",
		"試験問題の印刷は管理者が行います。受験者ごとの用紙があります。",
		"Set max_log_file_size in the configuration to bound the log.",
		"the log bound: set the configuration size of the max file",
		"Run with --allow-private to crawl intranet hosts; see http.server.read_timeout.",
	} {
		n := 10000 + i
		docs = append(docs, ai.DocumentFromText(text, map[string]any{"n": n, MetaSource: "lang", MetaURL: fmt.Sprintf("file:///l%d", i), MetaBreadcrumb: "Handbuch > Abschnitt " + fmt.Sprint(i)}))
	}
	return append(docs, listTestDocs()...)
}

// FuzzKeywordRankerStores is the differential test of the one keyword
// ranker: the same corpus and query give the same list on LocalvecStore,
// SQLiteStore and PgvecStore (SearchText, the top 10 and every match), up
// to the order of results the reference ranking scores alike (exact ties
// may fall either way only where the stores' floating-point sums differ
// in their last bits). PgvecStore joins when a database is configured
// (ASKYOURDOCS_TEST_DSN; required under scripts/test). The seeds are
// plain queries, quoted phrases, stop words, identifiers, German and
// Japanese; `go test -fuzz FuzzKeywordRankerStores` explores further.
func FuzzKeywordRankerStores(f *testing.F) {
	ctx := context.Background()
	docs := rankTestDocs()
	for _, q := range keywordParityQueries(docs[:240]) {
		f.Add(q)
	}
	for _, q := range []string{
		`"steht oben" Rechnung`, "Rechnungen verschickt", "受験者数", "試験問題用紙を印刷", `「受験者」 印刷`,
		"max_log_file_size", "--allow-private http.server.read_timeout", "what is the", `"the log" bound`,
		`'' "" ?`, `"configuration"`, "configuration size max file log",
		"verify archive members with the lossless codec", "packing commands overview", `"archive members" codec`, "zq-verify",
	} {
		f.Add(q)
	}
	type store struct {
		name string
		s    Searcher
	}
	local, err := NewLocalvecStore(genkit.Init(ctx), "rank", newTestEmbedder(8), f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { local.Close() })
	lite, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(f.TempDir(), "rank.db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { lite.Close() })
	stores := []store{{"localvec", local}, {"sqlite", lite}}
	if pgTestDSNOptional(f) != "" {
		stores = append(stores, store{"pgvector", pgTestStoreWith(f, newTestEmbedder(8), 8, nil)})
	}
	for _, st := range stores {
		if err := st.s.Index(ctx, docs); err != nil {
			f.Fatalf("%s: %v", st.name, err)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 200 {
			return
		}
		rank := keywordReferenceRank(t, docs, q, searchStopWords)
		for _, k := range []int{10, 1000} {
			want, err := stores[0].s.SearchText(ctx, q, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range stores[1:] {
				got, err := st.s.SearchText(ctx, q, k, nil)
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				keywordSameOrder(t, fmt.Sprintf("%s vs localvec, query %q, k %d", st.name, q, k), got, want, rank)
			}
		}
	})
}

// TestRankKeywordsTiesAtTheCut checks that a capped search returns the
// first results of the uncapped one when many chunks tie at the cap: the
// ranker sorts only the best few hits first, and must take every hit tied
// with the last of them, which ties then order by chunk ID.
func TestRankKeywordsTiesAtTheCut(t *testing.T) {
	an := localvecDefaultAnalyzer
	var docs []*ai.Document
	var keys []string
	for i := range 200 {
		text := "kayak paddle"
		if i%3 == 0 {
			text = "kayak river"
		}
		docs = append(docs, ai.DocumentFromText(fmt.Sprintf("%s %c%c", text, 'a'+i%26, 'a'+i/26), map[string]any{"n": i}))
		keys = append(keys, fmt.Sprintf("%08x", (i*7919)%200))
	}
	x := newLocalvecBM25(an, docs)
	all, err := x.search(t.Context(), newBM25Plan(an, "kayak paddle", nil), docs, keys, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 3, 10, 60} {
		got, err := x.search(t.Context(), newBM25Plan(an, "kayak paddle", nil), docs, keys, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if docMetaN(got) != docMetaN(all[:k]) {
			t.Errorf("top %d: %s, want %s", k, docMetaN(got), docMetaN(all[:k]))
		}
	}
	// The tied chunks (all with both words, the same length) come in key
	// order.
	for i := 1; i < 60; i++ {
		a, b := all[i-1].Metadata["n"].(int), all[i].Metadata["n"].(int)
		if keys[a] > keys[b] {
			t.Fatalf("results %d and %d out of key order: %s > %s", i-1, i, keys[a], keys[b])
		}
	}
	// A filter refusing most of the best hits makes the ranker read past
	// the first cut.
	odd := func(m map[string]any) bool { n, _ := m["n"].(int); return n%3 == 0 }
	got, err := x.search(t.Context(), newBM25Plan(an, "kayak paddle", nil), docs, keys, 5, odd)
	if err != nil || len(got) != 5 || !strings.HasPrefix(DocText(got[0]), "kayak river") {
		t.Fatalf("filtered: %s, %v", docMetaN(got), err)
	}
}

// pgTestDSNOptional returns ASKYOURDOCS_TEST_DSN, or "" when it is unset
// and no database is required (ASKYOURDOCS_REQUIRE_DB=1 fails then): for
// tests whose other stores run without one.
func pgTestDSNOptional(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("ASKYOURDOCS_TEST_DSN"); dsn != "" || os.Getenv("ASKYOURDOCS_REQUIRE_DB") == "1" {
		return pgTestDSN(t)
	}
	return ""
}
