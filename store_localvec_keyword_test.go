package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// localvecKeywordResults returns the texts and URLs KeywordSearch returns
// for q, one line each, and fails the test on an error.
func localvecKeywordResults(t *testing.T, s *LocalvecStore, q string) string {
	t.Helper()
	got, err := s.KeywordSearch(t.Context(), q, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, d := range got {
		fmt.Fprintf(&b, "%v %s\n", d.Metadata[MetaURL], DocText(d))
	}
	return b.String()
}

// localvecFreshResults is localvecKeywordResults from an index built from
// scratch over docs with an, the ranking the store's lazy index must give.
func localvecFreshResults(t *testing.T, an *textAnalyzer, docs []*ai.Document, q string) string {
	t.Helper()
	return localvecIndexResults(t, newLocalvecBM25(an, docs), docs, localvecTestKeys(docs), q)
}

// localvecIndexResults is localvecFreshResults from the index x of docs.
func localvecIndexResults(t *testing.T, x *bm25Index, docs []*ai.Document, keys []string, q string) string {
	t.Helper()
	got, err := x.search(t.Context(), newBM25Plan(x.an, q, nil), docs, keys, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, d := range got {
		fmt.Fprintf(&b, "%v %s\n", d.Metadata[MetaURL], DocText(d))
	}
	return b.String()
}

// TestLocalvecKeywordIndexLazy checks that writes do not analyse texts
// (the index lags until a keyword query), and that the index brought up to
// date after any mix of additions and removals, of rows it covers and rows
// it does not yet, ranks exactly as one built from scratch.
func TestLocalvecKeywordIndexLazy(t *testing.T) {
	ctx := t.Context()
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(16))
	docs := keywordBenchDocs(1500)
	for i, d := range docs {
		d.Metadata = map[string]any{MetaURL: fmt.Sprintf("u%d", i%60), MetaSource: "s"}
	}
	if err := IndexInBatches(ctx, s, docs[:600], nil); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	lagging := s.rows.kw == nil || s.rows.kw.live() == 0
	s.mu.RUnlock()
	if !lagging {
		t.Fatal("writing 600 documents analysed them before any keyword query")
	}
	queries := keywordBenchQueries(docs, 6)
	r := rand.New(rand.NewPCG(26, 6))
	next := 600
	for round := range 8 {
		if round > 0 {
			// Add a batch (not yet indexed), then delete some URLs: their
			// rows are partly indexed, partly not.
			end := min(next+100+r.IntN(150), len(docs))
			if err := s.Index(ctx, docs[next:end]); err != nil {
				t.Fatal(err)
			}
			next = end
			for range 1 + r.IntN(4) {
				if _, err := s.DeleteByURL(ctx, fmt.Sprintf("u%d", r.IntN(60))); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.mu.RLock()
		kept := slices.Clone(s.rows.docs)
		s.mu.RUnlock()
		fresh, keys := newLocalvecBM25(localvecDefaultAnalyzer, kept), localvecTestKeys(kept)
		for _, q := range queries {
			if got, want := localvecKeywordResults(t, s, q), localvecIndexResults(t, fresh, kept, keys, q); got != want {
				t.Fatalf("round %d, query %q:\nlazy index:\n%s\nfresh index:\n%s", round, q, got, want)
			}
		}
		s.mu.RLock()
		live, n := s.rows.kw.live(), len(s.rows.ids)
		s.mu.RUnlock()
		if live != n {
			t.Fatalf("round %d: after a keyword query the index covers %d of %d rows", round, live, n)
		}
	}
}

// TestLocalvecKeywordIndexConcurrentCatchUp has many readers bring the
// lagging index up to date at once, while a writer adds and deletes (run it
// with -race): every reader gets the ranking of a fresh index over the rows
// of some state the writer left.
func TestLocalvecKeywordIndexConcurrentCatchUp(t *testing.T) {
	ctx := t.Context()
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(16))
	const step = 40 // documents per URL
	docs := keywordBenchDocs(13 * step)
	for i, d := range docs {
		d.Metadata = map[string]any{MetaURL: fmt.Sprintf("u%d", i/step), MetaSource: "s"}
	}
	q := keywordBenchQueries(docs, 1)[0]
	// The rankings each state of the writer below can give: the first m
	// URLs' documents, or those of step k without the k-th URL's.
	want := map[string]bool{}
	for m := 4; m <= 13; m++ {
		want[localvecFreshResults(t, localvecDefaultAnalyzer, docs[:m*step], q)] = true
	}
	for k := 4; k < 12; k++ {
		want[localvecFreshResults(t, localvecDefaultAnalyzer, slices.Concat(docs[:k*step], docs[(k+1)*step:(k+2)*step]), q)] = true
	}
	if err := s.Index(ctx, docs[:4*step]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.KeywordSearch(ctx, q, 0, nil, nil)
				if err != nil {
					errs <- err.Error()
					return
				}
				var b strings.Builder
				for _, d := range got {
					fmt.Fprintf(&b, "%v %s\n", d.Metadata[MetaURL], DocText(d))
				}
				if !want[b.String()] {
					errs <- "a ranking no state of the writer gives:\n" + b.String()
					return
				}
				if _, err := s.keywordQueryStats(ctx, q); err != nil {
					errs <- err.Error()
					return
				}
			}
		}()
	}
	for k := 4; k < 12; k++ {
		// Add two URLs' documents, delete the first URL, add it again.
		if err := s.Index(ctx, docs[k*step:(k+2)*step]); err != nil {
			t.Error(err)
		}
		if _, err := s.DeleteByURL(ctx, fmt.Sprintf("u%d", k)); err != nil {
			t.Error(err)
		}
		if err := s.Index(ctx, docs[k*step:(k+1)*step]); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got, want := localvecKeywordResults(t, s, q), localvecFreshResults(t, localvecDefaultAnalyzer, docs, q); got != want {
		t.Errorf("final ranking differs from a fresh index:\n%s\nwant\n%s", got, want)
	}
}

// TestLocalvecKeywordLanguageSurvivesReload checks that the language
// LocalvecOptions.KeywordLanguage set still ranks after the store reloads a
// file another store changed; an unknown language is refused before
// anything is defined in g, and a done context before the file is read.
func TestLocalvecKeywordLanguageSurvivesReload(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	g := genkit.Init(ctx)
	if _, err := NewLocalvecStoreWithOptions(ctx, g, "docs", newTestEmbedder(16), dir, &LocalvecOptions{KeywordLanguage: "klingon"}); !errors.Is(err, ErrUnknownLanguage) {
		t.Fatalf("unknown language: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := NewLocalvecStoreWithOptions(done, g, "docs", newTestEmbedder(16), dir, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: %v", err)
	}
	a, err := NewLocalvecStoreWithOptions(ctx, g, "docs", newTestEmbedder(16), dir, &LocalvecOptions{KeywordLanguage: "german"})
	if err != nil {
		t.Fatal(err) // also when a refused open above left its retriever defined in g
	}
	t.Cleanup(func() { a.Close() })
	b := ingestTestLocalvec(t, dir, newTestEmbedder(16))
	docs := []*ai.Document{
		ai.DocumentFromText("Die Häuser am Fluss", map[string]any{MetaURL: "a"}),
		ai.DocumentFromText("Ein Haus am See", map[string]any{MetaURL: "b"}),
		ai.DocumentFromText("The houses by the river", map[string]any{MetaURL: "c"}),
	}
	if err := b.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	got := localvecKeywordResults(t, a, "Häuser") // reloads b's file
	if lang := a.keywordAnalyzer().language(); lang != "german" {
		t.Errorf("keyword language after a reload = %q, want german", lang)
	}
	de, err := newTextAnalyzer("german")
	if err != nil {
		t.Fatal(err)
	}
	a.mu.RLock()
	stored := slices.Clone(a.rows.docs)
	a.mu.RUnlock()
	if want := localvecFreshResults(t, de, stored, "Häuser"); got != want || !strings.Contains(got, "Haus am See") {
		t.Errorf("after a reload:\n%s\nwant the german ranking\n%s", got, want)
	}
}
