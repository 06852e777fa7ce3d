package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// KeywordSearchSQL searches the chunk table of the PgvecStore whose Pool is
// pool for query, with the staged keyword strategy (quoted phrases, long
// keywords' prefixes, terms, substrings; merged in that order, deduplicated
// by text, capped at maxResults, no cap when <= 0), and returns the matching
// chunks as documents (text and metadata). The stages and their ranking:
// docs/api-reference.md.
//
// The pool must be a store's Pool: the pool NewPgvecStore made carries the
// store in its connection configuration (its tracer). A pool from elsewhere
// gives an error wrapping ErrNotPgvecPool, a closed store's one wrapping
// ErrStoreClosed. A query of punctuation only returns nil, nil without
// touching the pool.
//
// language is a text search configuration name ("" means the store's,
// PgvecOptions.TextSearchConfig); it must be a plain identifier, as it is
// interpolated. Every query binds the search term as $1 and the row limit
// as $2; extraWhere, when not "", is the app's own fixed SQL condition ANDed
// to every stage, with placeholders from $3 bound to extraArgs (never user
// input). It blocks until the queries end; safe for concurrent use.
func KeywordSearchSQL(ctx context.Context, pool *pgxpool.Pool, query string, maxResults int, language string, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	// No usable keyword or phrase: nothing to search, the pool is not
	// touched (not even checked; docs/compat.md).
	if newKeywordPlan(query, stopWords).empty() {
		return nil, nil
	}
	if pool == nil {
		return nil, errors.New("keyword search sql: nil pool")
	}
	s := pgvecStoreOf(pool)
	if s == nil {
		return nil, fmt.Errorf("keyword search sql: %w", ErrNotPgvecPool)
	}
	if err := s.checkOpen("keyword search sql"); err != nil {
		return nil, err
	}
	return s.keywordSearch(ctx, query, maxResults, language, stopWords, extraWhere, extraArgs)
}

// KeywordSearch is KeywordSearchSQL on this store, with the store's text
// search configuration.
//
// Deprecated: Use SearchText, or KeywordSearchSQL for an SQL condition of
// your own.
func (s *PgvecStore) KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	if err := s.checkOpen("keyword search"); err != nil {
		return nil, err
	}
	return s.keywordSearch(ctx, query, maxResults, "", stopWords, extraWhere, extraArgs)
}

// keywordSearch runs KeywordSearchSQL on the store's table: ranked from the
// posting table when language is the store's ("" for it) and has a
// textAnalyzer, else from the tsvector column (keywordSearchTSV).
func (s *PgvecStore) keywordSearch(ctx context.Context, query string, maxResults int, language string, stopWords map[string]bool, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	return s.keywordStages(ctx, query, maxResults, language, stopWords, extraWhere, extraArgs, true)
}

// keywordStages is keywordSearch with KeywordSearchSQL's phrase, prefix
// and substring stages around the one keyword ranker (all), or the ranker
// alone, as SearchText has it.
func (s *PgvecStore) keywordStages(ctx context.Context, query string, maxResults int, language string, stopWords map[string]bool, extraWhere string, extraArgs []any, all bool) ([]*ai.Document, error) {
	if language != "" {
		if _, err := pgvecRegconfig(language); err != nil {
			return nil, fmt.Errorf("keyword search sql: %w", err)
		}
	}
	if strings.TrimSpace(extraWhere) == "" && len(extraArgs) > 0 {
		return nil, fmt.Errorf("keyword search sql: %d extraArgs but no extraWhere to use them", len(extraArgs))
	}
	plan := newKeywordPlan(query, stopWords)
	if plan.empty() {
		// Only stop-listed words: they are the query's content.
		if plan = newKeywordPlan(query, nil); plan.empty() {
			return nil, nil
		}
	}
	return pgvecRead(ctx, s, func(ctx context.Context) ([]*ai.Document, error) {
		if err := s.refreshLang(ctx); err != nil {
			return nil, fmt.Errorf("keyword search sql: %w", err)
		}
		l := s.curLang()
		if language == "" {
			language = l.name
		}
		if l.an != nil && pgvecSameConfig(language, l.name) {
			return s.keywordSearchTerms(ctx, l.an, query, plan, maxResults, stopWords, extraWhere, extraArgs, all)
		}
		return s.keywordSearchTSV(ctx, plan, maxResults, language, l.name, extraWhere, extraArgs)
	})
}

// pgvecSameConfig reports whether two text search configuration names name
// the same configuration (Postgres folds unquoted names to lower case and
// finds the built-in ones in pg_catalog).
func pgvecSameConfig(a, b string) bool {
	norm := func(s string) string { return strings.TrimPrefix(strings.ToLower(s), "pg_catalog.") }
	return norm(a) == norm(b)
}

// pgvecStage is one query of a keyword search: its name (for errors), SQL
// and arguments; skip leaves it out. top, when not nil, finds the stage's
// best n documents in place of the SQL, which then serves unlimited
// calls only; a stage without SQL calls top with n 0 (no limit) too.
type pgvecStage struct {
	name string
	sql  string
	args []any
	skip bool
	top  func(ctx context.Context, n int) ([]*ai.Document, error)
}

// runStages runs stages in order and merges their documents, each text
// once, up to maxResults (all when <= 0). Each stage's SQL binds its row
// limit as $2 (args[1] is overwritten): room for the documents still
// wanted plus those earlier stages returned (a stage may return them
// again), and no limit when a stage fills that room without filling the
// result with new texts.
func (s *PgvecStore) runStages(ctx context.Context, stages []pgvecStage, maxResults int) ([]*ai.Document, error) {
	var out []*ai.Document
	seen := make(map[string]bool)
	for _, st := range stages {
		if st.skip {
			continue
		}
		limit := any(nil) // NULL: no LIMIT
		if maxResults > 0 {
			limit = 2*(maxResults-len(out)) + len(seen)
		}
		for {
			var docs []*ai.Document
			var err error
			useSQL := true
			if n, ok := limit.(int); ok && st.top != nil {
				docs, err = st.top(ctx, n)
				useSQL = errors.Is(err, errTopKCostly)
			} else if st.sql == "" {
				docs, err = st.top(ctx, 0)
				useSQL = false
			}
			if useSQL {
				st.args[1] = limit
				var rows pgx.Rows
				rows, err = s.readPool(ctx).Query(ctx, st.sql, st.args...)
				if err == nil {
					docs, err = pgvecScanDocs(rows)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("keyword search sql: %s stage: %w", st.name, err)
			}
			before := len(out)
			var full bool
			if out, full = appendDistinct(out, seen, docs, maxResults); full {
				return out, nil
			}
			if n, ok := limit.(int); !ok || len(docs) < n {
				break
			}
			// Duplicates filled the room: this stage again, unlimited.
			out, seen = out[:before], pgvecForget(seen, out[before:])
			limit = nil
		}
	}
	return out, nil
}

// pgvecForget removes the texts of docs from seen and returns it.
func pgvecForget(seen map[string]bool, docs []*ai.Document) map[string]bool {
	for _, d := range docs {
		delete(seen, DocText(d))
	}
	return seen
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
