package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// keywordSearchTerms is KeywordSearchSQL ranked from the store's posting
// table (schema version 4, see pgstore_terms.go). The query is analysed
// twice: plan (ExtractKeywords) gives the ILIKE patterns of the phrase,
// prefix and substring stages, and the store's textAnalyzer gives the
// terms (keywords, then phrase words) that every stage scores with BM25F
// as LocalvecStore does: the IDF of a term from its number of postings,
// the average length from the statistics row. The all-words and any-word
// stages are one query over the postings of the keyword terms: chunks
// having every keyword first, then the others, each by score.
//
// The term stage is the one keyword ranker (rankKeywords over
// pgvecKeywordIndex), whose order for a query without quoted phrases the
// stage's SQL and threshold search give faster. all false runs that stage
// alone (SearchText).
func (s *PgvecStore) keywordSearchTerms(ctx context.Context, an *textAnalyzer, query string, plan keywordPlan, maxResults int, stopWords map[string]bool, extraWhere string, extraArgs []any, all bool) ([]*ai.Document, error) {
	bp := newBM25Plan(an, query, stopWords)
	if err := s.keepStopWords(ctx, &bp); err != nil {
		return nil, fmt.Errorf("keyword search sql: %w", err)
	}
	sc, err := s.termScoring(ctx, bp)
	if err != nil {
		return nil, fmt.Errorf("keyword search sql: %w", err)
	}
	filter := ""
	if strings.TrimSpace(extraWhere) != "" {
		filter = " AND (" + extraWhere + ")"
	}
	t, kw := pgvecIdent(s.names.table), pgvecIdent(s.names.kw)
	// Parameters after extraArgs: the scored terms, their IDFs, whether
	// each is a keyword, the average chunk length, then per stage the
	// keyword count (term stage) or the phrases' longest words (phrase
	// stage).
	nArg := 3 + len(extraArgs)
	terms := fmt.Sprintf("$%d::text[]", nArg)
	idfs := fmt.Sprintf("$%d::float8[]", nArg+1)
	avg := fmt.Sprintf("$%d::float8", nArg+2)
	extra := fmt.Sprintf("$%d", nArg+3)
	// The BM25 share of posting p for query term q.
	share := pgvecShareSQL(avg)
	// The score of chunk c for the ILIKE stages: its postings of the
	// query's terms, looked up by key.
	score := `LEFT JOIN LATERAL (SELECT sum(` + share + `) AS score
		FROM unnest(` + terms + `, ` + idfs + `) AS q(term, w)
		JOIN ` + kw + ` p ON p.term = q.term AND p.cid = ` + pgvecCIDSQL("c.id") + `) ayd_s ON true`
	likeOn := func(text string) string {
		return `SELECT c.content, c.metadata FROM ` + t + ` c ` + score +
			` WHERE ` + text + ` ILIKE ANY($1::text[])` + filter +
			` ORDER BY (SELECT count(*) FROM unnest($1::text[]) AS ayd_p(pat) WHERE ` + text + ` ILIKE ayd_p.pat) DESC, ` +
			`coalesce(ayd_s.score, 0) DESC, c.id LIMIT $2`
	}
	likeQuery := likeOn("c.content")
	// Phrases are matched with white space collapsed (as in the phrase);
	// the longest word of some phrase, which every match contains as it
	// is, lets the trigram index narrow the rows first.
	// A single phrase also checks all its words (each is in every match as
	// it is) before the white space is collapsed, which costs the most (CASE
	// keeps that order); not through the index (|| ''), whose bitmaps of
	// common words cost more.
	phraseWords := []string{}
	if len(plan.phrases) == 1 {
		phraseWords = strings.Fields(plan.phrases[0])
	}
	collapsed := `regexp_replace(c.content, '\s+', ' ', 'g')`
	phraseQuery := strings.Replace(likeOn(collapsed), ` WHERE `+collapsed+` ILIKE ANY($1::text[])`,
		` WHERE c.content ILIKE ANY(`+extra+`::text[]) AND CASE WHEN (c.content || '') ILIKE ALL(`+fmt.Sprintf("$%d", nArg+4)+`::text[])
			THEN `+collapsed+` ILIKE ANY($1::text[]) END`, 1)

	// The term stage: chunks with a posting of some keyword, those with all
	// nKW keywords first. Without a filter the best are picked from the
	// postings alone before the chunk table is read.
	nKW := extra + "::bigint"
	isKW := `q.term = ANY($1::text[])`
	agg := `SELECT p.cid, sum(` + share + `) AS score, count(*) FILTER (WHERE ` + isKW + `) AS nkw
		FROM unnest(` + terms + `, ` + idfs + `) AS q(term, w)
		JOIN ` + kw + ` p ON p.term = q.term
		GROUP BY p.cid HAVING count(*) FILTER (WHERE ` + isKW + `) > 0`
	order := `(ayd_t.nkw = ` + nKW + `) DESC, ayd_t.score DESC, ayd_t.cid`
	var termQuery string
	if filter == "" {
		termQuery = `SELECT c.content, c.metadata FROM (` + agg + `
			ORDER BY (count(*) FILTER (WHERE ` + isKW + `) = ` + nKW + `) DESC, sum(` + share + `) DESC, p.cid LIMIT $2) ayd_t
			JOIN ` + t + ` c ON c.id = replace(ayd_t.cid::text, '-', '')
			ORDER BY ` + order
	} else {
		// With a filter: the chunks it keeps first, each scored from its
		// postings (filterKeepsFew chose this for a filter keeping few).
		termQuery = `SELECT c.content, c.metadata FROM ` + t + ` c
			JOIN LATERAL (SELECT p.cid, sum(` + share + `) AS score, count(*) FILTER (WHERE ` + isKW + `) AS nkw
				FROM unnest(` + terms + `, ` + idfs + `) AS q(term, w)
				JOIN ` + kw + ` p ON p.term = q.term AND p.cid = ` + pgvecCIDSQL("c.id") + `
				GROUP BY p.cid) ayd_t ON true
			WHERE ayd_t.nkw > 0` + filter + `
			ORDER BY ` + order + ` LIMIT $2`
	}

	// The prefix and keyword stages find their best chunks with the
	// threshold algorithm (pgvecTopK) instead of scoring every chunk they
	// match, unless a filter keeps few chunks: those the stages' SQL
	// scores directly.
	var prefixTop, keywordTop func(context.Context, int) ([]*ai.Document, error)
	prefixes := keywordPatterns(plan.prefixes)
	useTopK := len(sc.terms) > 0 && (all || len(bp.phrases) == 0)
	if useTopK && filter != "" {
		few, err := s.filterKeepsFew(ctx, extraWhere, extraArgs)
		if err != nil {
			return nil, fmt.Errorf("keyword search sql: %w", err)
		}
		useTopK = !few
	}
	if useTopK {
		tier, unseen := pgvecKeywordTiers(sc, len(bp.keywords))
		// Without a filter the stage's SQL scores every posting from the
		// impact index alone: cheap enough to take over early.
		keywordTop = (&pgvecTopK{s: s, sc: sc, filter: extraWhere, filterArgs: extraArgs, maskTier: tier, unseenTier: unseen, cheapFull: filter == ""}).run
		if all && len(prefixes) > 0 {
			live, most, err := s.livePatterns(ctx, prefixes)
			if err != nil {
				return nil, fmt.Errorf("keyword search sql: %w", err)
			}
			// Patterns no chunk matches count for none: without them the
			// stage ranks alike, and a chunk not seen yet matches at most
			// most of them.
			prefixes = live
			prefixTop = s.prefixTopK(sc, live, most, extraWhere, extraArgs).run
		}
	}
	scoreArgs := []any{sc.terms, sc.idfs, sc.avg}
	args := func(term any, more ...any) []any {
		return append(append(append([]any{term, nil}, extraArgs...), scoreArgs...), more...)
	}
	term := pgvecStage{"keyword", termQuery, args(sc.keywords, len(bp.keywords)), len(sc.keywords) == 0, keywordTop}
	if len(bp.phrases) > 0 {
		// The phrase points need the chunks' texts: the ranker in Go.
		term = pgvecStage{name: "keyword", top: func(ctx context.Context, n int) ([]*ai.Document, error) {
			ix := s.keywordIndex(sc, extraWhere, extraArgs)
			return rankKeywords(ctx, ix, bp, n)
		}}
	}
	if !all {
		// SearchText: the rules after the cut reorder the best
		// listRankTop, as rankKeywords does (which the phrase path runs,
		// rules included).
		most := maxResults
		if most > 0 && most <= keywordReweighTop {
			most = keywordReweighTop + 1
		}
		docs, err := s.runStages(ctx, []pgvecStage{term}, most)
		if err != nil {
			return nil, err
		}
		if len(bp.phrases) == 0 {
			// The rules after the cut, as rankKeywords runs them.
			ix := s.keywordIndex(sc, extraWhere, extraArgs)
			ranks, pairs := pgvecDocRanks(bp, sc, docs)
			if err := reweighKeywordDocs(ctx, ix, bp, docs, ranks, pairs); err != nil {
				return nil, fmt.Errorf("keyword search sql: %w", err)
			}
			if docs, err = listsLast(ctx, ix, bp, docs); err != nil {
				return nil, fmt.Errorf("keyword search sql: %w", err)
			}
		}
		if maxResults > 0 && len(docs) > maxResults {
			docs = docs[:maxResults]
		}
		return docs, nil
	}
	stages := []pgvecStage{
		{"phrase", phraseQuery, args(keywordPatterns(plan.phrases), keywordPatterns(keywordLongestWords(plan.phrases)), keywordPatterns(phraseWords)), len(plan.phrases) == 0, nil},
		{"prefix", likeQuery, args(prefixes), len(prefixes) == 0, prefixTop},
		term,
		{"substring", likeQuery, args(keywordPatterns(plan.keywords)), len(plan.keywords) == 0, nil},
	}
	if len(plan.phrases) > 0 || len(prefixes) > 0 || len(bp.phrases) > 0 {
		return s.runStages(ctx, stages, maxResults)
	}
	// The term stage leads: the rules after the cut reorder its best, as
	// SearchText's (the substring stage's chunks, without a keyword
	// term, stay after them: pgvecDocRanks).
	most := maxResults
	if most > 0 && most <= keywordReweighTop {
		most = keywordReweighTop + 1
	}
	docs, err := s.runStages(ctx, stages, most)
	if err != nil {
		return nil, err
	}
	ix := s.keywordIndex(sc, extraWhere, extraArgs)
	ranks, pairs := pgvecDocRanks(bp, sc, docs)
	if err := reweighKeywordDocs(ctx, ix, bp, docs, ranks, pairs); err != nil {
		return nil, fmt.Errorf("keyword search sql: %w", err)
	}
	if maxResults > 0 && len(docs) > maxResults {
		docs = docs[:maxResults]
	}
	return docs, nil
}

