package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotPgvecPool is returned (wrapped) by KeywordSearchSQL for a pool that
// was not created by NewPgvecStore, whose table it therefore cannot know.
var ErrNotPgvecPool = errors.New("pool was not created by NewPgvecStore")

// KeywordSearchSQL searches the chunk table of the PgvecStore whose Pool is
// pool for query, with the three-stage keyword strategy, and returns the
// matching chunks as documents (text and metadata).
//
// The table is the store's (see PgvecStore.Table): the pool created by
// NewPgvecStore carries it in its connection configuration, so an app that
// embeds *PgvecStore passes s.Pool. A pool from elsewhere gives an error
// wrapping ErrNotPgvecPool.
//
// The stages, each one query, merged in this order, deduplicated by text and
// capped at maxResults (no cap when maxResults <= 0):
//
//  1. quoted phrases of the query, as case-insensitive substrings of the
//     text with white space collapsed (ILIKE '%phrase%'); documents
//     matching more phrases first,
//     then (here and in every stage) those containing more keywords;
//  2. the 7-rune prefixes of keywords of 8 runes or more, as substrings
//     (bridging inflections a stemmer misses);
//  3. full-text search on the keywords (any of them) with the text search
//     configuration language, ranked by ts_rank;
//  4. the keywords as substrings, for words the full-text parser or
//     stemmer treats differently; documents containing more keywords first.
//
// Keywords are ExtractKeywords(query, stopWords) outside the quotes. A query
// of stop words or punctuation only returns no documents and no error; the
// LIKE metacharacters %, _ and \ and quotes match literally.
//
// language is a text search configuration name ("simple", "english",
// "german", ...; "" means the store's, see PgvecStore.TextSearchConfig). It
// must be a plain identifier (it is interpolated, as bind parameters cannot
// carry it) or KeywordSearchSQL returns an error; it should be the store's,
// or the full-text index cannot be used.
//
// Every query binds the search term (a pattern array or the keywords) as $1
// and the row limit as $2. extraWhere, when not "", is a SQL condition
// ANDed to every stage (for example "metadata->>'tag' = $3"), with
// placeholders from $3 bound to extraArgs (one more parameter, the keyword
// patterns, follows them); it can use the table's columns
// id, content, metadata, url and source. It must be the app's own fixed SQL,
// never user input.
func KeywordSearchSQL(ctx context.Context, pool *pgxpool.Pool, query string, maxResults int, language string, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	// No usable keyword or phrase: nothing to search, the pool is not
	// touched (not even checked), as in the original engine.
	if newKeywordPlan(query, stopWords).empty() {
		return nil, nil
	}
	if pool == nil {
		return nil, errors.New("keyword search sql: nil pool")
	}
	v, ok := pgvecPools.Load(pool)
	if !ok {
		return nil, fmt.Errorf("keyword search sql: %w", ErrNotPgvecPool)
	}
	s := v.(*PgvecStore)
	if language == "" {
		language = s.language
	}
	return s.keywordSearch(ctx, query, maxResults, language, stopWords, extraWhere, extraArgs)
}

// pgvecPools maps the pool of each open PgvecStore to the store, so that
// KeywordSearchSQL, which the spec gives a pool only, finds the store's
// table and full-text column; Close removes the entry. (The pool's own
// configuration stays the app's: its Tracer slot is PgvecOptions.Tracer.)
var pgvecPools sync.Map

// KeywordSearch is KeywordSearchSQL on this store, with the store's text
// search configuration.
func (s *PgvecStore) KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	if err := s.checkOpen("keyword search"); err != nil {
		return nil, err
	}
	return s.keywordSearch(ctx, query, maxResults, s.language, stopWords, extraWhere, extraArgs)
}

