package engine

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// KeywordQueryStats describe how specific a question's keyword query is in
// one index: the index's chunk count and, for each keyword term SearchText
// would search (after the question stop words and the stop rule of
// docs/retrieval.md), the number of chunks holding it. Search weights its
// fusion by them (FusionOptions) and reports them (SearchReport.Keywords).
type KeywordQueryStats struct {
	// Chunks is the number of chunks in the index.
	Chunks int
	// Phrases is the number of quoted phrases of the query.
	Phrases int
	// StopWords is the number of distinct question stop words of the
	// query outside its quotes ("how", "do", "is"): what the keyword
	// query leaves out, or keeps when nothing else is left.
	StopWords int
	// Terms are the query's keyword terms in query order, each once, and
	// DocFreqs their document frequencies: DocFreqs[i] is the number of
	// chunks holding Terms[i] (0: none).
	Terms    []string
	DocFreqs []int
	// Specificity is how much the terms single out chunks of the index:
	// the sum of their IDF (BM25's) divided by the IDF of a term held by
	// one chunk. One rare term gives about 1, a term held by half the
	// chunks about 0.1, no term found 0. FusionOptions.WeakSpecificity is
	// compared with it.
	Specificity float64
}

// keywordStatser is a Searcher that reports the KeywordQueryStats of a
// query in its index. SQLiteStore, LocalvecStore and PgvecStore implement
// it with the statistics their keyword ranking uses, so every store gives
// the same stats for the same chunks.
type keywordStatser interface {
	// keywordQueryStats analyses query as SearchText does and returns
	// its statistics. Safe for concurrent use.
	keywordQueryStats(ctx context.Context, query string) (KeywordQueryStats, error)
}

// The ready-made stores report keyword statistics.
var (
	_ keywordStatser = (*SQLiteStore)(nil)
	_ keywordStatser = (*LocalvecStore)(nil)
	_ keywordStatser = (*PgvecStore)(nil)
)

// queryStopWords returns the number of distinct words of query outside
// its quoted phrases that stopWords holds (word splitting does not depend
// on the analyzer's language).
func queryStopWords(an *textAnalyzer, query string, stopWords map[string]bool) int {
	_, rest := splitQuoted(query)
	seen := make(map[string]bool)
	an.tokenize(rest, func(word, _ string, _ bool) {
		if stopWords[word] {
			seen[word] = true
		}
	})
	return len(seen)
}

// mayBeWeak reports whether f can count question's keyword query as weak
// whatever the index holds (FusionOptions.weak needs no quoted phrase and
// enough stop words), so Search asks the store for statistics only then.
func (f FusionOptions) mayBeWeak(question string) bool {
	f = f.withDefaults()
	if f.WeakVectorWeight <= 0 {
		return false
	}
	if phrases, _ := splitQuoted(question); len(phrases) > 0 {
		return false
	}
	return queryStopWords(localvecDefaultAnalyzer, question, searchStopWords) >= f.WeakStopWords
}

// bm25PlanStats returns the stats of a plan whose stop words are decided
// (keepStopWords), of a query with stops stop-listed words (those of a
// language the index does not hold do not count), with n chunks and df
// giving a term's frequency.
func bm25PlanStats(p bm25Plan, stops, n int, df func(term string) int) KeywordQueryStats {
	st := KeywordQueryStats{Chunks: n, Phrases: len(p.phrases), StopWords: stops - p.freed}
	for _, t := range p.keywords {
		if !slices.Contains(st.Terms, t) {
			st.Terms = append(st.Terms, t)
			st.DocFreqs = append(st.DocFreqs, df(t))
		}
	}
	st.Specificity = st.specificity()
	return st
}

