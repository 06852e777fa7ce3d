package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStructuredToolHandler: a tool defined with StructuredToolHandler is
// served as readable text plus structuredContent; a result that is not a
// JSON object keeps only the text (MCP wants an object there).
func TestStructuredToolHandler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g := genkit.Init(ctx)
	type in struct {
		Word string `json:"word" jsonschema_description:"A word, to count its letters, vowels and so on."`
	}
	type out struct {
		Word    string `json:"word"`
		Letters int    `json:"letters"`
	}
	genkit.DefineTool(g, "count", "counts letters",
		StructuredToolHandler(func(_ context.Context, i in) (out, error) { return out{i.Word, len(i.Word)}, nil },
			func(o out) string { return o.Word + " has " + strings.Repeat("*", o.Letters) }))
	genkit.DefineTool(g, "list", "a list is not an object",
		StructuredToolHandler(func(_ context.Context, i in) ([]string, error) { return []string{i.Word}, nil },
			func(o []string) string { return strings.Join(o, ",") }))
	serverT, clientT := mcp.NewInMemoryTransports()
	go serveMCP(ctx, g, "test", "0.1", serverT)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		if d := props["word"].(map[string]any)["description"]; d != "A word, to count its letters, vowels and so on." {
			t.Errorf("%s: description %q cut", tool.Name, d)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"word": "kayak"}})
	if err != nil || res.IsError {
		t.Fatalf("count: %v %+v", err, res)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "kayak has *****" {
		t.Errorf("text %q", txt)
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok || sc["word"] != "kayak" || sc["letters"] != float64(5) {
		t.Errorf("structuredContent %#v", res.StructuredContent)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list", Arguments: map[string]any{"word": "fjord"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "fjord" || res.StructuredContent != nil {
		t.Errorf("list: %v %+v", err, res)
	}
}