// keywordSearch runs the stages of KeywordSearchSQL on the store's table.
func (s *PgvecStore) keywordSearch(ctx context.Context, query string, maxResults int, language string, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	pool, table := s.Pool, s.names.table
	regconfig, err := pgvecRegconfig(language)
	if err != nil {
		return nil, fmt.Errorf("keyword search sql: %w", err)
	}
	if strings.TrimSpace(extraWhere) == "" && len(extraArgs) > 0 {
		return nil, fmt.Errorf("keyword search sql: %d extraArgs but no extraWhere to use them", len(extraArgs))
	}
	plan := newKeywordPlan(query, stopWords)
	if plan.empty() {
		return nil, nil
	}
	var limit any // NULL: no LIMIT
	if maxResults > 0 {
		limit = maxResults
	}
	filter := ""
	if strings.TrimSpace(extraWhere) != "" {
		filter = " AND (" + extraWhere + ")"
	}
	t := pgvecIdent(table)
	// The stored tsvector column serves the store's own configuration; any
	// other is computed per row (no index).
	tsv := "tsv"
	if language != s.language {
		tsv = `to_tsvector(` + regconfig + `, content)`
	}
	// Parameters after extraArgs: the keyword LIKE patterns, the keywords
	// as text (for the score), the table's name (for its row count) and,
	// in the phrase stage, the phrases' longest words.
	nArg := 3 + len(extraArgs)
	kw := fmt.Sprintf("$%d::text[]", nArg)
	kwText := fmt.Sprintf("$%d::text", nArg+1)
	tableName := fmt.Sprintf("$%d::text", nArg+2)
	// The BM25-style score: for each distinct lexeme of the keywords, its
	// BM25 inverse document frequency ln(1 + (N - df + 0.5) / (df + 0.5))
	// (df counted through the GIN index, N from the planner's statistics
	// or counted when there are none yet) times ts_rank_cd of the chunk for
	// that lexeme, whose normalisation 1 divides by 1 + log(chunk length).
	// Rare words weigh more, long chunks are not favoured for their length.
	idf := `ayd_idf AS MATERIALIZED (
			SELECT ayd_t.q, ln(1 + (ayd_n.n - ayd_t.df + 0.5) / (ayd_t.df + 0.5)) AS w
			FROM (SELECT ayd_l.q, (SELECT count(*) FROM ` + t + ` WHERE ` + tsv + ` @@ ayd_l.q) AS df
				FROM (SELECT DISTINCT quote_literal(ayd_x.lex)::tsquery AS q
					FROM unnest(tsvector_to_array(to_tsvector(` + regconfig + `, ` + kwText + `))) AS ayd_x(lex)) AS ayd_l OFFSET 0) AS ayd_t,
			(SELECT greatest(coalesce((SELECT CASE WHEN c.reltuples > 0 THEN c.reltuples END FROM pg_class c WHERE c.oid = to_regclass(` + tableName + `)),
				(SELECT count(*) FROM ` + t + `)), 1)::float8 AS n,
				cardinality(` + kw + `) AS ayd_keywords) AS ayd_n)`
	score := `(SELECT coalesce(sum(ayd_idf.w * ts_rank_cd(` + tsv + `, ayd_idf.q, 1)), 0) FROM ayd_idf)`
	likeOn := func(text string, byKeywords bool) string {
		order := ``
		if byKeywords {
			order = `(SELECT count(*) FROM unnest(` + kw + `) AS ayd_k(pat) WHERE content ILIKE ayd_k.pat) DESC, `
		}
		return `WITH ` + idf + ` SELECT content, metadata FROM ` + t +
			` WHERE ` + text + ` ILIKE ANY($1::text[])` + filter +
			` ORDER BY (SELECT count(*) FROM unnest($1::text[]) AS ayd_p(pat) WHERE ` + text + ` ILIKE ayd_p.pat) DESC, ` +
			order + score + ` DESC, id LIMIT $2`
	}
	likeQuery := likeOn("content", false)
	substringQuery := likeOn("content", true)
	// Phrases are matched with runs of white space in the text collapsed to
	// one space, as ExtractQuotedPhrases collapses them in the phrase.
	// The collapsed text cannot use the trigram index on content, so the
	// phrase stage first narrows the rows to those containing the longest
	// word of some phrase (as every match does), which the index can find.
	phraseQuery := likeOn(`regexp_replace(content, '\s+', ' ', 'g')`, false)
	phraseQuery = strings.Replace(phraseQuery, ` WHERE regexp_replace`,
		fmt.Sprintf(` WHERE content ILIKE ANY($%d::text[]) AND regexp_replace`, nArg+3), 1)
	ftsOn := func(tsquery string) string {
		return `WITH ` + idf + `, ayd_tsq AS (SELECT ` + tsquery + ` AS ayd_q)
		SELECT content, metadata FROM ` + t + `, ayd_tsq
		WHERE ` + tsv + ` @@ ayd_tsq.ayd_q` + filter + `
		ORDER BY ` + score + ` DESC, id LIMIT $2`
	}
	allQuery := ftsOn(`plainto_tsquery(` + regconfig + `, $1::text)`)
	anyQuery := ftsOn(`replace(plainto_tsquery(` + regconfig + `, $1::text)::text, '&', '|')::tsquery`)

	patterns := func(terms []string) []string {
		out := make([]string, len(terms))
		for i, s := range terms {
			out[i] = keywordLikePattern(s)
		}
		return out
	}
	type stage struct {
		name string
		sql  string
		term any
		skip bool
		// extra, when not nil, is bound after the keyword patterns.
		extra []string
	}
	keywordPatterns := patterns(plan.keywords)
	stages := []stage{
		{"phrase", phraseQuery, patterns(plan.phrases), len(plan.phrases) == 0, patterns(keywordLongestWords(plan.phrases))},
		{"prefix", likeQuery, patterns(plan.prefixes), len(plan.prefixes) == 0, nil},
		{"all-words", allQuery, strings.Join(plan.keywords, " "), len(plan.keywords) < 2, nil},
		{"any-word", anyQuery, strings.Join(plan.keywords, " "), len(plan.keywords) == 0, nil},
		{"substring", substringQuery, keywordPatterns, len(plan.keywords) == 0, nil},
	}
	var out []*ai.Document
	seen := make(map[string]bool)
	for _, st := range stages {
		if st.skip {
			continue
		}
		args := append(append([]any{st.term, limit}, extraArgs...), keywordPatterns, strings.Join(plan.keywords, " "), table)
		if st.extra != nil {
			args = append(args, st.extra)
		}
		rows, err := pool.Query(ctx, st.sql, args...)
		if err != nil {
			return nil, fmt.Errorf("keyword search sql: %s stage: %w", st.name, err)
		}
		docs, err := pgvecScanDocs(rows)
		if err != nil {
			return nil, fmt.Errorf("keyword search sql: %s stage: %w", st.name, err)
		}
		for _, d := range docs {
			text := DocText(d)
			if seen[text] {
				continue
			}
			seen[text] = true
			out = append(out, d)
			if maxResults > 0 && len(out) == maxResults {
				return out, nil
			}
		}
	}
	return out, nil
}

// keywordLongestWords returns the longest white-space-separated word of each
// phrase: a text containing the phrase (white space collapsed) contains that
// word as it is, so it is a filter the trigram index can serve.
func keywordLongestWords(phrases []string) []string {
	out := make([]string, 0, len(phrases))
	for _, p := range phrases {
		longest := ""
		for _, w := range strings.Fields(p) {
			if len(w) > len(longest) {
				longest = w
			}
		}
		out = append(out, longest)
	}
	return out
}

// pgvecTracer is the default query tracer of a PgvecStore's pool (see
// PgvecOptions.Tracer): it logs each query's duration and outcome at debug
// level.
type pgvecTracer struct {
	store string
}

type pgvecTraceStartKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (t *pgvecTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if !slog.Default().Enabled(ctx, slog.LevelDebug) {
		return ctx
	}
	return context.WithValue(ctx, pgvecTraceStartKey{}, time.Now())
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *pgvecTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	start, ok := ctx.Value(pgvecTraceStartKey{}).(time.Time)
	if !ok {
		return
	}
	slog.DebugContext(ctx, "pgvector store query", "store", t.store, "command", data.CommandTag.String(),
		"duration", time.Since(start), "ok", data.Err == nil)
}
