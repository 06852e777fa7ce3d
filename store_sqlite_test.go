package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestSQLiteNonUTF8Names checks that a file name that is not valid UTF-8
// round-trips byte for byte: listed exactly, re-indexed without a second
// copy, returned in metadata, and deleted by its name.
func TestSQLiteNonUTF8Names(t *testing.T) {
	ctx := t.Context()
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "d.db"), newTestEmbedder(32))
	url := "docs/caf\xe9-\xff.txt" // Latin-1 bytes: invalid UTF-8
	src := &ingestTestSource{url: url, texts: ingestTestTexts("latin", 5)}
	for range 2 {
		if _, _, err := IndexSource(ctx, s, src, 500, 50, nil); err != nil {
			t.Fatal(err)
		}
	}
	srcs, err := s.Sources(ctx)
	if err != nil || len(srcs) != 1 || srcs[0].URL != url || srcs[0].Chunks != 5 {
		t.Fatalf("sources %+q, %v", fmt.Sprint(srcs), err)
	}
	got, err := s.retrieveDoc(ctx, ai.DocumentFromText("latin chunk 2", nil), 1)
	if err != nil || len(got) != 1 || got[0].Metadata[MetaURL] != url {
		t.Fatalf("retrieve: %v, %v", got, err)
	}
	kw, err := s.KeywordSearch(ctx, "latin", 10, nil, func(m map[string]any) bool { return m[MetaURL] == url })
	if err != nil || len(kw) != 5 {
		t.Errorf("keyword search with a filter on the name: %d, %v", len(kw), err)
	}
	if n, err := s.DeleteByURL(ctx, url); err != nil || n != 5 {
		t.Errorf("delete: %d, %v", n, err)
	}
}

// TestSQLiteQuantizedRankingMatchesExact compares Retrieve (int8 scan and
// exact re-scoring) with an exact float32 ranking of all documents.
func TestSQLiteQuantizedRankingMatchesExact(t *testing.T) {
	ctx := t.Context()
	const dim = 96
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "d.db"), newTestEmbedder(dim))
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 300)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	text := func() string {
		out := ""
		for range 12 {
			out += words[r.IntN(len(words))] + " "
		}
		return out
	}
	var docs []*ai.Document
	for i := range 3000 {
		docs = append(docs, ai.DocumentFromText(text(), map[string]any{MetaURL: fmt.Sprint(i)}))
	}
	if err := IndexInBatches(ctx, s, docs, nil); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		q := text()
		qv := testVector(q, dim)
		type scored struct {
			s    float32
			text string
		}
		var all []scored
		for _, d := range docs {
			v := testVector(DocText(d), dim)
			all = append(all, scored{localvecDot(qv, v) * localvecInvNorm(qv) * localvecInvNorm(v), DocText(d)})
		}
		slices.SortStableFunc(all, func(a, b scored) int {
			if a.s > b.s {
				return -1
			}
			if a.s < b.s {
				return 1
			}
			return 0
		})
		got, err := s.retrieveDoc(ctx, ai.DocumentFromText(q, nil), 10)
		if err != nil || len(got) != 10 {
			t.Fatalf("retrieve: %d, %v", len(got), err)
		}
		for i, d := range got {
			// Equal scores may come in another order: compare scores.
			v := testVector(DocText(d), dim)
			if sc := localvecDot(qv, v) * localvecInvNorm(qv) * localvecInvNorm(v); sc < all[i].s-1e-5 {
				t.Errorf("rank %d: score %v, exact ranking has %v", i, sc, all[i].s)
			}
		}
	}
}

