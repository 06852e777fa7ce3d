package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// This example needs a Postgres with pgvector (its DSN in DATABASE_URL) and
// an embedding model, so it has no // Output: and is compiled, not run.
func ExampleNewPgvecStore() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	var emb ai.Embedder // e.g. providers.Embedder(g, "ollama/mxbai-embed-large", 1024)

	store, err := askyourdocs.NewPgvecStoreWithOptions(ctx, g, "docs", emb, os.Getenv("DATABASE_URL"), 1024, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	// A changed embedding dimension was migrated on open (by default
	// every chunk is kept and re-embedded); the log says so.

	// Index through IndexSource (diffed: unchanged chunks are not embedded
	// again) or directly:
	err = askyourdocs.IndexInBatches(ctx, store, []*ai.Document{
		ai.DocumentFromText("Invoices are due within 30 days.", map[string]any{"url": "terms.pdf", "source": "terms"}),
	}, nil)
	if err != nil {
		log.Fatal(err)
	}

	// Vector search, keyword search (language "": the store's text search
	// configuration) and the "what is indexed" listing.
	docs, err := store.Retrieve(ctx, ai.DocumentFromText("when are invoices due?", nil), 5)
	if err != nil {
		log.Fatal(err)
	}
	hits, err := askyourdocs.KeywordSearchSQL(ctx, store.Pool, `"30 days" invoice`, 5, "", nil, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	sources, err := store.Sources(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(docs), len(hits), sources)
}
