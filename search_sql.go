package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	tr, ok := pool.Config().ConnConfig.Tracer.(*pgvecTracer)
	if !ok {
		return nil, fmt.Errorf("keyword search sql: %w", ErrNotPgvecPool)
	}
	if language == "" {
		language = tr.language
	}
	return pgvecKeywordSearch(ctx, pool, tr.table, query, maxResults, language, stopWords, extraWhere, extraArgs)
}

// KeywordSearch is KeywordSearchSQL on this store, with the store's text
// search configuration.
func (s *PgvecStore) KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	if err := s.checkOpen("keyword search"); err != nil {
		return nil, err
	}
	return pgvecKeywordSearch(ctx, s.Pool, s.names.table, query, maxResults, s.language, stopWords, extraWhere, extraArgs)
}

// pgvecKeywordSearch runs the stages of KeywordSearchSQL on table.
func pgvecKeywordSearch(ctx context.Context, pool *pgxpool.Pool, table, query string, maxResults int, language string, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
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
	// Within a stage, documents containing more of the stage's terms come
	// first, then those containing more keywords: the keyword patterns are
	// bound after extraArgs.
	kw := fmt.Sprintf("$%d::text[]", 3+len(extraArgs))
	likeOn := func(text string) string {
		return `SELECT content, metadata FROM ` + t +
			` WHERE ` + text + ` ILIKE ANY($1::text[])` + filter +
			` ORDER BY (SELECT count(*) FROM unnest($1::text[]) AS ayd_p(pat) WHERE ` + text + ` ILIKE ayd_p.pat) DESC,
			(SELECT count(*) FROM unnest(` + kw + `) AS ayd_k(pat) WHERE content ILIKE ayd_k.pat) DESC, id LIMIT $2`
	}
	likeQuery := likeOn("content")
	// Phrases are matched with runs of white space in the text collapsed to
	// one space, as ExtractQuotedPhrases collapses them in the phrase.
	// The collapsed text cannot use the trigram index on content, so the
	// phrase stage first narrows the rows to those containing the longest
	// word of some phrase (as every match does), which the index can find.
	phraseQuery := likeOn(`regexp_replace(content, '\s+', ' ', 'g')`)
	phraseQuery = strings.Replace(phraseQuery, ` WHERE `,
		fmt.Sprintf(` WHERE content ILIKE ANY($%d::text[]) AND `, 4+len(extraArgs)), 1)
	tsvector := `to_tsvector(` + regconfig + `, content)`
	ftsQuery := `WITH ayd_tsq AS (SELECT replace(plainto_tsquery(` + regconfig + `, $1::text)::text, '&', '|')::tsquery AS ayd_q)
		SELECT content, metadata FROM ` + t + `, ayd_tsq
		WHERE ` + tsvector + ` @@ ayd_tsq.ayd_q` + filter + `
		ORDER BY ts_rank(` + tsvector + `, ayd_tsq.ayd_q) DESC,
			(SELECT count(*) FROM unnest(` + kw + `) AS ayd_k(pat) WHERE content ILIKE ayd_k.pat) DESC, id LIMIT $2`

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
		{"full-text", ftsQuery, strings.Join(plan.keywords, " "), len(plan.keywords) == 0, nil},
		{"substring", likeQuery, keywordPatterns, len(plan.keywords) == 0, nil},
	}
	var out []*ai.Document
	seen := make(map[string]bool)
	for _, st := range stages {
		if st.skip {
			continue
		}
		args := append(append([]any{st.term, limit}, extraArgs...), keywordPatterns)
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

// pgvecTracer is the query tracer of a PgvecStore's pool. It logs each
// query's duration and outcome at debug level, and it is how KeywordSearchSQL
// finds the store's table from the pool alone: the association lives in the
// pool's own configuration, with no package-level state.
type pgvecTracer struct {
	store, table, language string
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
