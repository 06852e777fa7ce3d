package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// mcpVersion is the server version announced to MCP clients.
const mcpVersion = "1.0.0"

// mcpSearchInput is the input of the search_docs tool.
type mcpSearchInput struct {
	Query string `json:"query" jsonschema:"description=What to search for"`
	K     int    `json:"k,omitempty" jsonschema:"description=Number of chunks to return (default 10)"`
	Mode  string `json:"mode,omitempty" jsonschema:"description=vector, keyword or fusion (default)"`
}

// mcpAskInput is the input of the ask_docs tool.
type mcpAskInput struct {
	Question string `json:"question" jsonschema:"description=The question to answer from the indexed documents"`
}

// mcpSource is one entry of list_sources.
type mcpSource struct {
	URL    string `json:"url"`
	Source string `json:"source"`
	Chunks int    `json:"chunks"`
}

// mcpNoInput is the (empty) input of list_sources.
type mcpNoInput struct{}

func (a *cliApp) cmdMCP(ctx context.Context, args []string) error {
	fset, cf := a.newFlagSet("mcp")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: mcp takes no arguments", errUsage)
	}
	// Not write: mcp never creates an index; a missing one is an error
	// naming the directory it looked in.
	b, err := a.open(ctx, cf, openOptions{models: true})
	if err != nil {
		return err
	}
	defer b.Close()
	b.defineMCPTools()
	// stdout carries the protocol; logs go to stderr (SetupLogging in open).
	return askyourdocs.ServeMCPStdio(b.g, "askyourdocs", mcpVersion)
}

// defineMCPTools registers search_docs, ask_docs and list_sources.
func (b *backend) defineMCPTools() {
	genkit.DefineTool(b.g, "search_docs",
		"Searches the indexed documents (vector + keyword search, fused) and returns the best chunks with scores and citations.",
		askyourdocs.JSONToolHandler(func(ctx context.Context, in mcpSearchInput) ([]searchResult, error) {
			if strings.TrimSpace(in.Query) == "" {
				return nil, fmt.Errorf("query is empty")
			}
			o := defaultRetrieveOptions()
			o.hyde, o.rerank = false, false
			if in.K > 0 {
				o.top = min(in.K, 100)
			}
			if in.Mode != "" {
				o.mode = in.Mode
			}
			if err := b.requireIndexed(ctx); err != nil {
				return nil, err
			}
			res, err := b.retrieve(ctx, in.Query, o)
			if err != nil {
				return nil, err
			}
			out := make([]searchResult, len(res.hits))
			for i, h := range res.hits {
				c := citationOf(h)
				c.N = i + 1
				out[i] = searchResult{Rank: i + 1, Score: h.score, VectorRank: h.vectorRank, KeywordRank: h.keywordRank, citation: c, Text: h.text}
			}
			return out, nil
		}))
	genkit.DefineTool(b.g, "ask_docs",
		"Answers a question from the indexed documents with numbered citations and a confidence label (extractive when no LLM is configured).",
		askyourdocs.JSONToolHandler(func(ctx context.Context, in mcpAskInput) (*answerResult, error) {
			if strings.TrimSpace(in.Question) == "" {
				return nil, fmt.Errorf("question is empty")
			}
			return b.answer(ctx, in.Question, defaultRetrieveOptions(), 5)
		}))
	genkit.DefineTool(b.g, "list_sources",
		"Lists the indexed documents (file or URL, source, number of chunks).",
		askyourdocs.JSONToolHandler(func(ctx context.Context, _ mcpNoInput) ([]mcpSource, error) {
			srcs, err := b.store.listSources(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]mcpSource, len(srcs))
			for i, s := range srcs {
				out[i] = mcpSource{URL: s.URL, Source: s.Source, Chunks: s.Chunks}
			}
			return out, nil
		}))
}