// pgvecScoring is what the stages of keywordSearchTerms score with: the
// query's terms that have postings (keywords, phrase words, heading pairs,
// at most bm25MaxTerms),
// their IDFs and the average chunk length; and the keyword terms among
// them.
type pgvecScoring struct {
	terms    []string
	idfs     []float64
	postings int64   // the scored terms' postings in all
	dfs      []int64 // each scored term's postings
	avg      float64
	n        int   // the chunk count
	minLen   int64 // the shortest chunk length (0 when unknown)
	keywords []string
	known    map[string]int // the document frequency of every term read, 0 included
}

// keywordIndex returns the one keyword ranker's view of the store's
// postings for a search scored by sc (its statistics answer docFreqs for
// the terms they read), the chunks limited by where and args.
func (s *PgvecStore) keywordIndex(sc pgvecScoring, where string, args []any) *pgvecKeywordIndex {
	return &pgvecKeywordIndex{s: s, n: sc.n, avg: sc.avg, where: where, args: args, known: sc.known}
}

// keepStopWords decides which stop-listed words of bp stay
// (bm25Plan.keepStopWords) from the chunk count and their document
// frequencies in the posting table's statistics (one query).
func (s *PgvecStore) keepStopWords(ctx context.Context, bp *bm25Plan) error {
	if len(bp.stops) == 0 {
		return nil
	}
	stops := bp.statTerms() // keepStopWords empties the plan's list
	dfs, err := s.docFreqs(ctx, append([]string{""}, stops...))
	if err != nil {
		return fmt.Errorf("read stop word frequencies: %w", err)
	}
	bp.keepStopWords(dfs[0], func(t string) int { return dfs[1+slices.Index(stops, t)] })
	return nil
}

