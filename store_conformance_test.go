package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// conformanceStores returns a constructor per store: LocalvecStore,
// SQLiteStore, and PgvecStore (skipped without a test database), each
// under the shared Searcher interface.
func conformanceStores() map[string]func(t *testing.T, emb *testEmbedder) Searcher {
	return map[string]func(t *testing.T, emb *testEmbedder) Searcher{
		"localvec": func(t *testing.T, emb *testEmbedder) Searcher { return ingestTestLocalvec(t, t.TempDir(), emb) },
		"sqlite": func(t *testing.T, emb *testEmbedder) Searcher {
			return sqliteTestStore(t, filepath.Join(t.TempDir(), "docs.db"), emb)
		},
		"pgvector": func(t *testing.T, emb *testEmbedder) Searcher { return pgTestStore(t, emb, emb.dim) },
	}
}

// sqliteTestStore opens an SQLiteStore at path, closed when the test ends.
func sqliteTestStore(t testing.TB, path string, emb ai.Embedder) *SQLiteStore {
	t.Helper()
	s, err := NewSQLiteStore(context.Background(), genkit.Init(context.Background()), emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// forEachStore runs fn as a subtest for every store.
func forEachStore(t *testing.T, fn func(t *testing.T, s Searcher, emb *testEmbedder)) {
	stores := conformanceStores()
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			emb := newTestEmbedder(64)
			fn(t, stores[name](t, emb), emb)
		})
	}
}

func conformanceTexts(docs []*ai.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = DocText(d)
	}
	return out
}

func TestStoreConformanceIndexRetrieve(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		ctx := t.Context()
		docs := pgTestDocs("a", "alpha", 30)
		if err := s.Index(ctx, docs); err != nil {
			t.Fatal(err)
		}
		got, err := s.SearchVector(ctx, DocText(docs[17]), 3, nil)
		if err != nil || len(got) != 3 || DocText(got[0]) != DocText(docs[17]) {
			t.Fatalf("retrieve: %v, %q", err, conformanceTexts(got))
		}
		if got[0].Metadata[MetaURL] != "a/page" || got[0].Metadata[MetaSource] != "a" {
			t.Errorf("metadata %v", got[0].Metadata)
		}
		// Indexing the same documents again embeds nothing.
		calls := emb.calls.Load()
		if err := s.Index(ctx, docs[:10]); err != nil || emb.calls.Load() != calls {
			t.Errorf("re-index: %v, %d embed calls", err, emb.calls.Load()-calls)
		}
		if err := s.Index(ctx, []*ai.Document{ai.DocumentFromText(" ", nil)}); !errors.Is(err, ErrEmptyDocument) {
			t.Errorf("blank document: %v", err)
		}
	})
}

func TestStoreConformanceNoReembedAndDiff(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		ctx := t.Context()
		src := &ingestTestSource{url: "u:a", texts: ingestTestTexts("a", 120)}
		if n, _, err := IndexSource(ctx, s, src, 500, 50, nil); err != nil || n != 120 {
			t.Fatalf("first run: %d, %v", n, err)
		}
		docs := emb.docs.Load()
		n, deleted, err := IndexSource(ctx, s, src, 500, 50, nil)
		if err != nil || n != 120 || deleted != 0 || emb.docs.Load() != docs {
			t.Fatalf("unchanged run: %d, %d deleted, %d embedded, %v", n, deleted, emb.docs.Load()-docs, err)
		}
		// Change one text, drop one: one document embedded, two removed.
		src.texts[5] = "a changed chunk about something new"
		src.texts = src.texts[:119]
		n, deleted, err = IndexSource(ctx, s, src, 500, 50, nil)
		if err != nil || n != 119 || deleted != 2 || emb.docs.Load() != docs+1 {
			t.Fatalf("changed run: %d, %d deleted, %d embedded, %v", n, deleted, emb.docs.Load()-docs, err)
		}
		srcs, err := s.Sources(ctx)
		if err != nil || len(srcs) != 1 || srcs[0].Chunks != 119 {
			t.Fatalf("sources %v, %v", srcs, err)
		}
	})
}

