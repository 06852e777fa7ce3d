package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

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
	// Language is the language IndexSource detected in the source: the
	// "language" metadata ("en", "de", "ja", ...; "" when none was told)
	// of one of its chunks, the first written where the store keeps an
	// order. A document's chunks share its language, unless a chunk is
	// written in another script.
	Language string
}

// Errors of the stores; callers test them with errors.Is.
var (
	// ErrStoreClosed is returned (wrapped) by every method of a store after its
	// Close has been called.
	ErrStoreClosed = errors.New("store is closed")

	// ErrDimensionMismatch is returned (wrapped) when an embedder's vectors do not
	// have the dimension of the vectors already in a store. Nothing is written
	// when it is returned.
	ErrDimensionMismatch = errors.New("embedding dimension mismatch")

	// ErrEmptyDocument is returned (wrapped) by IndexInBatches and the stores'
	// Index methods for a nil document or one without text. Nothing is written
	// when it is returned.
	ErrEmptyDocument = errors.New("document has no text")

	// ErrIndexUnrecorded is returned (wrapped) by NewPgvecStoreWithOptions
	// with embedding dimension 0 (the dimension the store records) for a
	// store that does not exist: it records none, and a new store needs
	// one.
	ErrIndexUnrecorded = errors.New("index has no record")

	// ErrUnknownLanguage is wrapped by the error of a store asked for a keyword
	// language it has no stemmer for (SQLiteOptions.KeywordLanguage,
	// LocalvecOptions.KeywordLanguage). The languages are "simple" (no
	// stemming) and arabic, danish, dutch, english, finnish, french, german,
	// hungarian, irish, italian, norwegian, portuguese, romanian, russian,
	// spanish, swedish, tamil and turkish; the message lists them too.
	ErrUnknownLanguage = errors.New("unknown text search language")

	// ErrNotPgvecPool is returned (wrapped) by KeywordSearchSQL for a pool that
	// was not created by NewPgvecStoreWithOptions, whose table it therefore
	// cannot know.
	ErrNotPgvecPool = errors.New("pool was not created by NewPgvecStore")
)

// indexBatchSize is the number of documents IndexInBatches passes to one
// Index call (and so, for the ready-made stores, to one Embed call).
const indexBatchSize = 100

// wholeStoreBulker is a store whose every write rewrites the whole store
// (LocalvecStore rewrites its file): IndexInBatches runs its batches in
// one Bulk run, through the run's writer, so that the store persists once
// per run instead of once per batch: O(total) bytes written instead of
// O(batches x size).
type wholeStoreBulker interface {
	VectorStore
	Bulk(ctx context.Context, fn func(VectorStore) error) error
	rewritesWholeStore()
}

// IndexInBatches indexes docs into store in batches of 100 documents, one
// Index call per batch, checking ctx between batches and calling progress
// (which may be nil) with the number of documents done and the total after
// each batch.
//
// Every document must have text: a nil document or one whose text is empty
// or blank gives an error wrapping ErrEmptyDocument before anything is
// written. An empty docs slice is not an error and writes nothing.
//
// On error the batches already indexed stay in the store; IndexSource is the
// caller that removes them again. For stores that persist the whole store on
// each Index call (LocalvecStore), IndexInBatches defers persisting until the
// last batch is done, so a run writes the file once, not once per batch.
func IndexInBatches(ctx context.Context, store VectorStore, docs []*ai.Document, progress func(done, total int)) (err error) {
	if store == nil {
		return errors.New("index in batches: store is nil")
	}
	for i, d := range docs {
		if d == nil || strings.TrimSpace(DocText(d)) == "" {
			return fmt.Errorf("index in batches: document %d: %w", i, ErrEmptyDocument)
		}
	}
	if len(docs) == 0 {
		return nil
	}
	if ws, ok := store.(wholeStoreBulker); ok {
		return ws.Bulk(ctx, func(b VectorStore) error { return indexBatches(ctx, b, docs, progress) })
	}
	return indexBatches(ctx, store, docs, progress)
}

// indexBatches is IndexInBatches's loop over the batches of docs.
func indexBatches(ctx context.Context, store VectorStore, docs []*ai.Document, progress func(done, total int)) error {
	for start := 0; start < len(docs); start += indexBatchSize {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("index in batches: stopped after %d of %d documents: %w", start, len(docs), err)
		}
		end := min(start+indexBatchSize, len(docs))
		if err := store.Index(ctx, docs[start:end]); err != nil {
			return fmt.Errorf("index in batches: documents %d-%d of %d: %w", start, end-1, len(docs), err)
		}
		if progress != nil {
			progress(end, len(docs))
		}
	}
	return nil
}

// embedChecked embeds docs with one Embed call and checks what came back:
// one vector per document, each non-empty, finite and of dimension dim (dim
// 0 accepts the first vector's dimension for all). Both stores embed
// through it, for indexing and for queries, so a misbehaving embedder gives
// the same clear error everywhere; a wrong dimension wraps
// ErrDimensionMismatch.
func embedChecked(ctx context.Context, emb ai.Embedder, docs []*ai.Document, dim int) ([][]float32, error) {
	resp, err := emb.Embed(ctx, &ai.EmbedRequest{Input: docs})
	if err != nil {
		return nil, fmt.Errorf("embed %d documents: %w", len(docs), err)
	}
	if resp == nil || len(resp.Embeddings) != len(docs) {
		n := 0
		if resp != nil {
			n = len(resp.Embeddings)
		}
		return nil, fmt.Errorf("embed %d documents: embedder returned %d vectors", len(docs), n)
	}
	out := make([][]float32, len(docs))
	for i, e := range resp.Embeddings {
		if e == nil || len(e.Embedding) == 0 {
			return nil, fmt.Errorf("embed: document %d: empty vector", i)
		}
		if dim == 0 {
			dim = len(e.Embedding)
		}
		if len(e.Embedding) != dim {
			return nil, fmt.Errorf("embed: document %d: %w: vector has %d dimensions, the store has %d", i, ErrDimensionMismatch, len(e.Embedding), dim)
		}
		for _, x := range e.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("embed: document %d: vector contains NaN or Inf", i)
			}
		}
		out[i] = e.Embedding
	}
	return out, nil
}