// TestSQLiteReaderSeesOtherWriters opens one database twice (as two
// processes would) and checks that the reading store sees the other's
// additions and deletions on its next query.
func TestSQLiteReaderSeesOtherWriters(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "d.db")
	emb := newTestEmbedder(32)
	reader, writer := sqliteTestStore(t, path, emb), sqliteTestStore(t, path, emb)
	if err := writer.Index(ctx, pgTestDocs("a", "apple", 5)); err != nil {
		t.Fatal(err)
	}
	if got, err := reader.retrieveDoc(ctx, ai.DocumentFromText("apple chunk 1 about topic1 and subject1", nil), 1); err != nil || len(got) != 1 {
		t.Fatalf("first query: %v, %v", got, err)
	}
	if err := writer.Index(ctx, pgTestDocs("b", "banana", 5)); err != nil {
		t.Fatal(err)
	}
	got, err := reader.retrieveDoc(ctx, ai.DocumentFromText("banana chunk 3 about topic3 and subject3", nil), 1)
	if err != nil || len(got) != 1 || got[0].Metadata[MetaSource] != "b" {
		t.Fatalf("after another writer indexed: %v, %v", got, err)
	}
	if _, err := writer.DeleteBySource(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	got, err = reader.retrieveDoc(ctx, ai.DocumentFromText("banana chunk 3 about topic3 and subject3", nil), 10)
	if err != nil || len(got) != 5 {
		t.Fatalf("after another writer deleted: %d docs, %v", len(got), err)
	}
	for _, d := range got {
		if d.Metadata[MetaSource] != "a" {
			t.Errorf("deleted chunk returned: %v", d.Metadata)
		}
	}
}

