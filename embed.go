package engine

import (
	"context"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// QueryDocument returns a text document marked as a search query, for
// embedding a user's question (or a keyword query) with an embedder from
// NewPrefixEmbedder. Text that stands in for a passage, such as a HyDE
// answer, should stay a plain ai.DocumentFromText document instead.
func QueryDocument(text string) *ai.Document {
	return ai.DocumentFromText(text, map[string]any{MetaQuery: true})
}

// isQueryDocument reports whether d was built by QueryDocument.
func isQueryDocument(d *ai.Document) bool {
	if d == nil {
		return false
	}
	q, _ := d.Metadata[MetaQuery].(bool)
	return q
}

// embeddingPrefixes returns the instruction prefixes an asymmetric
// embedding model expects in front of a search query and of a passage, and
// ok = false for a model it does not know. model may be a spec
// ("ollama/mxbai-embed-large"), a tagged name ("nomic-embed-text:v1.5") or
// a namespaced one ("hf.co/intfloat/multilingual-e5-large"); case is
// ignored. The prefixes are the ones the model cards prescribe:
//
//   - mxbai-embed-large (huggingface.co/mixedbread-ai/mxbai-embed-large-v1,
//     "Usage"): queries get "Represent this sentence for searching relevant
//     passages: ", documents nothing.
//   - nomic-embed-text, v1, v1.5 and v2 (huggingface.co/nomic-ai/
//     nomic-embed-text-v1.5, "Task instruction prefixes"): "search_query: "
//     and "search_document: ".
//   - e5 (huggingface.co/intfloat/e5-large-v2 and multilingual-e5-*, FAQ
//     "Do I need to add the prefix"): "query: " and "passage: ".
//   - e5 instruct models (huggingface.co/intfloat/multilingual-e5-large-
//     instruct, e5-mistral-7b-instruct): queries get "Instruct: <task>\n
//     Query: " with the card's web-search task, documents nothing.
func embeddingPrefixes(model string) (query, passage string, ok bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if _, m := SplitModelSpec(name); m != "" {
		name = m
	}
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[:i]
	}
	switch {
	case strings.Contains(name, "mxbai-embed-large"):
		return "Represent this sentence for searching relevant passages: ", "", true
	case strings.Contains(name, "nomic-embed-text"):
		return "search_query: ", "search_document: ", true
	case isE5Name(name):
		if strings.Contains(name, "instruct") {
			return "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ", "", true
		}
		return "query: ", "passage: ", true
	}
	return "", "", false
}

// isE5Name reports whether name contains "e5" as a dash/underscore
// separated token ("e5-large-v2", "multilingual-e5-small", "intfloat-e5").
func isE5Name(name string) bool {
	for _, tok := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if tok == "e5" {
			return true
		}
	}
	return false
}

// NewPrefixEmbedder returns emb wrapped so that every document it embeds
// gets the instruction prefix model expects (docs/providers.md lists them:
// mxbai-embed-large, nomic-embed-text, e5 and e5 instruct models): the
// query prefix for documents built with QueryDocument, the passage prefix
// for all others. For a model without known prefixes it returns emb itself,
// unwrapped. A text that already starts with its prefix is not prefixed
// twice. The wrapper keeps emb's Name, does not modify the request's
// documents, and is safe for concurrent use if emb is.
func NewPrefixEmbedder(emb ai.Embedder, model string) ai.Embedder {
	q, p, ok := embeddingPrefixes(model)
	if !ok || emb == nil {
		return emb
	}
	return &prefixEmbedder{inner: emb, query: q, passage: p}
}

type prefixEmbedder struct {
	inner          ai.Embedder
	query, passage string
}

// Name returns the wrapped embedder's name.
func (e *prefixEmbedder) Name() string { return e.inner.Name() }

// Register does nothing: the wrapped embedder is the registered action.
func (e *prefixEmbedder) Register(r api.Registry) {}

// Embed prefixes each input and embeds them with the wrapped embedder.
func (e *prefixEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	if req == nil {
		return e.inner.Embed(ctx, req)
	}
	out := &ai.EmbedRequest{Options: req.Options, Input: make([]*ai.Document, len(req.Input))}
	for i, d := range req.Input {
		prefix := e.passage
		if isQueryDocument(d) {
			prefix = e.query
		}
		text := DocText(d)
		if !strings.HasPrefix(text, prefix) {
			text = prefix + text
		}
		var meta map[string]any
		if d != nil {
			meta = d.Metadata
		}
		out.Input[i] = ai.DocumentFromText(text, meta)
	}
	return e.inner.Embed(ctx, out)
}
