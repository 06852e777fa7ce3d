package engine

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/firebase/genkit/go/ai"
)

// sqliteMatchTerm returns the FTS5 expression matching the rows holding
// term (quoted, so FTS5 reads it as a string, never as an operator).
func sqliteMatchTerm(term string) string { return `"` + sqliteEncodeTerm(term) + `"` }

// KeywordSearch returns the chunks matching query by keywords, best first,
// at most maxResults (no cap when maxResults <= 0), less stopWords, those
// whose metadata filter accepts (all when nil), ranked as LocalvecStore's
// KeywordSearch ranks.
//
// Deprecated: Use SearchText (the question stop words, a Filter), the read
// every store shares.
func (s *SQLiteStore) KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	return s.keywordSearch(ctx, query, maxResults, stopWords, filter)
}

// keywordSearch searches the stored chunks for query and ranks them as
// LocalvecStore's BM25 index does (LocalvecKeywordSearch): the query is
// analysed in the store's keyword language (SQLiteOptions.KeywordLanguage; stemmed words,
// one-letter words and symbol tokens kept) into quoted phrases (double or
// single quotes) and keywords (the other words less stopWords, compared
// lower-case; stop-listed words few chunks hold are scored, and a query of
// stop words only searches them: docs/retrieval.md). Chunks rank in stages: 2 points per quoted phrase found in
// the chunk (a case-insensitive substring of its text with white space
// collapsed), 1 more when it has every keyword; within a stage by BM25 over
// all the query's terms and the heading pairs of its consecutive keywords
// (k1 1.2, b 0.75, the heading field, breadcrumb and merged headings,
// counted as bm25HeadingTerms counts it: the same score as
// LocalvecStore's), then by chunk ID (derived from the chunk's source, URL
// and content: the order does not depend on the index's history). A chunk
// with none of the keywords and none of the phrases is not returned. Results are deduplicated by text and capped at maxResults (no
// cap when maxResults <= 0); filter, when non-nil, keeps only chunks whose
// metadata it accepts. A query without keywords returns no documents and
// no error.
//
// The terms come from the chunk_terms FTS5 index (schema version 2), so a
// query reads only the posting lists of its terms and the texts of the
// chunks it returns (and, for a phrase, of the chunks having all its
// words).
func (s *SQLiteStore) keywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	if err := s.checkOpen("keyword search"); err != nil {
		return nil, err
	}
	an, err := s.keywordAnalyzer(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite keyword search: %w", err)
	}
	plan := newBM25Plan(an, query, stopWords)
	if plan.blank() {
		return nil, nil
	}
	var out []*ai.Document
	err = s.readTx(ctx, func(conn *sql.Conn) error {
		var err error
		n, gen, err := s.chunkCount(ctx, conn)
		if err != nil {
			return err
		}
		ix := &sqliteKeywordIndex{q: conn, n: n, filter: filter, cache: &s.postings, gen: gen}
		out, err = rankKeywords(ctx, ix, plan, maxResults)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite keyword search: %w", err)
	}
	return out, nil
}

// sqliteKeywordIndex is an SQLiteStore's keyword index inside one read
// transaction as the one keyword ranker reads it: ordinals number the
// row IDs as the postings name them.
type sqliteKeywordIndex struct {
	q      sqliteQuerier
	n      int
	filter func(meta map[string]any) bool
	rids   keywordOrds[int64]
	// cache keeps postings across searches of generation gen (nil: none).
	cache *sqlitePostingCache
	gen   int64
}

func (x *sqliteKeywordIndex) chunks(context.Context) (int, error) { return x.n, nil }

func (x *sqliteKeywordIndex) docFreqs(ctx context.Context, terms []string) ([]int, error) {
	out := make([]int, len(terms))
	for i, t := range terms {
		df, ok := x.cache.docFreq(x.gen, t)
		if !ok {
			var err error
			if df, err = sqliteDocFreq(ctx, x.q, t); err != nil {
				return nil, err
			}
			x.cache.putDocFreq(x.gen, t, df)
		}
		out[i] = df
	}
	return out, nil
}

// sqliteFTSIDF is the inverse document frequency FTS5's bm25() gives a
// term found in df of n rows.
func sqliteFTSIDF(n, df int) float64 {
	idf := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	if idf <= 0 {
		idf = 1e-6
	}
	return idf
}

