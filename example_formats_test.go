package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	engine "github.com/dbis-ilm/askyourdocs"
)

// ExtractParagraphs reads Markdown with its structure: the front matter's
// title tops the breadcrumb, a table's rows carry the header labels, and a
// link is reduced to its text.
func ExampleExtractParagraphs_markdown() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "prices.md")
	src := "---\ntitle: Price list\n---\n\n## Rentals\n\nSee [our shop](https://shop.example).\n\n| Item | Price |\n|---|---|\n| Wetsuit | 15 euros |\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	paras, err := engine.ExtractParagraphsWithOptions(context.Background(), path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range paras {
		fmt.Printf("%-5v %-22s %s\n", p.Heading, p.Breadcrumb, p.Text)
	}
	// Output:
	// true  Price list             Price list
	// true  Price list > Rentals   Rentals
	// false Price list > Rentals   See our shop.
	// false Price list > Rentals   Item: Wetsuit | Price: 15 euros
}