// keywordQueryStats implements keywordStatser from the in-memory index.
func (s *LocalvecStore) keywordQueryStats(ctx context.Context, query string) (KeywordQueryStats, error) {
	if err := s.refreshForRead(); err != nil {
		return KeywordQueryStats{}, fmt.Errorf("localvec keyword stats: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return KeywordQueryStats{}, fmt.Errorf("localvec keyword stats: %w", ErrStoreClosed)
	}
	if len(s.rows.ids) == 0 {
		return KeywordQueryStats{}, nil
	}
	x := s.keywordIndex()
	p := newBM25Plan(x.an, query, searchStopWords)
	stops := queryStopWords(x.an, query, searchStopWords)
	p.keepStopWords(x.live(), x.docFreq)
	return bm25PlanStats(p, stops, x.live(), x.docFreq), nil
}

// keywordQueryStats implements keywordStatser from the FTS5 index, in one
// read snapshot.
func (s *SQLiteStore) keywordQueryStats(ctx context.Context, query string) (KeywordQueryStats, error) {
	if err := s.checkOpen("keyword stats"); err != nil {
		return KeywordQueryStats{}, err
	}
	an, err := s.keywordAnalyzer(ctx)
	if err != nil {
		return KeywordQueryStats{}, fmt.Errorf("sqlite keyword stats: %w", err)
	}
	p := newBM25Plan(an, query, searchStopWords)
	stops := queryStopWords(an, query, searchStopWords)
	var st KeywordQueryStats
	err = s.readTx(ctx, func(conn *sql.Conn) error {
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
			return fmt.Errorf("count chunks: %w", err)
		}
		var dfErr error
		cache := map[string]int{}
		df := func(t string) int {
			if v, ok := cache[t]; ok {
				return v
			}
			v, err := sqliteDocFreq(ctx, conn, t)
			if err != nil && dfErr == nil {
				dfErr = err
			}
			cache[t] = v
			return v
		}
		p.keepStopWords(n, df)
		st = bm25PlanStats(p, stops, n, df)
		return dfErr
	})
	if err != nil {
		return KeywordQueryStats{}, fmt.Errorf("sqlite keyword stats: %w", err)
	}
	return st, nil
}

// keywordQueryStats implements keywordStatser from the posting table's
// statistics (one query for the stop rule, one for the keywords). A store
// on a custom text search configuration (not one of the stemmed languages) ranks by
// tsvector and has no term statistics: it returns zero stats.
func (s *PgvecStore) keywordQueryStats(ctx context.Context, query string) (KeywordQueryStats, error) {
	if err := s.checkOpen("keyword stats"); err != nil {
		return KeywordQueryStats{}, err
	}
	return pgvecRead(ctx, s, func(ctx context.Context) (KeywordQueryStats, error) {
		if err := s.refreshLang(ctx); err != nil {
			return KeywordQueryStats{}, fmt.Errorf("pgvector keyword stats: %w", err)
		}
		an := s.curLang().an
		if an == nil {
			return KeywordQueryStats{}, nil
		}
		return s.keywordQueryStatsOn(ctx, an, query)
	})
}

// keywordQueryStatsOn is keywordQueryStats on the pool readPool(ctx) gives.
func (s *PgvecStore) keywordQueryStatsOn(ctx context.Context, an *textAnalyzer, query string) (KeywordQueryStats, error) {
	p := newBM25Plan(an, query, searchStopWords)
	stops := queryStopWords(an, query, searchStopWords)
	if err := s.keepStopWords(ctx, &p); err != nil {
		return KeywordQueryStats{}, fmt.Errorf("pgvector keyword stats: %w", err)
	}
	cand := append([]string{""}, p.keywords...)
	rows, err := s.readPool(ctx).Query(ctx, `SELECT u.t, coalesce(sum(d.df), 0)
		FROM unnest($1::text[]) AS u(t) LEFT JOIN `+pgvecIdent(s.names.kwDF)+` d ON d.term = u.t GROUP BY u.t`, cand)
	if err != nil {
		return KeywordQueryStats{}, fmt.Errorf("pgvector keyword stats: %w", err)
	}
	df := make(map[string]int, len(cand))
	for rows.Next() {
		var t string
		var f int64
		if err := rows.Scan(&t, &f); err != nil {
			rows.Close()
			return KeywordQueryStats{}, fmt.Errorf("pgvector keyword stats: %w", err)
		}
		df[t] = int(f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return KeywordQueryStats{}, fmt.Errorf("pgvector keyword stats: %w", err)
	}
	return bm25PlanStats(p, stops, df[""], func(t string) int { return df[t] }), nil
}
