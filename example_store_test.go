package engine_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"

	engine "github.com/dbis-ilm/askyourdocs"
)

// defineWordEmbedder defines a toy embedder hashing words into 64
// dimensions, and counts the texts it embeds.
func defineWordEmbedder(g *genkit.Genkit, embedded *int) ai.Embedder {
	return genkit.DefineEmbedder(g, "example/words", nil, func(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		resp := &ai.EmbedResponse{}
		for _, d := range req.Input {
			v := make([]float32, 64)
			for _, w := range strings.Fields(strings.ToLower(engine.DocText(d))) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(w, ".,?!")))
				v[h.Sum32()%64]++
			}
			resp.Embeddings = append(resp.Embeddings, &ai.Embedding{Embedding: v})
		}
		*embedded += len(req.Input)
		return resp, nil
	})
}

func ExampleIndexSource() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	embedded := 0
	emb := defineWordEmbedder(g, &embedded)

	dir, err := os.MkdirTemp("", "askyourdocs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := engine.NewLocalvecStoreWithOptions(ctx, g, "docs", emb, dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	pages := []pageSource{
		{"https://example.com/hours", "The library opens at nine and closes at six on weekdays."},
		{"https://example.com/parking", "Visitors park their cars behind the main building."},
	}
	for _, p := range pages {
		indexed, deleted, err := engine.IndexSource(ctx, store, p, 1200, 150, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d indexed, %d replaced\n", p.url, indexed, deleted)
	}

	// Re-indexing unchanged content embeds and writes nothing.
	before := embedded
	if _, _, err := engine.IndexSource(ctx, store, pages[0], 1200, 150, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("embedded on re-index:", embedded-before)

	resp, err := store.Retriever.Retrieve(ctx, &ai.RetrieverRequest{
		Query:   ai.DocumentFromText("When does the library open?", nil),
		Options: &localvec.RetrieverOptions{K: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(engine.DocText(resp.Documents[0]))

	sources, err := store.Sources(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sources)
	// Output:
	// https://example.com/hours: 1 indexed, 0 replaced
	// https://example.com/parking: 1 indexed, 0 replaced
	// embedded on re-index: 0
	// The library opens at nine and closes at six on weekdays.
	// [{https://example.com/hours  1 } {https://example.com/parking  1 }]
}

func ExampleLocalvecStore_KeywordSearch() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	embedded := 0
	dir, err := os.MkdirTemp("", "askyourdocs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := engine.NewLocalvecStoreWithOptions(ctx, g, "minutes", defineWordEmbedder(g, &embedded), dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	err = engine.IndexInBatches(ctx, store, []*ai.Document{
		ai.DocumentFromText("Die Rechnung von Max Mustermann wurde bezahlt.", map[string]any{"year": 2024}),
		ai.DocumentFromText("Alle Rechnungen des Vereins liegen im Archiv.", map[string]any{"year": 2023}),
		ai.DocumentFromText("Protokoll der Sitzung vom Mai.", map[string]any{"year": 2024}),
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	stop := map[string]bool{"zeige": true, "die": true, "von": true}

	// The quoted phrase ranks first; "Rechnungen" also finds "Rechnung"
	// through its 7-rune prefix "rechnun".
	docs, err := store.KeywordSearch(ctx, `Zeige die Rechnungen von „Max Mustermann“`, 5, stop, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range docs {
		fmt.Println(engine.DocText(d))
	}

	// A metadata filter, and the same search on the file (as an app with
	// its own localvec wrapper would run it).
	only2023 := func(meta map[string]any) bool { return meta["year"] == float64(2023) || meta["year"] == 2023 }
	docs, err = engine.LocalvecKeywordSearch(filepath.Join(dir, "__db_minutes.json"), "Rechnungen", 5, stop, only2023)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(docs), engine.DocText(docs[0]))

	// Only stop words: they are all the query has, so they are searched.
	docs, err = store.KeywordSearch(ctx, "zeige die", 5, stop, nil)
	fmt.Println(len(docs), engine.DocText(docs[0]), err)
	// Output:
	// Die Rechnung von Max Mustermann wurde bezahlt.
	// Alle Rechnungen des Vereins liegen im Archiv.
	// 1 Alle Rechnungen des Vereins liegen im Archiv.
	// 1 Die Rechnung von Max Mustermann wurde bezahlt. <nil>
}
