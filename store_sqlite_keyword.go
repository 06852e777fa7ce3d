package engine

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
)

// sqliteKeywordCandidates is how many BM25-best FTS matches per requested
// result KeywordSearch ranks by stages (when it has a cap and no filter).
const sqliteKeywordCandidates = 50

// sqliteFTSMinRunes is the shortest string the FTS5 trigram index can find.
const sqliteFTSMinRunes = 3

// sqliteFTSQuery returns the FTS5 MATCH expression whose matches are a
// superset of the documents plan can match: any keyword, or all the words
// of any phrase or any long-keyword prefix (each as a case-insensitive
// substring). ok is false when
// some term is too short for the trigram index, and the search must scan.
func sqliteFTSQuery(plan keywordPlan) (expr string, ok bool) {
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	var terms []string
	for _, ph := range plan.phrases {
		var parts []string
		for _, w := range strings.Fields(ph) {
			if utf8.RuneCountInString(w) >= sqliteFTSMinRunes {
				parts = append(parts, quote(w))
			}
		}
		if len(parts) == 0 {
			return "", false
		}
		terms = append(terms, "("+strings.Join(parts, " AND ")+")")
	}
	for _, k := range append(slices.Clone(plan.prefixes), plan.keywords...) {
		if utf8.RuneCountInString(k) < sqliteFTSMinRunes {
			return "", false
		}
		terms = append(terms, quote(k))
	}
	return strings.Join(terms, " OR "), len(terms) > 0
}

// KeywordSearch searches the stored chunks for query with the three-stage
// strategy of LocalvecKeywordSearch: chunks containing a quoted phrase of
// the query rank first, then chunks containing the 7-rune prefix of a long
// keyword, then chunks containing the other keywords (all case-insensitive
// substrings of the text with white space collapsed); within a stage,
// chunks matching more terms rank higher, and equal ones by FTS5's BM25
// score. Results are deduplicated by text and capped at maxResults (no cap
// when maxResults <= 0); filter, when non-nil, keeps only chunks whose
// metadata it accepts. A query without keywords returns no documents and
// no error.
//
// The FTS5 trigram index finds the candidates: with maxResults > 0 and no
// filter, the 50 x maxResults best matches by BM25 plus as many of the
// phrase matches (so a chunk matching many keywords but ranked low by BM25
// can be missed, where LocalvecStore's full scan would find it); otherwise
// all matches. A query with a keyword or all phrase words shorter than
// three letters scans every chunk instead.
func (s *SQLiteStore) KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	if err := s.checkOpen("keyword search"); err != nil {
		return nil, err
	}
	plan := newKeywordPlan(query, stopWords)
	if plan.empty() {
		return nil, nil
	}
	var out []*ai.Document
	err := s.readTx(ctx, func(conn *sql.Conn) error {
		var err error
		out, err = sqliteKeywordSearch(ctx, conn, plan, maxResults, filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite keyword search: %w", err)
	}
	return out, nil
}

// sqliteKeywordSearch is KeywordSearch inside a read transaction on q.
func sqliteKeywordSearch(ctx context.Context, q sqliteQuerier, plan keywordPlan, maxResults int, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	expr, ok := sqliteFTSQuery(plan)
	docCol := "NULL"
	if filter != nil {
		docCol = "c.doc"
	}
	type hit struct {
		rid       int64
		score     sqliteStages
		bm25      float64
		text      string
		url, src  string
		doc       *ai.Document
		docLoaded bool
	}
	var hits []hit
	// The queries that find candidates: every chunk when the trigram index
	// cannot serve the query; with a filter or no cap, every match; else
	// the best sqliteKeywordCandidates x maxResults matches by BM25, plus
	// as many of the phrase matches, so phrase hits are never crowded out.
	type candQuery struct {
		sql  string
		args []any
	}
	var cands []candQuery
	const sel = `SELECT c.rid, c.url, c.source, c.text, `
	switch {
	case !ok:
		cands = []candQuery{{sel + docCol + `, 0.0 FROM chunks c`, nil}}
	case filter != nil || maxResults <= 0:
		cands = []candQuery{{sel + docCol + `, bm25(chunks_fts) FROM chunks_fts JOIN chunks c ON c.rid = chunks_fts.rowid WHERE chunks_fts MATCH ?`, []any{expr}}}
	default:
		limit := max(maxResults*sqliteKeywordCandidates, 200)
		top := sel + docCol + `, f.rank FROM (SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN chunks c ON c.rid = f.rowid`
		cands = []candQuery{{top, []any{expr, limit}}}
		if pexpr, pok := sqliteFTSQuery(keywordPlan{phrases: plan.phrases}); pok && len(plan.phrases) > 0 {
			cands = append(cands, candQuery{top, []any{pexpr, limit}})
		}
	}
	seenRid := make(map[int64]bool)
	for _, cq := range cands {
		rows, err := q.QueryContext(ctx, cq.sql, cq.args...)
		if err != nil {
			return nil, err
		}
		if err := func() error {
			defer rows.Close()
			for rows.Next() {
				var h hit
				var docJSON []byte
				if err := rows.Scan(&h.rid, &h.url, &h.src, &h.text, &docJSON, &h.bm25); err != nil {
					return err
				}
				if seenRid[h.rid] {
					continue
				}
				seenRid[h.rid] = true
				norm := keywordNormalize(h.text)
				h.score = newSqliteStages(plan, norm)
				if h.score.phrases+h.score.prefixes+h.score.keywords == 0 {
					continue
				}
				if filter != nil {
					d, err := sqliteDecodeDoc(docJSON, h.url, h.src)
					if err != nil {
						return err
					}
					if !filter(d.Metadata) {
						continue
					}
					h.doc, h.docLoaded = d, true
				}
				hits = append(hits, h)
			}
			return rows.Err()
		}(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(
			cmp.Compare(b.score.phrases, a.score.phrases),
			cmp.Compare(b.score.prefixes, a.score.prefixes),
			cmp.Compare(b.score.keywords, a.score.keywords),
			cmp.Compare(a.bm25, b.bm25), // BM25 in FTS5 is negative: lower is better
			cmp.Compare(a.rid, b.rid),
		)
	})
	seen := make(map[string]bool)
	var picked []hit
	for _, h := range hits {
		if seen[h.text] {
			continue
		}
		seen[h.text] = true
		picked = append(picked, h)
		if maxResults > 0 && len(picked) == maxResults {
			break
		}
	}
	out := make([]*ai.Document, len(picked))
	for i, h := range picked {
		if h.docLoaded {
			out[i] = h.doc
			continue
		}
		var b []byte
		if err := q.QueryRowContext(ctx, `SELECT doc FROM chunks WHERE rid = ?`, h.rid).Scan(&b); err != nil {
			return nil, fmt.Errorf("read chunk: %w", err)
		}
		d, err := sqliteDecodeDoc(b, h.url, h.src)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// sqliteStages counts the plan's phrases, long-keyword prefixes and
// keywords that occur in a normalised text.
type sqliteStages struct{ phrases, prefixes, keywords int }

// newSqliteStages returns the stages of norm for plan.
func newSqliteStages(plan keywordPlan, norm string) sqliteStages {
	count := func(ss []string) int {
		n := 0
		for _, s := range ss {
			if strings.Contains(norm, s) {
				n++
			}
		}
		return n
	}
	return sqliteStages{count(plan.phrases), count(plan.prefixes), count(plan.keywords)}
}