func TestStoreConformanceRollback(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		ctx := t.Context()
		src := &ingestTestSource{url: "u:r", texts: ingestTestTexts("r", 50)}
		if _, _, err := IndexSource(ctx, s, src, 500, 50, nil); err != nil {
			t.Fatal(err)
		}
		before, _ := s.Sources(ctx)
		boom := errors.New("embedder down")
		calls := emb.calls.Load()
		emb.fail = func(n int64) error {
			if n > calls+1 {
				return boom
			}
			return nil
		}
		src2 := &ingestTestSource{url: "u:r", texts: ingestTestTexts("r2", 250)}
		if _, _, err := IndexSource(ctx, s, src2, 500, 50, nil); !errors.Is(err, boom) {
			t.Fatalf("failing run: %v", err)
		}
		emb.fail = nil
		after, err := s.Sources(ctx)
		if err != nil || !slices.Equal(before, after) {
			t.Fatalf("after a failed run: %v, want %v (%v)", after, before, err)
		}
		got, err := s.SearchVector(ctx, "r chunk 7 about topic0", 1, nil)
		if err != nil || len(got) != 1 || DocText(got[0]) != "r chunk 7 about topic0" {
			t.Errorf("old version not intact: %q, %v", conformanceTexts(got), err)
		}
	})
}

func TestStoreConformanceDeleteAndSources(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		ctx := t.Context()
		for _, src := range []string{"b", "a", "c"} {
			if err := s.Index(ctx, pgTestDocs(src, src+"text", 4)); err != nil {
				t.Fatal(err)
			}
		}
		want := []Source{{"a/page", "a", 4, ""}, {"b/page", "b", 4, ""}, {"c/page", "c", 4, ""}}
		if got, err := s.Sources(ctx); err != nil || !slices.Equal(got, want) {
			t.Fatalf("sources %v, %v", got, err)
		}
		if n, err := s.DeleteByURL(ctx, "b/page"); err != nil || n != 4 {
			t.Errorf("delete by url: %d, %v", n, err)
		}
		if n, err := s.DeleteBySource(ctx, "c"); err != nil || n != 4 {
			t.Errorf("delete by source: %d, %v", n, err)
		}
		if n, err := s.DeleteByURL(ctx, "missing"); err != nil || n != 0 {
			t.Errorf("delete missing: %d, %v", n, err)
		}
		if got, err := s.Sources(ctx); err != nil || !slices.Equal(got, want[:1]) {
			t.Errorf("sources after deletes %v, %v", got, err)
		}
		got, err := s.SearchVector(ctx, "btext chunk 1 about topic1 and subject1", 10, nil)
		if err != nil || len(got) != 4 {
			t.Errorf("retrieve after delete: %d docs, %v", len(got), err)
		}
		for _, d := range got {
			if d.Metadata[MetaSource] != "a" {
				t.Errorf("deleted chunk returned: %v", d.Metadata)
			}
		}
	})
}

func TestStoreConformanceKeywordSearch(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		ctx := t.Context()
		texts := []string{
			"The invoice number is printed on the first page.",
			"Invoices are sent every month by email.",
			"Rechnungen werden monatlich verschickt.",
			"Die Rechnungsnummer steht oben rechts.",
			"Nothing relevant here at all.",
			"The invoice number is printed on the first page.",
		}
		var docs []*ai.Document
		for i, txt := range texts {
			docs = append(docs, ai.DocumentFromText(txt, map[string]any{MetaURL: fmt.Sprintf("k/%d", i), MetaSource: "k"}))
		}
		if err := s.Index(ctx, docs); err != nil {
			t.Fatal(err)
		}
		// A quoted phrase ranks first; the duplicate text is returned once.
		got, err := s.SearchText(ctx, `"invoice number" email`, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g := conformanceTexts(got); len(g) != 2 || g[0] != texts[0] || g[1] != texts[1] {
			t.Errorf("phrase query: %q", g)
		}
		// Stemming (English, the default) bridges inflections: "Invoices"
		// finds "invoice"; the chunk with both keywords ranks first.
		got, err = s.SearchText(ctx, "Invoices email", 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g := conformanceTexts(got); len(g) != 2 || g[0] != texts[1] || g[1] != texts[0] {
			t.Errorf("stemmed query: %q", g)
		}
		// k caps; punctuation-only queries match nothing.
		if got, err := s.SearchText(ctx, "page month", 1, nil); err != nil || len(got) != 1 {
			t.Errorf("capped: %d, %v", len(got), err)
		}
		if got, err := s.SearchText(ctx, `?? %`, 10, nil); err != nil || len(got) != 0 {
			t.Errorf("no keywords: %d, %v", len(got), err)
		}
	})
}

func TestStoreConformanceConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		ctx := t.Context()
		if err := s.Index(ctx, pgTestDocs("seed", "seed", 10)); err != nil {
			t.Fatal(err)
		}
		const writers, perWriter = 3, 4
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		stop := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWriter {
					src := &ingestTestSource{url: fmt.Sprintf("w%d/%d", w, i), texts: ingestTestTexts(fmt.Sprintf("w%d-%d", w, i), 20)}
					if _, _, err := IndexSource(ctx, s, src, 500, 50, nil); err != nil {
						errs <- err
					}
				}
			}()
		}
		var rg sync.WaitGroup
		for range 2 {
			rg.Add(1)
			go func() {
				defer rg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.SearchVector(ctx, "seed chunk 3", 5, nil); err != nil {
						errs <- err
						return
					}
					srcs, err := s.Sources(ctx)
					if err != nil {
						errs <- err
						return
					}
					for _, src := range srcs {
						if src.Source != "seed" && src.Chunks != 20 {
							errs <- fmt.Errorf("partial source %v", src)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		rg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		srcs, err := s.Sources(ctx)
		if err != nil || len(srcs) != 1+writers*perWriter {
			t.Errorf("sources after concurrent writers: %d, %v", len(srcs), err)
		}
	})
}

// storeMethods is the method set the three stores share beyond Searcher,
// each with a context first where it does I/O (issue 38: one method set).
type storeMethods interface {
	Searcher
	Bulk(ctx context.Context, fn func(VectorStore) error) error
	Reembed(ctx context.Context, progress func(done, total int)) (int, error)
	IndexInfo(ctx context.Context) (IndexInfo, bool, error)
	recordIndexInfo(ctx context.Context, info IndexInfo) (IndexInfo, bool, error)
	Close() error
}

var (
	_ storeMethods = (*SQLiteStore)(nil)
	_ storeMethods = (*LocalvecStore)(nil)
	_ storeMethods = (*PgvecStore)(nil)
)

// TestStoreConformanceBulkContext: every store's Bulk runs fn and keeps
// its writes, and refuses a done context without running fn.
func TestStoreConformanceBulkContext(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		st := s.(storeMethods)
		ctx := t.Context()
		ran := false
		err := st.Bulk(ctx, func(b VectorStore) error {
			ran = true
			return b.Index(ctx, []*ai.Document{ai.DocumentFromText("kayak rental in bulk", map[string]any{MetaURL: "bulk.txt", MetaSource: "bulk"})})
		})
		if err != nil || !ran {
			t.Fatalf("Bulk: ran %v, %v", ran, err)
		}
		if got, err := st.SearchText(ctx, "kayak rental", 3, nil); err != nil || len(got) != 1 {
			t.Errorf("after Bulk: %d hits, %v", len(got), err)
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		ran = false
		if err := st.Bulk(done, func(VectorStore) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
			t.Errorf("Bulk with a done context: ran %v, %v", ran, err)
		}
	})
}

