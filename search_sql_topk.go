package engine

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/firebase/genkit/go/ai"
)

// pgvecCand is a chunk of a keyword search stage: its posting key, its
// tier within the stage (higher first; 0: not in the stage) and its BM25F
// score over the query's terms.
type pgvecCand struct {
	cid   [16]byte
	tier  int
	score float64
}

// comparePgvecCands orders candidates best first: higher tier, higher
// score, then lower ID (as the stages' SQL orders them).
func comparePgvecCands(a, b pgvecCand) int {
	return cmp.Or(cmp.Compare(b.tier, a.tier), cmp.Compare(b.score, a.score), slices.Compare(a.cid[:], b.cid[:]))
}

// pgvecTopK finds the best k chunks of one keyword search stage without
// scoring every chunk that has a query term, with Fagin's threshold
// algorithm over the posting table:
//
//   - sorted access: each scored term's postings are read best impact
//     first (the index on (term, w DESC, cid DESC) INCLUDE (tf, len)), a
//     batch per round, the batches doubling; a short list is read whole
//     in the first round, its shares taken from these rows;
//   - random access: every chunk seen for the first time gets its exact
//     score from its postings of the query's other terms (the index on
//     (cid, term)) and its tier from the stage;
//   - the threshold: a chunk not seen yet has, for each term, an impact no
//     higher than the last one read, so its score is at most the sum over
//     the terms of idf times the BM25 share that impact allows (see
//     pgvecShareBound), and its tier at most unseenTier.
//
// It stops when k candidates beat every chunk not seen yet, or when every
// list is read to its end; then the stage's chunks without any scored
// term (score 0), which no list holds, come from sweep. The result is
// exactly the first k of the stage's order (tier, score, ID).
type pgvecTopK struct {
	s  *PgvecStore
	sc pgvecScoring
	// filter, when not "", is the app's SQL condition on chunk c (the
	// columns unqualified), its placeholders from $3 bound to filterArgs:
	// a chunk that fails it is not in the stage.
	filter     string
	filterArgs []any
	// tierSQL, when not "", is the SQL expression giving the tier of
	// chunk c, its parameters numbered from tierParam() on and bound to
	// tierArgs; else maskTier gives it from the mask of the scored terms
	// the chunk has (bit i for sc.terms[i]).
	tierSQL  string
	tierArgs []any
	maskTier func(mask uint64) int
	// unseenTier returns the highest tier a chunk not seen yet can have,
	// given which lists are read to their end (0: none can be in the
	// stage).
	unseenTier func(exhausted []bool) int
	// sweep, when not nil, returns the best k chunks of the stage that
	// have no posting of any scored term, ordered by tier and ID.
	sweep func(ctx context.Context, k int) ([]pgvecCand, error)
	// cheapFull says the stage's one-pass scoring reads the postings from
	// the index alone: the search gives way to it (errTopKCostly) once it
	// would read more than 1/pgvecTopKCostRatio of them, instead of a
	// quarter. full, when not nil, is that scoring, which run then calls
	// itself.
	cheapFull bool
	full      func(ctx context.Context, k int) ([]pgvecCand, error)
}

// errTopKCostly is returned by pgvecTopK.run when the threshold search
// would read more than a quarter of the scored terms' postings (many
// chunks scoring alike, as with duplicated texts): the stage's SQL, which
// scores every match in one pass, is cheaper then.
var errTopKCostly = errors.New("threshold search would read most postings")

// pgvecTopKFirstBatch and pgvecTopKMaxBatch bound the postings read per
// term and round.
const (
	pgvecTopKFirstBatch = 64
	pgvecTopKMaxBatch   = 16384
)

// pgvecTopKWholeList: a term with at most this many postings has them all
// read in the first round (a variable for the tests).
var pgvecTopKWholeList int64 = 2048

