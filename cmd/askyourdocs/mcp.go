package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// mcpVersion is the server version announced to MCP clients.
func mcpVersion() string {
	v, _, _ := strings.Cut(version(), " ")
	if v == "" || v == "(devel)" {
		return "0.0.0-devel"
	}
	return v
}

// mcpSearchInput is the input of the search_docs tool. Descriptions use
// jsonschema_description: the jsonschema tag splits its value at commas.
type mcpSearchInput struct {
	Query string `json:"query" jsonschema_description:"What to search for: a question or keywords, in the language of the documents."`
	K     int    `json:"k,omitempty" jsonschema:"minimum=1,maximum=100" jsonschema_description:"Number of passages to return, 1 to 100 (default 10)."`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=fusion,enum=vector,enum=keyword" jsonschema_description:"Retriever: 'fusion' (default) combines semantic vector search and keyword search, 'vector' is semantic search only, 'keyword' matches the words (good for names, codes and exact phrases)."`
}

// mcpAskInput is the input of the ask_docs tool.
type mcpAskInput struct {
	Question string `json:"question" jsonschema_description:"The question to answer from the indexed documents, as a complete sentence."`
}

// mcpSource is one entry of list_sources.
type mcpSource struct {
	URL     string `json:"url"`
	Display string `json:"display"`
	Source  string `json:"source"`
	Chunks  int    `json:"chunks"`
}

// mcpSources is list_sources' structured result.
type mcpSources struct {
	Store   string      `json:"store"`
	Sources []mcpSource `json:"sources"`
}

// mcpNoInput is the (empty) input of list_sources.
type mcpNoInput struct{}

func (a *cliApp) cmdMCP(ctx context.Context, args []string) error {
	fset, cf := a.flags("mcp")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("mcp", "mcp takes no arguments")
	}
	// Never create an index silently: an MCP server over an empty
	// directory would answer every question with "nothing found".
	b, err := a.openIndexed(ctx, cf, openOptions{models: true, reads: true})
	if err != nil {
		return err
	}
	defer b.Close()
	if note := a.modelServerDown(ctx, b.llmSpec); b.llm != nil && note != "" {
		fmt.Fprintf(a.stderr, "askyourdocs mcp: note: %s\n", note)
	}
	n, _ := b.store.chunkCount(ctx)
	// stdout carries the protocol; this line and logs go to stderr.
	fmt.Fprintf(a.stderr, "askyourdocs mcp: serving %s (%s, %s) on stdio\n", storeLabel(b.store), count(n, "chunk", "chunks"), a.dataFrom)
	b.defineMCPTools()
	// ServeMCP also ends on Ctrl-C or SIGTERM (ctx), which main's signal
	// handler would otherwise swallow while stdin stays open.
	if err := askyourdocs.ServeMCP(ctx, b.g, "askyourdocs", mcpVersion()); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return errInterrupted
		}
		return err
	}
	return nil
}

// defineMCPTools registers search_docs, ask_docs and list_sources.
func (b *backend) defineMCPTools() {
	genkit.DefineTool(b.g, "search_docs",
		"Searches the user's indexed documents (PDF, Word, PowerPoint, Excel, OpenDocument, EPUB, Markdown, text and HTML files, and web pages) and returns the best matching passages, "+
			"each with its source (file or URL, page, section) and a link. Use it to find where something is written "+
			"or to read the passages yourself; use ask_docs for a direct answer.",
		askyourdocs.StructuredToolHandler(func(ctx context.Context, in mcpSearchInput) (searchOutput, error) {
			if strings.TrimSpace(in.Query) == "" {
				return searchOutput{}, fmt.Errorf("query is empty")
			}
			o := defaultRetrieveOptions()
			o.hyde, o.rerank = false, false
			if in.K < 0 || in.K > 100 {
				return searchOutput{}, fmt.Errorf("k must be between 1 and 100, got %d", in.K)
			}
			if in.K > 0 {
				o.top = in.K
			}
			if in.Mode != "" {
				o.mode = in.Mode
			}
			if err := b.requireIndexed(ctx); err != nil {
				return searchOutput{}, err
			}
			res, err := b.retrieve(ctx, in.Query, o)
			if err != nil {
				return searchOutput{}, err
			}
			return sanitizeSearch(searchOutput{Query: in.Query, Mode: o.mode, Results: searchResults(res.hits)}), nil
		}, searchText))
	genkit.DefineTool(b.g, "ask_docs",
		"Answers a question from the user's indexed documents, with numbered citations [n] to the passages used, "+
			"their sources and a confidence label (high, medium, low). Without a configured LLM the answer quotes the best passages.",
		askyourdocs.StructuredToolHandler(func(ctx context.Context, in mcpAskInput) (*answerResult, error) {
			if strings.TrimSpace(in.Question) == "" {
				return nil, fmt.Errorf("question is empty")
			}
			out, err := b.answer(ctx, in.Question, defaultRetrieveOptions(), 5, nil)
			if err != nil {
				return nil, err
			}
			return out.sanitized(), nil
		}, answerText))
	genkit.DefineTool(b.g, "list_sources",
		"Lists the indexed documents: each file or web page with the folder or site it was indexed from and its number of passages.",
		askyourdocs.StructuredToolHandler(func(ctx context.Context, _ mcpNoInput) (mcpSources, error) {
			srcs, err := b.store.Sources(ctx)
			if err != nil {
				return mcpSources{}, err
			}
			out := mcpSources{Store: storeLabel(b.store), Sources: make([]mcpSource, len(srcs))}
			for i, s := range srcs {
				out.Sources[i] = mcpSource{URL: s.URL, Display: shortPath(s.URL, s.Source), Source: s.Source, Chunks: s.Chunks}
			}
			return out, nil
		}, sourcesText))
}

// searchText renders search results for an MCP client.
func searchText(o searchOutput) string {
	if len(o.Results) == 0 {
		return fmt.Sprintf("No passage matches %q.", o.Query)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s for %q:\n", count(len(o.Results), "passage", "passages"), o.Query)
	for _, r := range o.Results {
		fmt.Fprintf(&sb, "\n[%d] %s\n%s\n", r.Rank, r.citation.String(), strings.TrimSpace(r.Text))
		if r.Link != "" {
			fmt.Fprintf(&sb, "Link: %s\n", r.Link)
		}
	}
	return sb.String()
}

// answerText renders an answer with its sources for an MCP client.
func answerText(o *answerResult) string {
	var sb strings.Builder
	sb.WriteString(o.Answer)
	if len(o.Citations) > 0 {
		sb.WriteString("\n\nSources:")
		for _, c := range o.Citations {
			fmt.Fprintf(&sb, "\n[%d] %s", c.N, c.String())
			if c.Link != "" {
				fmt.Fprintf(&sb, " <%s>", c.Link)
			}
		}
	}
	fmt.Fprintf(&sb, "\n\nConfidence: %s (%d/10, %s)", o.Confidence, o.Score, o.ConfidenceBasis)
	return sb.String()
}

// sourcesText renders the source list for an MCP client.
func sourcesText(o mcpSources) string {
	if len(o.Sources) == 0 {
		return "Nothing is indexed."
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s in %s:\n", count(len(o.Sources), "document", "documents"), o.Store)
	for _, s := range o.Sources {
		fmt.Fprintf(&sb, "- %s (%s)\n", s.Display, count(s.Chunks, "passage", "passages"))
	}
	return sb.String()
}
