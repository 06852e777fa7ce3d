package engine

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// sqliteMatchAny returns the FTS5 expression matching rows with any of
// terms, and sqliteMatchAll the one matching rows with all of them (each
// term quoted, so FTS5 reads it as a string, never as an operator).
func sqliteMatchAny(terms []string) string { return sqliteMatchJoin(terms, " OR ") }

// sqliteMatchAll: see sqliteMatchAny.
func sqliteMatchAll(terms []string) string { return sqliteMatchJoin(terms, " AND ") }

func sqliteMatchJoin(terms []string, op string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + sqliteEncodeTerm(t) + `"`
	}
	return strings.Join(parts, op)
}

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
	plan := newBM25Plan(s.an, query, stopWords)
	if plan.blank() {
		return nil, nil
	}
	var out []*ai.Document
	err := s.readTx(ctx, func(conn *sql.Conn) error {
		var err error
		n, err := s.chunkCount(ctx, conn)
		if err != nil {
			return err
		}
		out, err = sqliteKeywordSearch(ctx, conn, plan, n, maxResults, filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite keyword search: %w", err)
	}
	return out, nil
}

// sqliteHit is a candidate chunk: its row ID, stage and BM25 score.
type sqliteHit struct {
	rid   int64
	stage int
	score float64
}

// sqliteKeywordSearch is KeywordSearch inside a read transaction on q,
// which holds n chunks.
func sqliteKeywordSearch(ctx context.Context, q sqliteQuerier, plan bm25Plan, n, maxResults int, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	hits, err := sqliteRankHits(ctx, q, plan, n)
	if err != nil {
		return nil, err
	}
	return sqlitePickHits(ctx, q, hits, maxResults, filter)
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

// sqliteRankHits returns the chunks matching plan in KeywordSearch's
// order; q holds n chunks.
//
// The score is the BM25 LocalvecStore's index computes (bm25IDF, Lucene's
// never-negative IDF), built from FTS5's bm25() one term at a time: for a
// single-term query bm25() is -idf·tf(k1+1)/(tf+k1(1-b+b·len/avglen)) with
// FTS5's IDF, which can drop to 1e-6 for a term in most rows; dividing
// that IDF out and multiplying bm25IDF in gives the term's share of the
// score over the same lengths (the breadcrumb counted as in the index).
func sqliteRankHits(ctx context.Context, q sqliteQuerier, plan bm25Plan, n int) ([]sqliteHit, error) {
	var dfErr error
	plan.keepStopWords(n, func(t string) int {
		df, err := sqliteDocFreq(ctx, q, t)
		if err != nil && dfErr == nil {
			dfErr = err
		}
		return df
	})
	if dfErr != nil {
		return nil, dfErr
	}
	if plan.empty() {
		return nil, nil
	}
	// The scored terms: keywords, then phrase words, then heading pairs
	// and optional terms, each once, at most bm25MaxTerms of those the
	// index has (as the in-memory index).
	var terms []string
	for _, t := range plan.keywords {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	for _, ts := range plan.phraseTerms {
		for _, t := range ts {
			if !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
		}
	}
	for _, t := range slices.Concat(plan.pairs, plan.optional) {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	byRid := make(map[int64]*sqliteHit)
	var hits []*sqliteHit
	if len(terms) > 0 {
		type posting struct {
			rid  int64
			bm25 float64
		}
		var ps []posting
		scored := 0
		for _, t := range terms {
			if scored == bm25MaxTerms {
				break
			}
			rows, err := q.QueryContext(ctx, `SELECT rowid, bm25(chunk_terms) FROM chunk_terms WHERE chunk_terms MATCH ?`, sqliteMatchAny([]string{t}))
			if err != nil {
				return nil, err
			}
			ps = ps[:0]
			for rows.Next() {
				var p posting
				if err := rows.Scan(&p.rid, &p.bm25); err != nil {
					rows.Close()
					return nil, err
				}
				ps = append(ps, p)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
			if len(ps) == 0 {
				continue
			}
			scored++
			w := -bm25IDF(n, len(ps)) / sqliteFTSIDF(n, len(ps))
			for _, p := range ps {
				h := byRid[p.rid]
				if h == nil {
					h = &sqliteHit{rid: p.rid}
					byRid[p.rid] = h
					hits = append(hits, h)
				}
				h.score += w * p.bm25
			}
		}
	}
	// Phrases: 2 points where the phrase is a substring of the normalised
	// text, checked in the chunks having all its words (every chunk for a
	// phrase without words).
	for i, ph := range plan.phrases {
		var rows *sql.Rows
		var err error
		if ts := plan.phraseTerms[i]; len(ts) > 0 {
			rows, err = q.QueryContext(ctx, `SELECT c.rid, c.text FROM chunk_terms JOIN chunks c ON c.rid = chunk_terms.rowid WHERE chunk_terms MATCH ?`, sqliteMatchAll(ts))
		} else {
			rows, err = q.QueryContext(ctx, `SELECT rid, text FROM chunks`)
		}
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var rid int64
			var text string
			if err := rows.Scan(&rid, &text); err != nil {
				rows.Close()
				return nil, err
			}
			if !strings.Contains(keywordNormalize(text), ph) {
				continue
			}
			h := byRid[rid]
			if h == nil {
				h = &sqliteHit{rid: rid}
				byRid[rid] = h
				hits = append(hits, h)
			}
			h.stage += 2
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	// Keywords: 1 point for having them all. Without phrases every
	// candidate has a keyword; with them, one having only phrase words
	// but not the phrase is dropped.
	hasAll, err := sqliteRowSet(ctx, q, plan.keywords, sqliteMatchAll)
	if err != nil {
		return nil, err
	}
	var hasAny map[int64]bool
	if len(plan.phrases) > 0 || len(plan.optional) > 0 {
		if hasAny, err = sqliteRowSet(ctx, q, plan.keywords, sqliteMatchAny); err != nil {
			return nil, err
		}
	}
	out := make([]sqliteHit, 0, len(hits))
	for _, h := range hits {
		if hasAll[h.rid] {
			h.stage++
		}
		if h.stage == 0 && hasAny != nil && !hasAny[h.rid] {
			continue
		}
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b sqliteHit) int {
		return cmp.Or(cmp.Compare(b.stage, a.stage), cmp.Compare(b.score, a.score), cmp.Compare(a.rid, b.rid))
	})
	return out, nil
}

// chunkCount returns the number of chunks in the snapshot q reads (a
// connection inside a read transaction), counted once per generation.
func (s *SQLiteStore) chunkCount(ctx context.Context, q sqliteQuerier) (int, error) {
	gen, _, err := sqliteGeneration(ctx, q)
	if err != nil {
		return 0, err
	}
	s.countMu.Lock()
	c := s.count
	s.countMu.Unlock()
	if c.ok && c.gen == gen {
		return c.n, nil
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count chunks: %w", err)
	}
	s.countMu.Lock()
	s.count = sqliteCount{ok: true, gen: gen, n: n}
	s.countMu.Unlock()
	return n, nil
}

// sqliteDocFreq returns the number of chunks whose keyword terms hold
// term.
func sqliteDocFreq(ctx context.Context, q sqliteQuerier, term string) (int, error) {
	var df int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunk_terms WHERE chunk_terms MATCH ?`, sqliteMatchAny([]string{term})).Scan(&df); err != nil {
		return 0, fmt.Errorf("document frequency: %w", err)
	}
	return df, nil
}

// sqliteRowSet returns the row IDs of chunk_terms matching match(terms)
// (none for no terms).
func sqliteRowSet(ctx context.Context, q sqliteQuerier, terms []string, match func([]string) string) (map[int64]bool, error) {
	set := make(map[int64]bool)
	if len(terms) == 0 {
		return set, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT rowid FROM chunk_terms WHERE chunk_terms MATCH ?`, match(terms))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return nil, err
		}
		set[rid] = true
	}
	return set, rows.Err()
}

// sqliteOrderTies orders the hits from i that tie with hits[i] (same
// stage and score) by chunk ID, derived from the chunk's source, URL and
// content, instead of row ID, which depends on the order chunks were
// written: the same chunks rank alike whatever the index's history (and
// as PgvecStore ranks them). It returns the end of the tied run.
func sqliteOrderTies(ctx context.Context, q sqliteQuerier, hits []sqliteHit, i int) (int, error) {
	end := i + 1
	for end < len(hits) && hits[end].stage == hits[i].stage && hits[end].score == hits[i].score {
		end++
	}
	if end-i < 2 {
		return end, nil
	}
	ids := make(map[int64]string, end-i)
	args := make([]any, 0, end-i)
	for _, h := range hits[i:end] {
		args = append(args, h.rid)
	}
	rows, err := q.QueryContext(ctx, `SELECT rid, id FROM chunks WHERE rid IN (`+sqlitePlaceholders(len(args))+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("read chunk ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var id string
		if err := rows.Scan(&rid, &id); err != nil {
			return 0, fmt.Errorf("read chunk ids: %w", err)
		}
		ids[rid] = id
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read chunk ids: %w", err)
	}
	slices.SortStableFunc(hits[i:end], func(a, b sqliteHit) int { return strings.Compare(ids[a.rid], ids[b.rid]) })
	return end, nil
}

// sqlitePickHits reads the documents of hits in order, skipping texts
// already taken and chunks filter refuses, until maxResults (all when
// <= 0). The rows are read a batch at a time, and a document is decoded
// only when its text is new.
func sqlitePickHits(ctx context.Context, q sqliteQuerier, hits []sqliteHit, maxResults int, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	var out []*ai.Document
	seen := make(map[string]bool)
	tiedTo := 0 // hits before it are in their final order
	batch := 256
	if maxResults > 0 {
		batch = maxResults + maxResults/4 + 4
	}
	type row struct {
		url, src, text string
		doc            []byte
		cut            sql.NullInt64
	}
	got := make(map[int64]*row, batch)
	for start := 0; start < len(hits); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+batch, len(hits))
		for i := start; i < end; i++ {
			if i >= tiedTo {
				e, err := sqliteOrderTies(ctx, q, hits, i)
				if err != nil {
					return nil, err
				}
				tiedTo = e
			}
		}
		args := make([]any, end-start)
		for i, h := range hits[start:end] {
			args[i] = h.rid
		}
		clear(got)
		rows, err := q.QueryContext(ctx, `SELECT rid, url, source, text, doc, cut FROM chunks WHERE rid IN (`+sqlitePlaceholders(len(args))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read chunks: %w", err)
		}
		for rows.Next() {
			var rid int64
			r := new(row)
			if err := rows.Scan(&rid, &r.url, &r.src, &r.text, &r.doc, &r.cut); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read chunk: %w", err)
			}
			got[rid] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read chunks: %w", err)
		}
		for _, h := range hits[start:end] {
			r := got[h.rid]
			if r == nil {
				return nil, fmt.Errorf("read chunk: row %d is gone", h.rid)
			}
			if seen[r.text] {
				continue
			}
			d, err := sqliteDecodeChunk(r.doc, r.url, r.src, r.text, r.cut)
			if err != nil {
				return nil, err
			}
			if filter != nil && !filter(d.Metadata) {
				continue
			}
			seen[r.text] = true
			out = append(out, d)
			if maxResults > 0 && len(out) == maxResults {
				return out, nil
			}
		}
		start = end
		batch *= 2
	}
	return out, nil
}
