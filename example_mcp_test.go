package engine_test

import (
	"context"
	"fmt"

	engine "github.com/dbis-ilm/askyourdocs"
)

// A tool whose MCP result is a readable text for the model plus the same
// data as structured content for programs.
func ExampleStructuredToolHandler() {
	type query struct {
		Word string `json:"word"`
	}
	type count struct {
		Word    string `json:"word"`
		Letters int    `json:"letters"`
	}
	handler := engine.StructuredToolHandler(
		func(_ context.Context, q query) (count, error) { return count{q.Word, len(q.Word)}, nil },
		func(c count) string { return fmt.Sprintf("%q has %d letters.", c.Word, c.Letters) })
	// genkit.DefineTool(g, "count_letters", "Counts the letters of a word.", handler)
	// and askyourdocs.ServeMCP(ctx, g, "app", "1.0") serve it; called directly:
	res, _ := handler(nil, query{Word: "fjord"})
	fmt.Println(res.Text)
	fmt.Printf("%+v\n", res.StructuredContent)
	// Output:
	// "fjord" has 5 letters.
	// {Word:fjord Letters:5}
}
