package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// pgvecTopKCostRatio is how many postings the stage's one-pass scoring
// reads (index-only, schema version 7) for the cost of one posting the
// threshold search reads (a sorted access, a probe per query term of each
// new chunk and, in the prefix stage, the chunk's row for its tier): a
// threshold search that would read more than 1/pgvecTopKCostRatio of its
// terms' postings gives way to the one-pass scoring (pgvecTopK.cheapFull;
// a variable for the tests).
var pgvecTopKCostRatio int64 = 16

// pgvecShareSQL returns the SQL of the BM25 share of posting p for query
// term q (q.w its IDF), avg the SQL of the average chunk length: the
// expression bm25TermScore computes, in the same order, in float8 (a bare
// 0.75 would make b·len numeric arithmetic, the most of a one-pass
// scoring's time; the products are exact either way).
func pgvecShareSQL(avg string) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + `::float8` }
	k1, b := f(bm25K1), f(bm25B)
	return `q.w * p.tf * (` + k1 + ` + 1) / (p.tf + ` + k1 + ` * (1 - ` + b + ` + ` + b + ` * p.len / ` + avg + `))`
}

// prefixFull returns the prefix stage's best k candidates by scoring every
// posting of the scored terms in one pass (through the impact index, which
// holds tf and len), the chunks best score first, and reading the tier
// (the patterns the content matches, 0 when it fails the filter) of the
// first n of them only: once k of those have the highest tier a chunk can
// have (most), no chunk further down can rank above them. Else n grows
// (16 times, then all); once every scored chunk has its tier, the chunks
// matching without any scored term come from sweep. The result is the
// stage's order, as pgvecTopK.best gives it.
func (s *PgvecStore) prefixFull(ctx context.Context, sc pgvecScoring, patterns []string, most int, filter string, filterArgs []any,
	sweep func(context.Context, int) ([]pgvecCand, error), k int) ([]pgvecCand, error) {
	p := 3 + len(filterArgs)
	idfs, avg, pats := fmt.Sprintf("$%d::float8[]", p), fmt.Sprintf("$%d::float8", p+1), fmt.Sprintf("$%d::text[]", p+2)
	tier := `SELECT count(*) FROM unnest(` + pats + `) AS ayd_p(pat) WHERE c.content ILIKE ayd_p.pat`
	if filter != "" {
		tier = `CASE WHEN (` + filter + `) THEN (` + tier + `) ELSE 0 END`
	}
	q := `SELECT ayd_t.cid, ayd_t.score, (` + tier + `)::int4
		FROM (SELECT p.cid, sum(` + pgvecShareSQL(avg) + `) AS score
			FROM unnest($1::text[], ` + idfs + `) AS q(term, w)
			JOIN ` + pgvecIdent(s.names.kw) + ` p ON p.term = q.term
			GROUP BY p.cid ORDER BY score DESC, p.cid LIMIT $2::bigint) ayd_t
		JOIN ` + pgvecIdent(s.names.table) + ` c ON c.id = replace(ayd_t.cid::text, '-', '')`
	n := max(4*k, pgvecTopKFirstBatch)
	for {
		var limit any // NULL: every scored chunk
		if n > 0 {
			limit = n
		}
		args := append(append(append([]any{sc.terms, limit}, filterArgs...), sc.idfs, sc.avg), patterns)
		rows, err := s.readPool(ctx).Query(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("score prefix stage: %w", err)
		}
		var cands []pgvecCand
		got, top := 0, 0
		for rows.Next() {
			var c pgvecCand
			var t int32
			if err := rows.Scan(&c.cid, &c.score, &t); err != nil {
				rows.Close()
				return nil, fmt.Errorf("score prefix stage: %w", err)
			}
			got++
			if c.tier = int(t); c.tier > 0 {
				cands = append(cands, c)
			}
			if c.tier > 0 && c.tier >= most {
				top++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("score prefix stage: %w", err)
		}
		if top >= k {
			slices.SortFunc(cands, comparePgvecCands)
			return cands[:k], nil
		}
		if n > 0 && got == n {
			// Chunks further down may still rank: read more of them.
			if n *= 16; int64(n) >= sc.postings {
				n = 0
			}
			continue
		}
		// Every scored chunk has its tier: add those without a scored term.
		more, err := sweep(ctx, k)
		if err != nil {
			return nil, err
		}
		cands = append(cands, more...)
		slices.SortFunc(cands, comparePgvecCands)
		return cands[:min(k, len(cands))], nil
	}
}
