package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// keywordSearchTSV is KeywordSearchSQL ranked from the tsvector column: for
// a language other than the store's (storeConfig), or a store whose configuration has no
// textAnalyzer (a custom configuration), which therefore has no postings.
// The stages are those of KeywordSearchSQL; their score is, for each
// distinct lexeme of the keywords, its BM25 inverse document frequency
// times ts_rank_cd of the chunk for that lexeme (normalisation 1, divided
// by 1 + log(length)).
func (s *PgvecStore) keywordSearchTSV(ctx context.Context, plan keywordPlan, maxResults int, language, storeConfig string, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	table := s.names.table
	regconfig, err := pgvecRegconfig(language)
	if err != nil {
		return nil, fmt.Errorf("keyword search sql: %w", err)
	}
	filter := ""
	if strings.TrimSpace(extraWhere) != "" {
		filter = " AND (" + extraWhere + ")"
	}
	t := pgvecIdent(table)
	// The stored tsvector column serves the store's own configuration; any
	// other is computed per row (no index).
	tsv := "tsv"
	if language != storeConfig {
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

	kwArgs := []any{keywordPatterns(plan.keywords), strings.Join(plan.keywords, " "), table}
	args := func(term any, extra ...any) []any {
		a := append(append(append([]any{term, nil}, extraArgs...), kwArgs...), extra...)
		return a
	}
	keywords := strings.Join(plan.keywords, " ")
	return s.runStages(ctx, []pgvecStage{
		{"phrase", phraseQuery, args(keywordPatterns(plan.phrases), keywordPatterns(keywordLongestWords(plan.phrases))), len(plan.phrases) == 0, nil},
		{"prefix", likeQuery, args(keywordPatterns(plan.prefixes)), len(plan.prefixes) == 0, nil},
		{"all-words", allQuery, args(keywords), len(plan.keywords) < 2, nil},
		{"any-word", anyQuery, args(keywords), len(plan.keywords) == 0, nil},
		{"substring", substringQuery, args(keywordPatterns(plan.keywords)), len(plan.keywords) == 0, nil},
	}, maxResults)
}
