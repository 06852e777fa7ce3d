package engine

import (
	"context"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

func TestEmbeddingPrefixes(t *testing.T) {
	const mxq = "Represent this sentence for searching relevant passages: "
	const e5i = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "
	for _, tc := range []struct {
		model, query, passage string
		ok                    bool
	}{
		{"mxbai-embed-large", mxq, "", true},
		{"ollama/mxbai-embed-large:335m", mxq, "", true},
		{"gpustack/mxbai-embed-large-v1", mxq, "", true},
		{"nomic-embed-text", "search_query: ", "search_document: ", true},
		{"ollama/nomic-embed-text:v1.5", "search_query: ", "search_document: ", true},
		{"hf.co/nomic-ai/nomic-embed-text-v2-moe", "search_query: ", "search_document: ", true},
		{"jeffh/intfloat-multilingual-e5-large:f16", "query: ", "passage: ", true},
		{"gpustack/multilingual-e5-small", "query: ", "passage: ", true},
		{"E5-Large-V2", "query: ", "passage: ", true},
		{"multilingual-e5-large-instruct", e5i, "", true},
		{"bge-m3", "", "", false},
		{"gemma3:12b", "", "", false},
		{"embed-e55", "", "", false},
		{"", "", "", false},
	} {
		q, p, ok := embeddingPrefixes(tc.model)
		if q != tc.query || p != tc.passage || ok != tc.ok {
			t.Errorf("embeddingPrefixes(%q) = %q, %q, %v; want %q, %q, %v", tc.model, q, p, ok, tc.query, tc.passage, tc.ok)
		}
	}
}

func TestNewPrefixEmbedderUnknownModelUnwrapped(t *testing.T) {
	inner := newTestEmbedder(8)
	if got := NewPrefixEmbedder(inner, "bge-m3"); got != ai.Embedder(inner) {
		t.Errorf("unknown model wrapped: %T", got)
	}
	if got := NewPrefixEmbedder(nil, "mxbai-embed-large"); got != nil {
		t.Errorf("nil embedder: %v", got)
	}
}

// TestPrefixEmbedderExactWireStrings embeds a query, a HyDE passage and a
// chunk through the provider's embedder and checks the exact strings the
// fake Ollama server receives.
func TestPrefixEmbedderExactWireStrings(t *testing.T) {
	for _, tc := range []struct {
		spec                     string
		query, hyde, chunkPrefix string
	}{
		{"mxbai-embed-large", "Represent this sentence for searching relevant passages: Wie lange gilt die Frist?", "Die Frist beträgt 14 Tage.", ""},
		{"ollama/nomic-embed-text", "search_query: Wie lange gilt die Frist?", "search_document: Die Frist beträgt 14 Tage.", "search_document: "},
		{"ollama/jeffh/intfloat-multilingual-e5-large:f16", "query: Wie lange gilt die Frist?", "passage: Die Frist beträgt 14 Tage.", "passage: "},
		{"ollama/all-minilm", "Wie lange gilt die Frist?", "Die Frist beträgt 14 Tage.", ""},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			rec := newProviderRecorder(t, ollamaFakeReply)
			p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, tc.spec)
			emb, err := p.Embedder(g, tc.spec, 8)
			if err != nil {
				t.Fatal(err)
			}
			docs := []*ai.Document{
				QueryDocument("Wie lange gilt die Frist?"),
				ai.DocumentFromText("Die Frist beträgt 14 Tage.", nil), // HyDE text: a plain document
				ai.DocumentFromText(tc.chunkPrefix+"Already prefixed chunk.", map[string]any{"url": "u"}),
			}
			resp, err := emb.Embed(context.Background(), &ai.EmbedRequest{Input: docs})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Embeddings) != 3 {
				t.Fatalf("%d embeddings", len(resp.Embeddings))
			}
			in, _ := rec.last(t).Body["input"].([]any)
			want := []any{tc.query, tc.hyde, tc.chunkPrefix + "Already prefixed chunk."}
			if len(in) != 3 || in[0] != want[0] || in[1] != want[1] || in[2] != want[2] {
				t.Errorf("wire input = %q\nwant         %q", in, want)
			}
			if DocText(docs[0]) != "Wie lange gilt die Frist?" {
				t.Error("the caller's document was modified")
			}
			if got := rec.last(t).Body["model"]; got == "" {
				t.Error("no model in request")
			}
		})
	}
}

func TestProvidersEmbedderDimensionCheck(t *testing.T) {
	rec := newProviderRecorder(t, ollamaFakeReply) // fake answers with 8-dim vectors
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, "mxbai-embed-large")
	emb, err := p.Embedder(g, "mxbai-embed-large", 1024)
	if err != nil {
		t.Fatal(err)
	}
	_, err = emb.Embed(context.Background(), &ai.EmbedRequest{Input: []*ai.Document{ai.DocumentFromText("x", nil)}})
	if err == nil {
		t.Fatal("8-dim vectors accepted for a 1024-dim store")
	}
	emb, _ = p.Embedder(g, "mxbai-embed-large", 0)
	if _, err := emb.Embed(context.Background(), &ai.EmbedRequest{Input: []*ai.Document{ai.DocumentFromText("x", nil)}}); err != nil {
		t.Errorf("dim 0 (unchecked): %v", err)
	}
	if emb.Name() != "ollama/mxbai-embed-large" {
		t.Errorf("Name = %q", emb.Name())
	}
}
