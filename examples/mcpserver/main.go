// Command mcpserver is a small MCP server built from the engine: run with
// -mcp, it offers the engine's prompt-injection helpers as MCP tools over
// stdio, so an MCP client (an IDE, a desktop assistant) can check text
// before it reaches a model and answers before they reach a user.
//
//	go run ./examples/mcpserver -mcp
//
// Tools:
//   - detect_injection {"text": "..."} returns {"rules": [...], "suspicious": bool}
//   - sanitize_answer {"answer": "...", "allowedURLs": [...]} returns
//     {"answer": "...", "leaks": [...]}
//   - wrap_context {"input": "..."} returns the text wrapped in <context> tags
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// detectInput is the input of detect_injection.
type detectInput struct {
	Text string `json:"text" jsonschema:"description=Text to check (a retrieved chunk or a question)"`
}

// detectOutput is the result of detect_injection.
type detectOutput struct {
	Rules      []string `json:"rules"`
	Suspicious bool     `json:"suspicious"`
}

// sanitizeInput is the input of sanitize_answer.
type sanitizeInput struct {
	Answer      string   `json:"answer" jsonschema:"description=The model's complete answer"`
	AllowedURLs []string `json:"allowedURLs,omitempty" jsonschema:"description=Source URLs the answer may link to"`
}

// sanitizeOutput is the result of sanitize_answer.
type sanitizeOutput struct {
	Answer string   `json:"answer"`
	Leaks  []string `json:"leaks"`
}

func main() {
	// Logs go to stderr: stdout carries the MCP protocol.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if !askyourdocs.MCPModeRequested() {
		fmt.Fprintln(os.Stderr, "usage: mcpserver -mcp   (serves the tools over stdio)")
		os.Exit(2)
	}
	ctx := context.Background()
	g := genkit.Init(ctx)
	defineTools(g)
	if err := askyourdocs.ServeMCP(ctx, g, "askyourdocs-safety", "1.0.0"); err != nil {
		slog.Error("MCP server stopped", "error", err)
		os.Exit(1)
	}
}

// defineTools registers the server's tools on g.
func defineTools(g *genkit.Genkit) {
	genkit.DefineTool(g, "detect_injection",
		"Names the prompt-injection heuristics a text trips (English and German phrasings, hidden characters). An empty list does not mean the text is safe.",
		askyourdocs.JSONToolHandler(func(ctx context.Context, in detectInput) (detectOutput, error) {
			rules := askyourdocs.DetectInjection(in.Text)
			if rules == nil {
				rules = []string{}
			}
			return detectOutput{Rules: rules, Suspicious: len(rules) > 0}, nil
		}))
	genkit.DefineTool(g, "sanitize_answer",
		"Removes Markdown images, raw HTML and links outside allowedURLs from a model's answer, and lists what it found.",
		askyourdocs.JSONToolHandler(func(ctx context.Context, in sanitizeInput) (sanitizeOutput, error) {
			leaks := askyourdocs.AnswerLeaks(in.Answer, in.AllowedURLs)
			if leaks == nil {
				leaks = []string{}
			}
			return sanitizeOutput{Answer: askyourdocs.SanitizeAnswerWithOptions(in.Answer, in.AllowedURLs, nil), Leaks: leaks}, nil
		}))
	genkit.DefineTool(g, "wrap_context",
		"Cleans untrusted text and wraps it in <context> tags that the text cannot close early.",
		func(tc *ai.ToolContext, text string) (string, error) {
			return askyourdocs.WrapContext(text), nil
		})
}