// termScoring reads the chunk count, their summed length and the
// document frequencies of the plan's terms (one query, summing the
// frequency deltas).
func (s *PgvecStore) termScoring(ctx context.Context, bp bm25Plan) (pgvecScoring, error) {
	var sc pgvecScoring
	cand := []string{""} // the empty term: chunk count and summed length
	kwSet := make(map[string]bool)
	for _, t := range bp.keywords {
		kwSet[t] = true
		cand = append(cand, t)
	}
	for _, ts := range bp.phraseTerms {
		for _, t := range ts {
			if !slices.Contains(cand, t) {
				cand = append(cand, t)
			}
		}
	}
	for _, t := range slices.Concat(bp.pairs, bp.optional) { // heading pairs and optional terms: scored, in no stage
		if !slices.Contains(cand, t) {
			cand = append(cand, t)
		}
	}
	// The shortest chunk (the empty term's postings, through the index of
	// schema version 6) tightens the threshold search's bound.
	rows, err := s.readPool(ctx).Query(ctx, `SELECT u.t, coalesce(sum(d.df), 0), coalesce(sum(d.len), 0),
			coalesce((SELECT min(k.len) FROM `+pgvecIdent(s.names.kw)+` k WHERE k.term = ''), 0)::bigint
		FROM unnest($1::text[]) AS u(t) LEFT JOIN `+pgvecIdent(s.names.kwDF)+` d ON d.term = u.t GROUP BY u.t`, cand)
	if err != nil {
		return sc, fmt.Errorf("read term frequencies: %w", err)
	}
	df := make(map[string]int64, len(cand))
	sc.known = make(map[string]int, len(cand))
	var n, total int64
	for rows.Next() {
		var t string
		var f, l int64
		if err := rows.Scan(&t, &f, &l, &sc.minLen); err != nil {
			rows.Close()
			return sc, fmt.Errorf("read term frequencies: %w", err)
		}
		if t == "" {
			n, total = f, l
		}
		df[t] = f
		sc.known[t] = int(f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return sc, fmt.Errorf("read term frequencies: %w", err)
	}
	sc.avg, sc.n = 1, int(n)
	if n > 0 && total > 0 {
		sc.avg = float64(total) / float64(n)
	}
	sc.terms, sc.idfs = []string{}, []float64{}
	for _, t := range cand[1:] {
		if df[t] <= 0 || len(sc.terms) == bm25MaxTerms {
			continue
		}
		sc.terms = append(sc.terms, t)
		sc.idfs = append(sc.idfs, bm25IDF(int(n), int(df[t])))
		sc.postings += df[t]
		sc.dfs = append(sc.dfs, df[t])
		if kwSet[t] {
			sc.keywords = append(sc.keywords, t)
		}
	}
	return sc, nil
}

// pgvecFewRows is the number of chunks below which a filtered keyword
// search scores the chunks the filter keeps instead of running the
// threshold search over all postings (a variable for the tests).
var pgvecFewRows = 5000

// filterKeepsFew reports whether fewer than pgvecFewRows chunks pass the
// app's filter (placeholders from $3; counting stops at the bound).
func (s *PgvecStore) filterKeepsFew(ctx context.Context, where string, args []any) (bool, error) {
	var n int64
	err := s.readPool(ctx).QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+pgvecIdent(s.names.table)+
		` WHERE (`+where+`) LIMIT $1::bigint + 0 * $2::bigint) AS ayd_f`, append([]any{pgvecFewRows, 0}, args...)...).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("count filtered chunks: %w", err)
	}
	return n < int64(pgvecFewRows), nil
}

