package engine

import (
	"cmp"
	"sync"
)

// The posting cache. FTS5's bm25() is most of a keyword search's cost on
// SQLite (docs/stores.md: 42% of BenchmarkSQLiteKeywordVsFTS5's run at
// 8.6k chunks, plus the length lookups it makes per row): the ranker asks
// for every row holding each query term with its BM25F share. A serving
// process asks for the same common terms again and again, and between two
// writes the answer does not change, so an SQLiteStore keeps the postings
// it read, with their shares, and the document frequencies the stop-word
// rule read, for the database's current generation (the
// counter every write transaction increments, read inside the search's
// read transaction: a posting list is reused only by searches of the
// snapshot it was read from). A search of a newer generation empties the
// cache; one of an older generation (a reader still on an earlier
// snapshot) reads FTS5 and leaves the cache as it is.

// sqlitePostingCacheMax is the most postings the cache holds (16 bytes
// each: 16 MiB), oldest terms dropped first.
const sqlitePostingCacheMax = 1 << 20

// sqlitePosting is one row of a term's postings: its row ID and the
// term's share of the row's BM25F score.
type sqlitePosting struct {
	rid   int64
	score float64
}

// sqlitePostingCache holds posting lists of one generation. The zero
// value is an empty cache; a nil *sqlitePostingCache caches nothing.
// Safe for concurrent use; the lists it returns are shared, read-only.
type sqlitePostingCache struct {
	mu      sync.Mutex
	gen     int64
	terms   map[string][]sqlitePosting
	dfs     map[string]int // document frequencies read alone (the stop-word rule)
	pagesOf *keywordPages  // the pages (the list and long-page rules), nil until read
	order   []string       // terms, oldest first
	size    int            // postings held
	max     int            // most postings held (0: sqlitePostingCacheMax)
}

// get returns term's postings cached for generation gen.
func (c *sqlitePostingCache) get(gen int64, term string) ([]sqlitePosting, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.terms == nil {
		return nil, false
	}
	ps, ok := c.terms[term]
	return ps, ok
}

// put caches term's postings ps, read at generation gen: a newer
// generation than the cache's empties it first, an older one is not
// cached, nor is a list larger than the whole cache.
func (c *sqlitePostingCache) put(gen int64, term string, ps []sqlitePosting) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	most := cmp.Or(c.max, sqlitePostingCacheMax)
	if len(ps) > most {
		return
	}
	if !c.current(gen) {
		return
	}
	if _, ok := c.terms[term]; ok {
		return
	}
	for c.size+len(ps) > most && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.terms[old])
		delete(c.terms, old)
	}
	c.terms[term] = ps
	c.order = append(c.order, term)
	c.size += len(ps)
}

// sqliteDocFreqCacheMax is the most document frequencies the cache holds.
const sqliteDocFreqCacheMax = 1 << 16

// current makes the cache generation gen's (emptying it when gen is
// newer) and reports whether gen is the cache's generation. c.mu is held.
func (c *sqlitePostingCache) current(gen int64) bool {
	if c.terms == nil || gen > c.gen {
		c.gen, c.terms, c.dfs, c.pagesOf, c.order, c.size = gen, map[string][]sqlitePosting{}, map[string]int{}, nil, nil, 0
	}
	return gen == c.gen
}

// docFreq returns term's document frequency at generation gen when the
// cache knows it: the length of its cached postings, or a frequency
// putDocFreq kept.
func (c *sqlitePostingCache) docFreq(gen int64, term string) (int, bool) {
	if c == nil {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.terms == nil {
		return 0, false
	}
	if ps, ok := c.terms[term]; ok {
		return len(ps), true
	}
	df, ok := c.dfs[term]
	return df, ok
}

// putDocFreq keeps term's document frequency df, read at generation gen
// (as put keeps postings; at most sqliteDocFreqCacheMax of them).
func (c *sqlitePostingCache) putDocFreq(gen int64, term string, df int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current(gen) && len(c.dfs) < sqliteDocFreqCacheMax {
		c.dfs[term] = df
	}
}

// pages returns the pages cached for generation gen.
func (c *sqlitePostingCache) pages(gen int64) (*keywordPages, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.pagesOf == nil {
		return nil, false
	}
	return c.pagesOf, true
}

// putPages keeps the pages read at generation gen.
func (c *sqlitePostingCache) putPages(gen int64, pages *keywordPages) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current(gen) {
		c.pagesOf = pages
	}
}
