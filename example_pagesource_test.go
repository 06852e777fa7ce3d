package engine_test

import (
	"context"

	"github.com/firebase/genkit/go/ai"

	engine "github.com/dbis-ilm/askyourdocs"
)

// pageSource is an IngestSource for one short web page whose text is known.
type pageSource struct{ url, text string }

// Name names the source in errors and logs.
func (p pageSource) Name() string { return p.url }

// Fetch returns the page's paragraphs (one here; a reader gives many).
func (p pageSource) Fetch(ctx context.Context) ([]engine.Paragraph, error) {
	return []engine.Paragraph{{Text: p.text}}, nil
}

// Documents turns the chunks into documents with the metadata the stores
// delete and group by (MetaURL here; MetaSource works too).
func (p pageSource) Documents(chunks []engine.Chunk) []*ai.Document {
	docs := make([]*ai.Document, len(chunks))
	for i, c := range chunks {
		docs[i] = ai.DocumentFromText(c.Text, map[string]any{engine.MetaURL: p.url})
	}
	return docs
}

// DeleteStale deletes the page's old chunks by the same metadata key.
func (p pageSource) DeleteStale(ctx context.Context, store engine.VectorStore) (int, error) {
	return store.DeleteByURL(ctx, p.url)
}
