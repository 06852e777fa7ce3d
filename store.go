package engine

import (
	"context"

	"github.com/firebase/genkit/go/ai"
)

// VectorStore is the write side of a vector store: what IndexSource and
// IndexInBatches need. Stores that offer more (filtered retrieval, keyword
// search, source administration) still satisfy it as long as these four
// methods keep these exact signatures.
type VectorStore interface {
	Index(ctx context.Context, docs []*ai.Document) error
	DeleteByURL(ctx context.Context, url string) (int, error)
	DeleteBySource(ctx context.Context, sourceName string) (int, error)
	Close() error
}

// Source is one entry of a store's "what is indexed" listing: the chunks
// grouped by their "url" and "source" metadata values.
type Source struct {
	URL, Source string
	Chunks      int
}
