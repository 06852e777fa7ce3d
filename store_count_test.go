package engine

import (
	"errors"
	"path/filepath"
	"testing"
)

// storedChunks returns the number of chunks s holds, the way an app counts
// them on every store: the Chunks of its Sources added up.
func storedChunks(tb testing.TB, s Searcher) int {
	tb.Helper()
	srcs, err := s.Sources(tb.Context())
	if err != nil {
		tb.Fatalf("count chunks: %v", err)
	}
	n := 0
	for _, src := range srcs {
		n += src.Chunks
	}
	return n
}

// TestDeprecatedLenIsSourcesSum checks that the deprecated Len methods
// count what Sources reports, before and after a delete, and that the
// embedded stores' Len after Close is 0 (LocalvecStore) or an error
// (SQLiteStore), as before.
func TestDeprecatedLenIsSourcesSum(t *testing.T) {
	ctx := t.Context()
	emb := newTestEmbedder(16)
	lv := ingestTestLocalvec(t, t.TempDir(), emb)
	sq, err := NewSQLiteStore(ctx, nil, emb, filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	lens := map[string]func() (int, error){
		"localvec": func() (int, error) { return lv.Len(), nil },
		"sqlite":   func() (int, error) { return sq.Len(ctx) },
	}
	for name, s := range map[string]VectorStore{"localvec": lv, "sqlite": sq} {
		docs := append(pgTestDocs("a", "apple", 4), pgTestDocs("b", "berry", 3)...)
		if err := s.Index(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for _, want := range []int{7, 3} {
			n, err := lens[name]()
			if err != nil || n != want || storedChunks(t, s.(Searcher)) != want {
				t.Errorf("%s: Len %d (%v), Sources %d, want %d", name, n, err, storedChunks(t, s.(Searcher)), want)
			}
			if _, err := s.DeleteBySource(ctx, "a"); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	if n := lv.Len(); n != 0 {
		t.Errorf("localvec Len after Close = %d, want 0", n)
	}
	if _, err := sq.Len(ctx); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("sqlite Len after Close: %v, want ErrStoreClosed", err)
	}
}
