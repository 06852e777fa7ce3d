package engine

import (
	"context"
	"errors"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5/pgxpool"
)

// KeywordQuery is a keyword search of a PgvecStore as one value: the
// parameters of KeywordSearchSQL after the pool, for calls that would
// otherwise pass eight positional arguments. The zero value of every field
// but Query means what KeywordSearchSQL does with it.
//
// Deprecated: KeywordQuery only serves the deprecated SearchKeywords. Use
// (*PgvecStore).SearchText with a Filter, or KeywordSearchSQL for an SQL
// condition of your own.
type KeywordQuery struct {
	// Query is the user's search text: quoted phrases and keywords.
	Query string
	// MaxResults caps the documents returned (<= 0: no cap).
	MaxResults int
	// Language is the text search configuration; "" means the store's.
	Language string
	// StopWords are left out of the keywords (compared lower-case).
	StopWords map[string]bool
	// Where is an SQL condition ANDed to every stage, with placeholders
	// from $3 bound to Args. It must be the app's own fixed SQL, never user
	// input (see KeywordSearchSQL).
	Where string
	// Args are the values of Where's placeholders.
	Args []any
}

// SearchKeywords runs q against the table of the PgvecStore whose Pool is
// pool: KeywordSearchSQL with its parameters taken from q.
//
// Deprecated: Use KeywordSearchSQL.
func SearchKeywords(ctx context.Context, pool *pgxpool.Pool, q KeywordQuery) ([]*ai.Document, error) {
	return KeywordSearchSQL(ctx, pool, q.Query, q.MaxResults, q.Language, q.StopWords, q.Where, q.Args)
}

// SearchKeywords runs q against this store's table: KeywordSearchSQL with
// its parameters taken from q ("" Language: the store's).
//
// Deprecated: Use SearchText, whose Filter the store translates to SQL with
// bound parameters, or KeywordSearchSQL(ctx, s.Pool, …) for an SQL
// condition of your own.
func (s *PgvecStore) SearchKeywords(ctx context.Context, q KeywordQuery) ([]*ai.Document, error) {
	if s == nil {
		return nil, errors.New("keyword search: nil store")
	}
	if err := s.checkOpen("keyword search"); err != nil {
		return nil, err
	}
	return s.keywordSearch(ctx, q.Query, q.MaxResults, q.Language, q.StopWords, q.Where, q.Args)
}
