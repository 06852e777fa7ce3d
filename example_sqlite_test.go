package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/genkit"

	engine "github.com/dbis-ilm/askyourdocs"
)

func ExampleNewSQLiteStore() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	embedded := 0
	emb := defineWordEmbedder(g, &embedded)

	dir, err := os.MkdirTemp("", "askyourdocs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := engine.NewSQLiteStore(ctx, g, emb, filepath.Join(dir, "docs.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	pages := []pageSource{
		{"https://example.com/hours", "The library opens at nine and closes at six on weekdays."},
		{"https://example.com/parking", "Visitors park their cars behind the main building."},
	}
	for _, p := range pages {
		if _, _, err := engine.IndexSource(ctx, store, p, 1200, 150, nil); err != nil {
			log.Fatal(err)
		}
	}
	// Re-indexing unchanged content embeds and writes nothing.
	before := embedded
	if _, _, err := engine.IndexSource(ctx, store, pages[0], 1200, 150, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("embedded on re-index:", embedded-before)

	docs, err := store.SearchVector(ctx, "When does the library open?", 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(engine.DocText(docs[0]))

	hits, err := store.SearchText(ctx, "parking cars", 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hits[0].Metadata[engine.MetaURL])

	// Apps that read Genkit's localvec format get a file of their own.
	path, n, err := store.ExportLocalvec(ctx, dir, "docs")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(path), n)
	// Output:
	// embedded on re-index: 0
	// The library opens at nine and closes at six on weekdays.
	// https://example.com/parking
	// __db_docs.json 2
}