// postings reads term's postings with FTS5's bm25(), which for a
// one-term query is -idf·tf(k1+1)/(tf+k1(1-b+b·len/avglen)) with FTS5's
// IDF (down to 1e-6 for a term in most rows): dividing that IDF out and
// multiplying bm25IDF in gives the term's share of the BM25F score over
// the same lengths (the heading field counted as in LocalvecStore's
// index). The shares of a term read at the snapshot's generation are kept
// in the store's posting cache (store_sqlite_postings.go) and served from
// it by the next searches of that generation.
func (x *sqliteKeywordIndex) postings(ctx context.Context, term string, n int, add func(int, float64)) (int, error) {
	ps, ok := x.cache.get(x.gen, term)
	if !ok {
		rows, err := x.q.QueryContext(ctx, `SELECT rowid, bm25(chunk_terms) FROM chunk_terms WHERE chunk_terms MATCH ?`, sqliteMatchTerm(term))
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var p sqlitePosting
			if err := rows.Scan(&p.rid, &p.score); err != nil {
				rows.Close()
				return 0, err
			}
			ps = append(ps, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		if len(ps) > 0 {
			w := -bm25IDF(n, len(ps)) / sqliteFTSIDF(n, len(ps))
			for i := range ps {
				ps[i].score *= w
			}
		}
		x.cache.put(x.gen, term, ps)
	}
	for _, p := range ps {
		add(x.rids.of(p.rid), p.score)
	}
	return len(ps), nil
}

// sqliteReadBatch is the most row IDs one IN list of the keyword ranker
// names.
const sqliteReadBatch = 512

// forRows runs query (whose IN list is the placeholder list %s) over the
// rows of ords, sqliteReadBatch at a time, calling scan for each result
// row.
func (x *sqliteKeywordIndex) forRows(ctx context.Context, query string, ords []int, scan func(rows *sql.Rows) error) error {
	for len(ords) > 0 {
		part := ords[:min(len(ords), sqliteReadBatch)]
		ords = ords[len(part):]
		args := make([]any, len(part))
		for i, o := range part {
			args[i] = x.rids.keys[o]
		}
		rows, err := x.q.QueryContext(ctx, fmt.Sprintf(query, sqlitePlaceholders(len(args))), args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (x *sqliteKeywordIndex) texts(ctx context.Context, ords []int, fn func(int, string)) error {
	return x.forRows(ctx, `SELECT rid, text FROM chunks WHERE rid IN (%s)`, ords, func(rows *sql.Rows) error {
		var rid int64
		var text string
		if err := rows.Scan(&rid, &text); err != nil {
			return err
		}
		fn(x.rids.ord[rid], text)
		return nil
	})
}

func (x *sqliteKeywordIndex) scanTexts(ctx context.Context, fn func(int, string)) error {
	rows, err := x.q.QueryContext(ctx, `SELECT rid, text FROM chunks`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var text string
		if err := rows.Scan(&rid, &text); err != nil {
			return err
		}
		fn(x.rids.of(rid), text)
	}
	return rows.Err()
}

func (x *sqliteKeywordIndex) keys(ctx context.Context, ords []int) ([]string, error) {
	ids := make(map[int64]string, len(ords))
	err := x.forRows(ctx, `SELECT rid, id FROM chunks WHERE rid IN (%s)`, ords, func(rows *sql.Rows) error {
		var rid int64
		var id string
		if err := rows.Scan(&rid, &id); err != nil {
			return err
		}
		ids[rid] = id
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read chunk ids: %w", err)
	}
	out := make([]string, len(ords))
	for i, o := range ords {
		out[i] = ids[x.rids.keys[o]]
	}
	return out, nil
}

// docs decodes a chunk's stored document only when its text is new.
func (x *sqliteKeywordIndex) docs(ctx context.Context, ords []int, seen func(string) bool) ([]*ai.Document, error) {
	got := make(map[int64]*ai.Document, len(ords))
	err := x.forRows(ctx, `SELECT rid, url, source, text, doc, cut FROM chunks WHERE rid IN (%s)`, ords, func(rows *sql.Rows) error {
		var rid int64
		var url, src, text string
		var doc []byte
		var cut sql.NullInt64
		if err := rows.Scan(&rid, &url, &src, &text, &doc, &cut); err != nil {
			return fmt.Errorf("read chunk: %w", err)
		}
		if seen(text) {
			return nil
		}
		d, err := sqliteDecodeChunk(doc, url, src, text, cut)
		if err != nil {
			return err
		}
		if x.filter == nil || x.filter(d.Metadata) {
			got[rid] = d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*ai.Document, len(ords))
	for i, o := range ords {
		out[i] = got[x.rids.keys[o]]
	}
	return out, nil
}

// chunkCount returns the number of chunks in the snapshot q reads (a
// connection inside a read transaction), counted once per generation, and
// that generation.
func (s *SQLiteStore) chunkCount(ctx context.Context, q sqliteQuerier) (int, int64, error) {
	gen, _, err := sqliteGeneration(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	s.countMu.Lock()
	c := s.count
	s.countMu.Unlock()
	if c.ok && c.gen == gen {
		return c.n, gen, nil
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return 0, 0, fmt.Errorf("count chunks: %w", err)
	}
	s.countMu.Lock()
	s.count = sqliteCount{ok: true, gen: gen, n: n}
	s.countMu.Unlock()
	return n, gen, nil
}

// sqliteDocFreq returns the number of chunks whose keyword terms hold
// term.
func sqliteDocFreq(ctx context.Context, q sqliteQuerier, term string) (int, error) {
	var df int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunk_terms WHERE chunk_terms MATCH ?`, sqliteMatchTerm(term)).Scan(&df); err != nil {
		return 0, fmt.Errorf("document frequency: %w", err)
	}
	return df, nil
}

// pages returns the chunks' URLs with their chunk counts, read once per
// generation (the posting cache keeps them).
func (x *sqliteKeywordIndex) pages(ctx context.Context) (*keywordPages, error) {
	if pages, ok := x.cache.pages(x.gen); ok {
		return pages, nil
	}
	rows, err := x.q.QueryContext(ctx, `SELECT url, count(*) FROM chunks GROUP BY url`)
	if err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	defer rows.Close()
	pages := newKeywordPages()
	for rows.Next() {
		var url []byte // stored byte for byte: names need not be UTF-8
		var n int
		if err := rows.Scan(&url, &n); err != nil {
			return nil, fmt.Errorf("read pages: %w", err)
		}
		pages.add(string(url), n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	x.cache.putPages(x.gen, pages)
	return pages, nil
}
