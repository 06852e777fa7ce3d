package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestSQLitePostingCacheFollowsWrites searches one index through two
// stores (as two processes would): after the other store adds or
// deletes chunks, the first one's keyword list is that of a store opened
// afresh, not the list its posting cache holds; between writes the cache
// serves the query's terms.
func TestSQLitePostingCacheFollowsWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "askyourdocs.db")
	open := func() *SQLiteStore { return openSharedSQLite(t, path) }
	reader, writer := open(), open()
	doc := func(url, text string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{"url": url, "source": url})
	}
	if err := writer.Index(ctx, []*ai.Document{
		doc("a", "The zebra crossing is painted white."),
		doc("b", "A zebra has stripes; a horse does not."),
		doc("c", "Horses graze in the meadow."),
	}); err != nil {
		t.Fatal(err)
	}
	list := func(s *SQLiteStore) []string { return searchTextURLs(t, s, "zebra horse", 10) }
	// A question of stop words only searches those some chunk holds (the
	// frequencies the stop-word rule reads, cached too): "whom" is in no
	// chunk until the write below.
	stops := func(s *SQLiteStore) []string { return searchTextURLs(t, s, "whom", 10) }
	check := func(step string) {
		t.Helper()
		gotStops, got := stops(reader), list(reader) // stop words first: no search of this generation has emptied the cache yet
		fresh := open()
		if want := list(fresh); !slices.Equal(got, want) {
			t.Errorf("%s: cached store lists %q, a fresh store %q", step, got, want)
		}
		if want := stops(fresh); !slices.Equal(gotStops, want) {
			t.Errorf("%s: cached store lists %q for stop words, a fresh store %q", step, gotStops, want)
		}
		fresh.Close()
	}
	first := list(reader)
	if _, ok := reader.postings.get(reader.postings.gen, "zebra"); !ok {
		t.Errorf("after a search the cache does not hold its term %q", "zebra")
	}
	check("a search from the cache")
	if again := list(reader); !slices.Equal(again, first) || len(first) != 3 {
		t.Errorf("second search (from the cache) %q, first %q", again, first)
	}

	if err := writer.Index(ctx, []*ai.Document{doc("d", "Zebra and horse: a zebra is no horse, says the zebra to whom it may concern.")}); err != nil {
		t.Fatal(err)
	}
	check("after another store added a chunk")
	if got := stops(reader); !slices.Equal(got, []string{"d"}) { // (check ran it first)
		t.Errorf("after the write a stop word new to the index lists %q, want the new chunk", got)
	}
	if got := list(reader); len(got) == 0 || got[0] != "d" {
		t.Errorf("after the write the new chunk ranks %q, want it first", got)
	}
	if _, err := writer.DeleteByURL(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	check("after another store deleted it")
	if _, err := writer.DeleteByURL(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	check("after a second delete")
}

// TestSQLitePostingCacheBounds checks the cache's rules: lists of another
// generation are not served, a newer generation empties the cache, an
// older one is not cached, the oldest terms go first when the bound is
// reached, a list larger than the bound is not kept, and a nil cache
// caches nothing.
func TestSQLitePostingCacheBounds(t *testing.T) {
	ps := func(n int) []sqlitePosting { return make([]sqlitePosting, n) }
	c := &sqlitePostingCache{max: 10}
	c.put(5, "a", ps(4))
	c.put(5, "b", ps(4))
	if _, ok := c.get(5, "a"); !ok {
		t.Fatal("a is not cached")
	}
	if _, ok := c.get(6, "a"); ok {
		t.Error("a list of generation 5 is served to generation 6")
	}
	c.put(5, "c", ps(4)) // 12 > 10: a goes
	if _, ok := c.get(5, "a"); ok {
		t.Error("the oldest term stayed past the bound")
	}
	if _, ok := c.get(5, "c"); !ok || c.size != 8 {
		t.Errorf("c cached %v, size %d, want true, 8", ok, c.size)
	}
	c.put(5, "big", ps(11))
	if _, ok := c.get(5, "big"); ok {
		t.Error("a list larger than the bound was cached")
	}
	c.put(4, "old", ps(1))
	if _, ok := c.get(4, "old"); ok {
		t.Error("a list of an older generation was cached")
	}
	c.putDocFreq(5, "the", 3)
	if df, ok := c.docFreq(5, "the"); !ok || df != 3 {
		t.Errorf("document frequency %d, %v, want 3, true", df, ok)
	}
	if df, ok := c.docFreq(5, "c"); !ok || df != 4 {
		t.Errorf("document frequency of a cached list %d, %v, want its length 4", df, ok)
	}
	if _, ok := c.docFreq(6, "the"); ok {
		t.Error("a frequency of generation 5 is served to generation 6")
	}
	c.put(7, "d", nil)
	if _, ok := c.docFreq(7, "the"); ok {
		t.Error("a newer generation kept an older frequency")
	}
	if got, ok := c.get(7, "d"); !ok || got != nil {
		t.Error("an empty list of a newer generation was not cached")
	}
	if _, ok := c.get(7, "c"); ok || c.size != 0 {
		t.Errorf("a newer generation kept the older lists (size %d)", c.size)
	}
	var none *sqlitePostingCache
	none.put(1, "x", ps(1))
	if _, ok := none.get(1, "x"); ok {
		t.Error("a nil cache served a list")
	}
}

// reset empties the cache (BenchmarkSQLiteKeywordVsFTS5's uncached round).
func (c *sqlitePostingCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.terms, c.order, c.size = nil, nil, 0
}

// TestSQLitePostingCacheConcurrent searches from several goroutines while
// another store writes (go test -race checks the cache's locking); once
// the writes are done the list is a fresh store's.
func TestSQLitePostingCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "askyourdocs.db")
	open := func() *SQLiteStore { return openSharedSQLite(t, path) }
	reader, writer := open(), open()
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := reader.SearchText(ctx, "river bank", 10, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 20 {
		url := fmt.Sprintf("doc-%d", i)
		text := fmt.Sprintf("Document %d: the river bank number %d, a bank by the river.", i, i)
		if err := writer.Index(ctx, []*ai.Document{ai.DocumentFromText(text, map[string]any{"url": url, "source": url})}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	urls := func(s *SQLiteStore) []string { return searchTextURLs(t, s, "river bank", 40) }
	if got, want := urls(reader), urls(open()); !slices.Equal(got, want) || len(want) != 20 {
		t.Errorf("after the writes the reader lists %q, a fresh store %q (want 20)", got, want)
	}
}

// openSharedSQLite opens another SQLiteStore on the database at path (as
// another process would), closed at the end of the test.
func openSharedSQLite(t *testing.T, path string) *SQLiteStore {
	t.Helper()
	s, err := NewSQLiteStore(context.Background(), nil, newTestEmbedder(64), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// searchTextURLs returns the URLs of s's keyword list for query.
func searchTextURLs(t *testing.T, s *SQLiteStore, query string, k int) []string {
	t.Helper()
	docs, err := s.SearchText(context.Background(), query, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.Metadata["url"].(string))
	}
	return out
}