// TestSQLiteVectorCacheFile checks that a writer's Close leaves a current
// cache file, that a new store maps it instead of reading the vectors from
// the database, and that a damaged cache file is ignored.
func TestSQLiteVectorCacheFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "d.db")
	emb := newTestEmbedder(32)
	w, err := NewSQLiteStore(ctx, nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Index(ctx, pgTestDocs("a", "apple", 50)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := loadSQLiteVectorCache(path + ".vectors")
	if err != nil || len(c.rids) != 50 || c.dim != 32 {
		t.Fatalf("cache after close: %d rows, dim %d, %v", len(c.rids), c.dim, err)
	}
	c.release()
	q := ai.DocumentFromText("apple chunk 7 about topic0 and subject7", nil)
	r := sqliteTestStore(t, path, emb)
	got, err := r.retrieveDoc(ctx, q, 1)
	if err != nil || len(got) != 1 || DocText(got[0]) != DocText(q) {
		t.Fatalf("retrieve from cache: %v, %v", got, err)
	}
	if r.mat.unmap == nil {
		t.Error("the current cache file was not mapped")
	}
	if matches, _ := filepath.Glob(path + ".vectors.*.tmp"); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
	for _, damage := range []func() error{
		func() error { return os.Truncate(path+".vectors", 100) },
		func() error { return os.WriteFile(path+".vectors", []byte("garbage"), 0o644) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		r2 := sqliteTestStore(t, path, emb)
		got, err := r2.retrieveDoc(ctx, q, 1)
		if err != nil || len(got) != 1 || DocText(got[0]) != DocText(q) {
			t.Errorf("retrieve with a damaged cache: %v, %v", got, err)
		}
	}
}

// TestSQLiteBadInput checks the constructor's and methods' errors.
func TestSQLiteBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := NewSQLiteStore(ctx, nil, nil, filepath.Join(dir, "a.db"), nil); err == nil {
		t.Error("nil embedder accepted")
	}
	if _, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(dir, "missing", "a.db"), nil); err == nil {
		t.Error("missing directory accepted")
	}
	if _, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(dir, "a?.db"), nil); err == nil {
		t.Error("'?' in path accepted")
	}
	s := sqliteTestStore(t, filepath.Join(dir, "a.db"), newTestEmbedder(8))
	if err := s.Index(ctx, pgTestDocs("a", "x", 2)); err != nil {
		t.Fatal(err)
	}
	other := sqliteTestStore(t, filepath.Join(dir, "a.db"), newTestEmbedder(16))
	if err := other.Index(ctx, pgTestDocs("b", "y", 2)); err == nil {
		t.Error("vectors of another dimension accepted")
	}
	s.Close()
	if _, err := s.Sources(ctx); err == nil {
		t.Error("Sources after Close: no error")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestSQLiteImportExportLocalvec round-trips a LocalvecStore database
// through an SQLiteStore (import without embedding, export) and opens the
// export in LocalvecStore.
func TestSQLiteImportExportLocalvec(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newTestEmbedder(32)
	lv := ingestTestLocalvec(t, dir, emb)
	docs := pgTestDocs("a", "apple", 40)
	if err := lv.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	lv.Close()
	s := sqliteTestStore(t, filepath.Join(dir, "d.db"), emb)
	calls := emb.calls.Load()
	n, err := s.ImportLocalvec(ctx, lv.path)
	if err != nil || n != 40 || emb.calls.Load() != calls {
		t.Fatalf("import: %d, %v, %d embed calls", n, err, emb.calls.Load()-calls)
	}
	if n, err := s.ImportLocalvec(ctx, lv.path); err != nil || n != 0 {
		t.Errorf("second import: %d, %v", n, err)
	}
	// The imported chunks have IndexSource's IDs: re-indexing embeds nothing.
	if err := s.Index(ctx, docs); err != nil || emb.calls.Load() != calls {
		t.Errorf("index after import: %v, %d embed calls", err, emb.calls.Load()-calls)
	}
	if _, err := s.ImportLocalvec(ctx, filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	out := filepath.Join(dir, "export")
	path, n, err := s.ExportLocalvec(ctx, out, "docs")
	if err != nil || n != 40 || path != filepath.Join(out, "__db_docs.json") {
		t.Fatalf("export: %s, %d, %v", path, n, err)
	}
	back := ingestTestLocalvec(t, out, emb)
	if back.Len() != 40 {
		t.Errorf("export opens in LocalvecStore with %d documents", back.Len())
	}
	if _, _, err := s.ExportLocalvec(ctx, out, "../x"); err == nil {
		t.Error("bad export name accepted")
	}
}

// TestSQLiteStaleVectorCache checks the path of a store that opens while
// another writer has changed the database since the cache file was
// written: it maps the old cache and applies the rows added and deleted
// since, and the writer's Close brings the cache file up to date.
func TestSQLiteStaleVectorCache(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "d.db")
	emb := newTestEmbedder(8)
	first, err := NewSQLiteStore(ctx, nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Index(ctx, pgTestDocs("a", "apple", 50)); err != nil {
		t.Fatal(err)
	}
	if err := first.Index(ctx, pgTestDocs("x", "xylophone", 1)); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	cacheGen := func() (int64, int) {
		t.Helper()
		c, err := loadSQLiteVectorCache(path + ".vectors")
		if err != nil {
			t.Fatal(err)
		}
		defer c.release()
		return c.gen, len(c.rids)
	}
	gen0, rows0 := cacheGen()
	if rows0 != 51 {
		t.Fatalf("first cache holds %d rows, want 51", rows0)
	}

	w := sqliteTestStore(t, path, emb)
	if err := w.Index(ctx, pgTestDocs("b", "banana", 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DeleteBySource(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	r := sqliteTestStore(t, path, emb)
	got, err := r.retrieveDoc(ctx, ai.DocumentFromText("banana chunk 1 about topic1 and subject1", nil), 60)
	if err != nil {
		t.Fatal(err)
	}
	if r.mat.unmap != nil {
		t.Error("the stale cache is still mapped after rows were applied to it")
	}
	sources := map[any]int{}
	for _, d := range got {
		sources[d.Metadata[MetaSource]]++
	}
	if sources["b"] != 3 || sources["a"] != 50 || sources["x"] != 0 {
		t.Errorf("a store opened on the stale cache sees %v, want 3 of b, 50 of a, none of x", sources)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if gen, rows := cacheGen(); gen == gen0 || rows != 53 {
		t.Errorf("after the writer closed: cache generation %d (was %d), %d rows, want a new one with 53", gen, gen0, rows)
	}
}
