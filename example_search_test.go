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

// ExampleSearch runs the hybrid search on a store, restricted by a Filter,
// and shows where each hit came from: its rank in the vector and the
// keyword list, its section and its confidence label.
func ExampleSearch() {
	dir, err := os.MkdirTemp("", "askyourdocs-search")
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
	chunk := func(text, source, section string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{askyourdocs.MetaURL: source + "/guide.html",
			askyourdocs.MetaSource: source, askyourdocs.MetaBreadcrumb: section})
	}
	err = store.Index(ctx, []*ai.Document{
		chunk("Kayaks are rented by the day; a day costs 40 euros.", "rental", "Rental > Prices"),
		chunk("Life jackets are included with every kayak.", "rental", "Rental > Safety"),
		chunk("The harbour office rents kayaks to members only.", "club", "Club > Members"),
	})
	if err != nil {
		log.Fatal(err)
	}
	found, err := askyourdocs.Search(ctx, store, "What does a kayak cost per day?", &askyourdocs.SearchOptions{
		K:      2,
		Filter: &askyourdocs.Filter{Sources: []string{"rental"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range found.Hits {
		fmt.Printf("%s (vector #%d, keyword #%d, confidence %s)\n", h.Section, h.VectorRank, h.TextRank,
			askyourdocs.ConfidenceLabelWith(h.Confidence, askyourdocs.WithLanguage("en")))
	}
	// Output:
	// Rental > Prices (vector #1, keyword #1, confidence high)
	// Rental > Safety (vector #2, keyword #2, confidence low)
}
