package engine

import (
	"path/filepath"
	"sync"
	"testing"
)

// TestSQLiteConcurrentCreate opens one new database from several stores
// at once, each with its own connections as separate processes would have:
// every open succeeds (creating the file and switching it to WAL races
// between them), and all of them see one schema.
func TestSQLiteConcurrentCreate(t *testing.T) {
	for round := range 10 {
		path := filepath.Join(t.TempDir(), "d.db")
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		stores := make([]*SQLiteStore, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stores[i], errs[i] = NewSQLiteStore(t.Context(), nil, newTestEmbedder(8), path, nil)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, store %d: %v", round, i, err)
			}
		}
		if err := stores[0].Index(t.Context(), pgTestDocs("a", "apple", 3)); err != nil {
			t.Fatal(err)
		}
		for i, s := range stores {
			if n := storedChunks(t, s); n != 3 {
				t.Errorf("round %d, store %d sees %d chunks, want 3", round, i, n)
			}
			s.Close()
		}
	}
}
