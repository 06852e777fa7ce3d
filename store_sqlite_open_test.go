package engine

import (
	"database/sql"
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

// TestSQLiteMmapBytes checks that SQLiteOptions.MmapBytes reaches every
// connection's PRAGMA mmap_size (the default 1 GiB, off, a size), and
// that a store without the map still reads what it wrote.
func TestSQLiteMmapBytes(t *testing.T) {
	for _, c := range []struct {
		opt  int64
		want int64
	}{{0, 1 << 30}, {-1, 0}, {1 << 20, 1 << 20}} {
		s, err := NewSQLiteStore(t.Context(), nil, newTestEmbedder(8), filepath.Join(t.TempDir(), "d.db"), &SQLiteOptions{MmapBytes: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Index(t.Context(), pgTestDocs("a", "apple", 3)); err != nil {
			t.Fatal(err)
		}
		// Hold several connections at once so that each is asked.
		conns := make([]*sql.Conn, 3)
		for i := range conns {
			if conns[i], err = s.db.Conn(t.Context()); err != nil {
				t.Fatal(err)
			}
			var got int64
			if err := conns[i].QueryRowContext(t.Context(), "PRAGMA mmap_size").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("MmapBytes %d: connection %d has mmap_size %d, want %d", c.opt, i, got, c.want)
			}
		}
		for _, conn := range conns {
			conn.Close()
		}
		docs, err := s.SearchText(t.Context(), "apple", 10, nil)
		if err != nil || len(docs) != 3 {
			t.Errorf("MmapBytes %d: SearchText found %d chunks, err %v; want 3", c.opt, len(docs), err)
		}
		s.Close()
	}
}