// pgvecShareBound returns the highest BM25 share (without the IDF) of a
// posting whose stored impact is at most w, for chunks of average length
// avg none of which is shorter than minLen. The impact is
// tf/(tf + A + B0 len) with A = k1(1-b) and B0 = k1 b/pgvecImpactLen, the
// share (k1+1) tf/(tf + A + B len) with B = k1 b/avg. From w' <= w follows
// B0 len >= tf R0 - A with R0 := 1/w - 1, and len >= max(minLen, tf): for
// a given tf the share is highest at the shortest such len. With
// q = B/B0 <= 1 the share grows with tf towards (k1+1)/(1 + q R0); with
// q > 1 it grows with tf while the length bound max(minLen, tf) holds and
// falls once (tf R0 - A)/B0 does, so the highest share is at a tf next to
// where the two meet (pgvecShareAt is evaluated there). The stored impact
// is a float4: the bound is raised by a relative 1e-5 to cover its
// rounding.
func pgvecShareBound(w float32, avg float64, minLen int64) float64 {
	if w <= 0 {
		return 0
	}
	r0 := 1/float64(w) - 1
	if r0 <= 0 {
		return (bm25K1 + 1) * (1 + 1e-5)
	}
	q := pgvecImpactLen / avg
	if q <= 1 {
		return (bm25K1 + 1) / (1 + q*r0) * (1 + 1e-5)
	}
	a, b0 := bm25K1*(1-bm25B), bm25K1*bm25B/pgvecImpactLen
	l := float64(max(minLen, 0))
	// Where (tf R0 - A)/B0 meets minLen (for tf <= minLen) or tf (for
	// tf >= minLen, when R0 > B0).
	var meet []float64
	if c := (a + b0*l) / r0; c <= l {
		meet = append(meet, c)
	}
	if r0 > b0 {
		if c := a / (r0 - b0); c >= l {
			meet = append(meet, c)
		}
	}
	best := pgvecShareAt(1, r0, avg, l)
	for _, c := range meet {
		for tf := math.Floor(c) - 1; tf <= math.Ceil(c)+1; tf++ {
			if tf >= 1 {
				best = max(best, pgvecShareAt(tf, r0, avg, l))
			}
		}
	}
	if r0 <= b0 {
		// For tf beyond minLen the length bound tf ends up the larger
		// one for good: the share grows with tf towards (k1+1)/(1 + B).
		best = max(best, (bm25K1+1)/(1+bm25K1*bm25B/avg))
	}
	return best * (1 + 1e-5)
}

// pgvecShareAt returns the BM25 share of a posting with term frequency tf
// at the shortest length an impact of at most 1/(1 + r0) and the length
// bound minLen allow (see pgvecShareBound).
func pgvecShareAt(tf, r0, avg, minLen float64) float64 {
	a, b0 := bm25K1*(1-bm25B), bm25K1*bm25B/pgvecImpactLen
	l := max(minLen, tf, (tf*r0-a)/b0)
	return (bm25K1 + 1) * tf / (tf + a + bm25K1*bm25B*l/avg)
}

// run returns the stage's best k chunks as documents, in order.
func (x *pgvecTopK) run(ctx context.Context, k int) ([]*ai.Document, error) {
	cands, err := x.best(ctx, k)
	if errors.Is(err, errTopKCostly) && x.full != nil {
		cands, err = x.full(ctx, k)
	}
	if err != nil {
		return nil, err
	}
	return x.s.pgvecDocsByCID(ctx, cands)
}

