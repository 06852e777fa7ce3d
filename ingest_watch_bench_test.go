package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkWatchSaveToSearchable measures, on a real folder of 200 files
// watched by WatchFolder with the default Debounce, the time from saving
// an edit of one file to its new text being found by SearchText: 50 saves
// per run, reported as p50 and p95 (docs/indexing.md; goal <= 2 s).
//
//	go test -run '^$' -bench BenchmarkWatchSaveToSearchable -benchtime 1x .
func BenchmarkWatchSaveToSearchable(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		for i := range 200 {
			text := fmt.Sprintf("# Note %d\n\nHarbour note %d about tides, buoys and the ferry timetable.\n", i, i)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%03d.md", i)), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		store, err := NewSQLiteStore(context.Background(), nil, NewLocalEmbedder(0), filepath.Join(b.TempDir(), "i.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		synced := make(chan struct{}, 100)
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() {
			ended <- WatchFolder(ctx, store, dir, &WatchOptions{OnSync: func(*FolderResult, error) { synced <- struct{}{} }})
		}()
		<-synced // the first sync
		var lat []time.Duration
		for i := range 50 {
			word := fmt.Sprintf("zephyr%dquay", i)
			p := filepath.Join(dir, fmt.Sprintf("n%03d.md", i*3))
			start := time.Now()
			if err := os.WriteFile(p, []byte("# Edited\n\nThe edit names "+word+".\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			for !searchFinds(b, store, word) {
				select {
				case <-synced:
				case <-time.After(30 * time.Second):
					b.Fatalf("save %d not searchable within 30 s", i)
				}
			}
			lat = append(lat, time.Since(start))
		}
		cancel()
		<-ended
		store.Close()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95-ms")
	}
}

// searchFinds reports whether SearchText finds a chunk holding word.
func searchFinds(b *testing.B, s *SQLiteStore, word string) bool {
	hits, err := s.SearchText(context.Background(), word, 3, nil)
	if err != nil {
		b.Fatal(err)
	}
	return len(hits) > 0 && strings.Contains(DocText(hits[0]), word)
}
