package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// ExampleAnswer answers without a model: the answer quotes the sentences
// that answer, and its citation's Excerpt is the same text.
func ExampleAnswer() {
	dir, err := os.MkdirTemp("", "askyourdocs-answer")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := askyourdocs.NewSQLiteStore(ctx, nil, askyourdocs.NewLocalEmbedder(0), filepath.Join(dir, "index.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	chunk := func(text, section string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{askyourdocs.MetaURL: "faq.html",
			askyourdocs.MetaSource: "faq", askyourdocs.MetaBreadcrumb: section})
	}
	err = store.Index(ctx, []*ai.Document{
		chunk("Can children join a tour?\nYes. Children from 8 years paddle in a double kayak with an adult. "+
			"From 12 years they may use a single kayak.", "FAQ > Can children join a tour?"),
		chunk("Do you rent wetsuits?\nWetsuits cost 15 euros per day at the boathouse. "+
			"Spray skirts are included.", "FAQ > Do you rent wetsuits?"),
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := askyourdocs.Answer(ctx, store, "Can children join a tour?", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
	fmt.Println(res.Citations[0].Section, "|", res.Citations[0].Excerpt == res.Text[len("[1] "):])
	// Output:
	// [1] Yes. Children from 8 years paddle in a double kayak with an adult. From 12 years they may use a single kayak.
	// FAQ > Can children join a tour? | true
}