// best returns the stage's best k candidates, in order.
func (x *pgvecTopK) best(ctx context.Context, k int) ([]pgvecCand, error) {
	terms := x.sc.terms
	nt := len(terms)
	lastW := make([]float32, nt)
	lastCID := make([][16]byte, nt)
	exhausted := make([]bool, nt)
	for i := range lastW {
		lastW[i] = float32(math.Inf(1))
		for j := range lastCID[i] {
			lastCID[i][j] = 0xff
		}
	}
	termIdx := make(map[string]int, nt)
	for i, t := range terms {
		termIdx[t] = i
	}
	seenSet := make(map[[16]byte]bool)
	var read int64 // postings asked for so far
	var cands []pgvecCand
	sql := x.roundSQL()
	batch := max(pgvecTopKFirstBatch, 2*k)
	first := true
	// The short lists, read whole in the first round, give their terms'
	// shares from the sorted access (tf and len come with the impact), so
	// random access probes the other terms only.
	whole := make([]bool, nt)
	probe := []string{}
	for i, t := range terms {
		if whole[i] = i < len(x.sc.dfs) && x.sc.dfs[i] <= pgvecTopKWholeList; !whole[i] {
			probe = append(probe, t)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var listTerms []string
		var listW []float32
		var listCID [][16]byte
		var listIdx []int
		var listLim []int64
		var maxLim int64
		for i := range terms {
			if !exhausted[i] {
				lim := int64(batch)
				if first && whole[i] {
					// A short list is read whole in the first round: its
					// term then bounds no unseen chunk.
					lim = max(lim, x.sc.dfs[i]+1)
				}
				listTerms = append(listTerms, terms[i])
				listW = append(listW, lastW[i])
				listCID = append(listCID, lastCID[i])
				listIdx = append(listIdx, i)
				listLim = append(listLim, lim)
				read += lim
				maxLim = max(maxLim, lim)
			}
		}
		first = false
		if len(listTerms) > 0 {
			if x.cheapFull && read*pgvecTopKCostRatio > x.sc.postings || read > x.sc.postings/4 && read > int64(batch) {
				return nil, errTopKCostly
			}
			args := append(append(append([]any{probe, maxLim}, x.filterArgs...), listTerms, listW, listCID, listLim), x.tierArgs...)
			rows, err := x.s.readPool(ctx).Query(ctx, sql, args...)
			if err != nil {
				return nil, fmt.Errorf("read postings: %w", err)
			}
			got := make([]int, len(listTerms))
			scores := make(map[[16]byte]float64)
			masks := make(map[[16]byte]uint64)
			tiers := make(map[[16]byte]int)
			var fresh [][16]byte
			for rows.Next() {
				var list *int64
				var cid [16]byte
				var w *float32
				var term *string
				var tf, n *int32
				if err := rows.Scan(&list, &cid, &w, &term, &tf, &n); err != nil {
					rows.Close()
					return nil, fmt.Errorf("read postings: %w", err)
				}
				switch {
				case list != nil: // sorted access
					li := int(*list) - 1
					got[li]++
					t := listIdx[li]
					lastW[t], lastCID[t] = *w, cid
					if whole[t] {
						scores[cid] += bm25TermScore(x.sc.idfs[t], *tf, *n, x.sc.avg)
						masks[cid] |= 1 << t
					}
					if !seenSet[cid] {
						seenSet[cid] = true
						fresh = append(fresh, cid)
					}
				case term != nil: // random access: a posting of a new chunk
					i, ok := termIdx[*term]
					if !ok {
						continue
					}
					scores[cid] += bm25TermScore(x.sc.idfs[i], *tf, *n, x.sc.avg)
					masks[cid] |= 1 << i
				case tf != nil: // the tier of a new chunk
					tiers[cid] = int(*tf)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read postings: %w", err)
			}
			for li, n := range got {
				if whole[listIdx[li]] && int64(n) >= listLim[li] {
					// More postings than counted (a write since): its
					// shares of other chunks are unknown.
					return nil, errTopKCostly
				}
				if int64(n) < listLim[li] {
					exhausted[listIdx[li]] = true
				}
			}
			for _, cid := range fresh {
				tier := tiers[cid]
				if x.maskTier != nil {
					tier = x.maskTier(masks[cid])
					if x.filter != "" && tiers[cid] == 0 {
						tier = 0 // fails the filter
					}
				}
				if tier > 0 {
					cands = append(cands, pgvecCand{cid: cid, tier: tier, score: scores[cid]})
				}
			}
			slices.SortFunc(cands, comparePgvecCands)
		}
		if !slices.Contains(exhausted, false) {
			if x.sweep != nil {
				more, err := x.sweep(ctx, k)
				if err != nil {
					return nil, err
				}
				for _, c := range more {
					if !seenSet[c.cid] {
						cands = append(cands, c)
					}
				}
				slices.SortFunc(cands, comparePgvecCands)
			}
			return cands[:min(k, len(cands))], nil
		}
		ut := x.unseenTier(exhausted)
		if ut <= 0 {
			return cands[:min(k, len(cands))], nil
		}
		if len(cands) >= k {
			threshold := 0.0
			for i := range terms {
				if !exhausted[i] {
					threshold += x.sc.idfs[i] * pgvecShareBound(lastW[i], x.sc.avg, x.sc.minLen)
				}
			}
			kth := cands[k-1]
			if kth.tier > ut || (kth.tier == ut && kth.score > threshold) {
				return cands[:k], nil
			}
		}
		batch = min(2*batch, pgvecTopKMaxBatch)
	}
}

// tierParam returns the number of the first parameter of tierSQL: after
// the scored terms ($1), the largest batch size ($2), the filter's
// arguments and the round's four.
func (x *pgvecTopK) tierParam() int { return 3 + len(x.filterArgs) + 4 }

// roundSQL returns the query of one round, with p = 3 + len(filterArgs):
// the next postings of each list ($p terms, after the impacts and IDs
// $p+1, $p+2, as many as $p+3 says, at most $2), then the postings of the scored terms $1 of each chunk read
// (also of one an earlier round read: skipped by the caller; excluding
// them in SQL costs more), each looked up by (cid, term): a probe per term
// and chunk (OFFSET 0 keeps the planner from joining by cid alone, which
// reads all of a chunk's postings), then, with a tier expression or a filter, the
// tier of each such chunk (0 when it fails the filter). Rows are (list, cid, w,
// NULL, NULL, NULL) for sorted access, (NULL, cid, NULL, term, tf, len)
// for random access and (NULL, cid, NULL, NULL, tier, NULL) for tiers.
func (x *pgvecTopK) roundSQL() string {
	kw := pgvecIdent(x.s.names.kw)
	p := 3 + len(x.filterArgs)
	arg := func(i int, typ string) string { return fmt.Sprintf("$%d::%s", p+i, typ) }
	q := `WITH ayd_s AS MATERIALIZED (
			SELECT u.i, p.cid, p.w, p.tf, p.len
			FROM unnest(` + arg(0, "text[]") + `, ` + arg(1, "real[]") + `, ` + arg(2, "uuid[]") + `, ` + arg(3, "bigint[]") + `) WITH ORDINALITY AS u(term, lw, lc, lim, i)
			CROSS JOIN LATERAL (SELECT k.cid, k.w, k.tf, k.len FROM ` + kw + ` k
				WHERE k.term = u.term AND (k.w, k.cid) < (u.lw, u.lc)
				ORDER BY k.w DESC, k.cid DESC LIMIT least(u.lim, $2::bigint)) AS p),
		ayd_c AS MATERIALIZED (SELECT DISTINCT cid FROM ayd_s)
		SELECT ayd_s.i, ayd_s.cid, ayd_s.w, NULL::text, ayd_s.tf, ayd_s.len FROM ayd_s
		UNION ALL
		SELECT NULL, ayd_c.cid, NULL, p.term, p.tf, p.len FROM ayd_c CROSS JOIN unnest($1::text[]) AS ayd_q(term)
		CROSS JOIN LATERAL (SELECT p.term, p.tf, p.len FROM ` + kw + ` p WHERE p.cid = ayd_c.cid AND p.term = ayd_q.term OFFSET 0) AS p`
	tier := x.tierSQL
	if tier == "" {
		tier = "1"
	}
	if x.filter != "" {
		tier = `CASE WHEN (` + x.filter + `) THEN (` + tier + `) ELSE 0 END`
	}
	if x.tierSQL != "" || x.filter != "" {
		q += `
		UNION ALL
		SELECT NULL, ayd_c.cid, NULL, NULL, (` + tier + `)::int4, NULL FROM ayd_c
		JOIN ` + pgvecIdent(x.s.names.table) + ` c ON c.id = replace(ayd_c.cid::text, '-', '')`
	}
	return q
}

// pgvecDocsByCID returns the documents of cands, in their order.
func (s *PgvecStore) pgvecDocsByCID(ctx context.Context, cands []pgvecCand) ([]*ai.Document, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = hex.EncodeToString(c.cid[:])
	}
	byID, err := s.docsByID(ctx, ids, "", nil)
	if err != nil {
		return nil, err
	}
	out := make([]*ai.Document, 0, len(ids))
	for _, id := range ids {
		if d, ok := byID[id]; ok { // a chunk deleted meanwhile is left out
			out = append(out, d)
		}
	}
	return out, nil
}

// pgvecKeywordTiers returns the tier functions of the keyword stage: 2 for
// a chunk with every keyword (when every keyword has postings), 1 for one
// with some.
func pgvecKeywordTiers(sc pgvecScoring, nKeywords int) (func(mask uint64) int, func([]bool) int) {
	var kwMask uint64
	var kwIdx []int
	for i, t := range sc.terms {
		if slices.Contains(sc.keywords, t) {
			kwMask |= 1 << i
			kwIdx = append(kwIdx, i)
		}
	}
	allPossible := len(sc.keywords) == nKeywords
	tier := func(mask uint64) int {
		m := mask & kwMask
		switch {
		case m == 0:
			return 0
		case allPossible && bits.OnesCount64(m) == len(kwIdx):
			return 2
		}
		return 1
	}
	unseen := func(exhausted []bool) int {
		// A chunk not seen yet is in no list read to its end.
		all, some := allPossible, false
		for _, i := range kwIdx {
			if exhausted[i] {
				all = false
			} else {
				some = true
			}
		}
		switch {
		case all:
			return 2
		case some:
			return 1
		}
		return 0
	}
	return tier, unseen
}
