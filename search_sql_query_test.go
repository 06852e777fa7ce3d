package engine

import (
	"context"
	"slices"
	"testing"
)

// TestSearchKeywordsMatchesKeywordSearchSQL checks that the KeywordQuery
// forms pass every field through: the same results as the positional call,
// the filter applied, and a closed store refused.
func TestSearchKeywordsMatchesKeywordSearchSQL(t *testing.T) {
	ctx := context.Background()
	s := searchSQLTestStore(t, nil)
	q := KeywordQuery{Query: "contract", MaxResults: 10, Language: "simple", Where: "metadata->>'tag' = $3 AND url <> $4", Args: []any{"legal", "copy"}}
	want, err := KeywordSearchSQL(ctx, s.Pool, q.Query, q.MaxResults, q.Language, nil, q.Where, q.Args)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the positional call found nothing: the test would compare empty results")
	}
	got, err := SearchKeywords(ctx, s.Pool, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pgTestTexts(got), pgTestTexts(want)) {
		t.Errorf("SearchKeywords = %q, want %q", pgTestTexts(got), pgTestTexts(want))
	}
	q.Language = "" // the store's configuration
	got, err = s.SearchKeywords(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pgTestTexts(got), pgTestTexts(want)) {
		t.Errorf("PgvecStore.SearchKeywords = %q, want %q", pgTestTexts(got), pgTestTexts(want))
	}
	q.MaxResults = 1
	if got, err := s.SearchKeywords(ctx, q); err != nil || len(got) != 1 {
		t.Errorf("MaxResults 1: %q, %v", pgTestTexts(got), err)
	}
	s.Close()
	if _, err := s.SearchKeywords(ctx, q); err == nil {
		t.Error("closed store: no error")
	}
}