// pgvecProbeRows is how many chunks livePatterns reads in table order
// before it asks the trigram index.
const pgvecProbeRows = "200"

// livePatterns returns the ILIKE patterns some chunk matches, and how
// many of them one chunk can match at most: all of them when some chunk
// matches all, else one fewer (a bound, not counted further). The trigram
// index answers both.
func (s *PgvecStore) livePatterns(ctx context.Context, patterns []string) ([]string, int, error) {
	t := pgvecIdent(s.names.table)
	var live []string
	// A common pattern is in one of the first rows (a short sequential
	// read), a rare one left to the trigram index, which for a common
	// pattern would collect every match first.
	if err := s.readPool(ctx).QueryRow(ctx, `SELECT coalesce(array_agg(ayd_p.pat ORDER BY ayd_p.o), '{}') FROM unnest($1::text[]) WITH ORDINALITY AS ayd_p(pat, o)
		WHERE EXISTS (SELECT 1 FROM (SELECT content FROM `+t+` LIMIT `+pgvecProbeRows+`) c WHERE c.content ILIKE ayd_p.pat)
			OR EXISTS (SELECT 1 FROM `+t+` c WHERE c.content ILIKE ayd_p.pat)`, patterns).Scan(&live); err != nil {
		return nil, 0, fmt.Errorf("match prefixes: %w", err)
	}
	most := len(live)
	if most > 1 {
		var all bool
		if err := s.readPool(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM (SELECT content FROM `+t+` LIMIT `+pgvecProbeRows+`) c WHERE c.content ILIKE ALL($1::text[]))
			OR EXISTS (SELECT 1 FROM `+t+` c WHERE c.content ILIKE ALL($1::text[]))`, live).Scan(&all); err != nil {
			return nil, 0, fmt.Errorf("match prefixes: %w", err)
		}
		if !all {
			most--
		}
	}
	return live, most, nil
}

// prefixTopK returns the threshold search of the prefix stage: a chunk's
// tier is the number of patterns its content matches (ILIKE), read with
// the chunk (0 when it fails filter); a chunk not seen yet may match most
// of them; chunks matching without any scored term come from an ILIKE
// query at the end.
func (s *PgvecStore) prefixTopK(sc pgvecScoring, patterns []string, most int, filter string, filterArgs []any) *pgvecTopK {
	t := pgvecIdent(s.names.table)
	where := ""
	if filter != "" {
		where = " AND (" + filter + ")"
	}
	termsArg := fmt.Sprintf("$%d::text[]", 3+len(filterArgs))
	sweep := func(ctx context.Context, k int) ([]pgvecCand, error) {
		args := append(append([]any{patterns, k}, filterArgs...), sc.terms)
		rows, err := s.readPool(ctx).Query(ctx, `SELECT c.id, (SELECT count(*) FROM unnest($1::text[]) AS ayd_p(pat) WHERE c.content ILIKE ayd_p.pat) AS tier
			FROM `+t+` c
			WHERE c.content ILIKE ANY($1::text[]) AND `+pgvecCIDSQL("c.id")+` IS NOT NULL`+where+`
			AND NOT EXISTS (SELECT 1 FROM `+pgvecIdent(s.names.kw)+` p WHERE p.cid = `+pgvecCIDSQL("c.id")+` AND p.term = ANY(`+termsArg+`))
			ORDER BY tier DESC, c.id LIMIT $2::bigint`, args...)
		if err != nil {
			return nil, fmt.Errorf("match prefixes: %w", err)
		}
		m, err := pgvecScanTiers(rows)
		if err != nil {
			return nil, err
		}
		out := make([]pgvecCand, 0, len(m))
		for cid, tier := range m {
			out = append(out, pgvecCand{cid: cid, tier: tier})
		}
		return out, nil
	}
	x := &pgvecTopK{
		s: s, sc: sc,
		filter: filter, filterArgs: filterArgs,
		tierArgs:   []any{patterns},
		unseenTier: func([]bool) int { return most },
		sweep:      sweep,
		cheapFull:  true,
	}
	x.full = func(ctx context.Context, k int) ([]pgvecCand, error) {
		return s.prefixFull(ctx, sc, patterns, most, filter, filterArgs, sweep, k)
	}
	x.tierSQL = fmt.Sprintf(`SELECT count(*) FROM unnest($%d::text[]) AS ayd_p(pat) WHERE c.content ILIKE ayd_p.pat`, x.tierParam())
	return x
}

// pgvecScanTiers reads (id, tier) rows into a map by posting key; IDs the
// store did not make are skipped.
func pgvecScanTiers(rows pgx.Rows) (map[[16]byte]int, error) {
	defer rows.Close()
	out := make(map[[16]byte]int)
	for rows.Next() {
		var id string
		var tier int64
		if err := rows.Scan(&id, &tier); err != nil {
			return nil, err
		}
		if u, ok := pgvecChunkUUID(id); ok && tier > 0 {
			out[u] = int(tier)
		}
	}
	return out, rows.Err()
}
