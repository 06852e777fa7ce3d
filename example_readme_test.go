package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// writeReadmeDocs writes the two small documents Example_askYourDocuments
// indexes and returns their folder.
func writeReadmeDocs() string {
	dir, err := os.MkdirTemp("", "askyourdocs-readme")
	if err != nil {
		log.Fatal(err)
	}
	files := map[string]string{
		"rental.md": "# Kayak rental\n\n## Prices\n\nA day tour costs 95 euros per person, equipment included.\n\n" +
			"## Safety\n\nEvery paddler wears a life jacket; children under 12 paddle with an adult.\n",
		"hours.txt": "Opening hours\n=============\n\nThe boathouse opens at eight and closes at six from May to September.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	return dir
}

// Example_askYourDocuments is the README's happy path: index a folder's
// documents (IndexFolder) into the embedded SQLite store with the built-in embedder (no
// model server, no database server), then answer a question with hybrid
// search (Search): vector and keyword results fused as the index's
// embedder implies.
func Example_askYourDocuments() {
	docs := writeReadmeDocs()
	defer os.RemoveAll(docs)

	ctx := context.Background()
	g := genkit.Init(ctx)
	emb := askyourdocs.NewLocalEmbedder(0) // lexical, offline; use a real model in production
	store, err := askyourdocs.NewSQLiteStore(ctx, g, emb, filepath.Join(docs, "index.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// Every document of the folder; run it again after a change: unchanged
	// chunks are not embedded again, deleted files leave the index.
	if _, err := askyourdocs.IndexFolder(ctx, store, docs, nil); err != nil {
		log.Fatal(err)
	}

	question := "How much is a day tour?"
	// Search (vector + keyword, fused as the index's embedder implies), then
	// the sentences that answer; AnswerOptions.Model makes a model write it.
	answer, err := askyourdocs.Answer(ctx, store, question, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Text)
	fmt.Println(filepath.Base(answer.Citations[0].URL), "/", answer.Citations[0].Section)
	// Output:
	// [1] A day tour costs 95 euros per person, equipment included.
	// rental.md / Kayak rental > Prices
}