// TestBatchEndsWithItsRun: on every store, writes through a Bulk run's
// Batch are held for the run (the databases show them when the run ends;
// the LocalvecStore shows them at once but writes its file when the run
// ends), writes through the store itself meanwhile are applied at once,
// IndexSource through the Batch replaces a source, and a Batch used after
// its function returned fails without writing.
func TestBatchEndsWithItsRun(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, emb *testEmbedder) {
		st := s.(storeMethods)
		ctx := t.Context()
		hits := func(q string) int {
			t.Helper()
			got, err := s.SearchText(ctx, q, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		doc := func(text, url string) []*ai.Document {
			return []*ai.Document{ai.DocumentFromText(text, map[string]any{MetaURL: url, MetaSource: "batch"})}
		}
		lv, isLocalvec := s.(*LocalvecStore)
		var kept VectorStore
		err := st.Bulk(ctx, func(b VectorStore) error {
			kept = b
			var writes int64
			if isLocalvec {
				writes = lv.fileWrites.Load()
			}
			if err := b.Index(ctx, doc("heron nesting season", "held.txt")); err != nil {
				return err
			}
			src := &ingestTestSource{url: "replaced.txt", texts: []string{"osprey diving for fish"}}
			if _, _, err := IndexSource(ctx, b, src, 100, 0, nil); err != nil {
				return err
			}
			if isLocalvec {
				if n := lv.fileWrites.Load() - writes; n != 0 {
					t.Errorf("held writes wrote the file %d times inside the run", n)
				}
			} else if n := hits("heron nesting") + hits("osprey diving"); n != 0 {
				t.Errorf("held writes visible before the run ended: %d hits", n)
			}
			if err := st.Index(ctx, doc("kestrel hovering", "direct.txt")); err != nil {
				return err
			}
			if n := hits("kestrel hovering"); n != 1 {
				t.Errorf("a write through the store during the run: %d hits, want 1 at once", n)
			}
			if isLocalvec && lv.fileWrites.Load() == writes {
				t.Error("a write through the store during the run did not write the file")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"heron nesting", "osprey diving", "kestrel hovering"} {
			if n := hits(q); n != 1 {
				t.Errorf("after the run %q: %d hits, want 1", q, n)
			}
		}
		if err := kept.Index(ctx, doc("late crane", "late.txt")); !errors.Is(err, errBatchEnded) {
			t.Errorf("Index through an ended Batch: %v, want errBatchEnded", err)
		}
		if _, err := kept.DeleteByURL(ctx, "held.txt"); !errors.Is(err, errBatchEnded) {
			t.Errorf("DeleteByURL through an ended Batch: %v, want errBatchEnded", err)
		}
		src := &ingestTestSource{url: "replaced.txt", texts: []string{"something else"}}
		if _, _, err := IndexSource(ctx, kept, src, 100, 0, nil); !errors.Is(err, errBatchEnded) {
			t.Errorf("IndexSource through an ended Batch: %v, want errBatchEnded", err)
		}
		if hits("late crane") != 0 || hits("heron nesting") != 1 || hits("osprey diving") != 1 {
			t.Error("a write through an ended Batch changed the store")
		}
	})
}

// namedEmbedder is a testEmbedder whose name can change between writes.
type namedEmbedder struct {
	*testEmbedder
	name atomic.Pointer[string]
}

func (e *namedEmbedder) Name() string { return *e.name.Load() }

// TestStoreConformanceRecordsAtFirstWrite: a new store has no IndexInfo; a
// write that adds nothing records nothing; the first write that adds
// chunks (IndexSource of one document) records the write's embedder, the
// vectors' dimension and the embedder's fusion defaults; a later write
// whose embedder has another name keeps that record. A write through a
// Bulk run's writer records as well.
func TestStoreConformanceRecordsAtFirstWrite(t *testing.T) {
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			emb := &namedEmbedder{testEmbedder: newTestEmbedder(64)}
			first, other := "test/first-embedder", "test/other-embedder"
			emb.name.Store(&first)
			s := searchTestStore(t, name, emb, 64)
			r := s.(indexRecorder)
			if info, found, err := r.IndexInfo(ctx); err != nil || found {
				t.Fatalf("new store: %+v, found %v, %v", info, found, err)
			}
			// Nothing to add and nothing to delete: no record.
			if _, _, err := s.(sourceReplacer).replaceSource(ctx, replaceScope{sources: []string{"none"}}, nil, nil); err != nil {
				t.Fatal(err)
			}
			if info, found, err := r.IndexInfo(ctx); err != nil || found {
				t.Fatalf("after a write that added nothing: %+v, found %v, %v", info, found, err)
			}
			before := time.Now().UTC().Truncate(time.Second)
			src := &ingestTestSource{url: "u:one", texts: []string{"one document about kayaks on the river"}}
			if n, _, err := IndexSource(ctx, s, src, 500, 50, nil); err != nil || n != 1 {
				t.Fatalf("IndexSource: %d, %v", n, err)
			}
			want := FusionDefaults(first)
			info, found, err := r.IndexInfo(ctx)
			if err != nil || !found || info.Embedder != first || info.Dim != 64 || info.Fusion == nil || *info.Fusion != want ||
				info.Created.Before(before) || info.Created.After(time.Now()) {
				t.Fatalf("after the first write: %+v (fusion %v), found %v, %v; want %s, dim 64, fusion %+v", info, info.Fusion, found, err, first, want)
			}
			emb.name.Store(&other)
			src2 := &ingestTestSource{url: "u:two", texts: []string{"another document about the harbour"}}
			if _, _, err := IndexSource(ctx, s, src2, 500, 50, nil); err != nil {
				t.Fatal(err)
			}
			// The record as stored, not as cached.
			forgetIndexInfo(t, s)
			got, found, err := r.IndexInfo(ctx)
			if err != nil || !found || got.Embedder != first || got.Dim != 64 || !got.Created.Equal(info.Created) {
				t.Fatalf("after a write with another embedder: %+v, found %v, %v", got, found, err)
			}

			bulk := searchTestStore(t, name, emb, 64)
			err = bulk.(storeMethods).Bulk(ctx, func(w VectorStore) error {
				_, _, err := IndexSource(ctx, w, src, 500, 50, nil)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			forgetIndexInfo(t, bulk)
			if got, found, err := bulk.(indexRecorder).IndexInfo(ctx); err != nil || !found || got.Embedder != other || got.Dim != 64 {
				t.Fatalf("after a Bulk run: %+v, found %v, %v", got, found, err)
			}
		})
	}
}

// forgetIndexInfo clears s's cached IndexInfo, so that the next IndexInfo
// reads the store.
func forgetIndexInfo(t *testing.T, s Searcher) {
	t.Helper()
	switch s := s.(type) {
	case *SQLiteStore:
		s.info.p.Store(nil)
	case *LocalvecStore:
		s.info.p.Store(nil)
	case *PgvecStore:
		s.info.p.Store(nil)
	default:
		t.Fatalf("forgetIndexInfo: %T", s)
	}
}
