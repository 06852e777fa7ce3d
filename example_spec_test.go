package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// specURLSource is the spec's urlSource: the IngestSource for one web page.
type specURLSource struct{ url string }

func (s specURLSource) Name() string { return s.url }

func (s specURLSource) Fetch(ctx context.Context) ([]askyourdocs.Paragraph, error) {
	html, err := askyourdocs.FetchWebPage(s.url)
	if err != nil {
		return nil, err
	}
	return askyourdocs.HTMLToStructuredText(strings.NewReader(html))
}

func (s specURLSource) Documents(chunks []askyourdocs.Chunk) []*ai.Document {
	docs := make([]*ai.Document, len(chunks))
	for i, c := range chunks {
		docs[i] = ai.DocumentFromText(c.Text, map[string]any{"url": s.url, "parentText": c.ParentText})
	}
	return docs
}

func (s specURLSource) DeleteStale(ctx context.Context, store askyourdocs.VectorStore) (int, error) {
	return store.DeleteByURL(ctx, s.url)
}

// Example_indexPageAndAnswer runs the specification's "index a page and
// answer a question" program unchanged in substance, against a local web
// page and a fake Ollama server that speaks Ollama's real /api/embed and
// /api/chat protocol (embedding with the engine's built-in lexical
// embedder, answering by quoting the context line it was given). The page
// is on 127.0.0.1, so the example opts in to private targets for its
// duration; an app keeps the SSRF guard on.
func Example_indexPageAndAnswer() {
	askyourdocs.SetAllowPrivateTargets(true)
	defer askyourdocs.SetAllowPrivateTargets(false)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><body><nav><a href="/">Home</a></nav><main>
<h1>About Fjordline</h1><p>Fjordline rents sea kayaks on the west coast.</p>
<h2>Pricing</h2><p>A day tour costs 95 euros per person, equipment included.</p>
</main></body></html>`)
	}))
	defer page.Close()
	ollama := fakeOllama()
	defer ollama.Close()

	ctx := context.Background()
	const llmSpec, embSpec = "ollama/gemma3:12b", "ollama/mxbai-embed-large"
	providers, err := askyourdocs.NewProviders(askyourdocs.ProviderConfig{OllamaHost: ollama.URL}, nil, llmSpec, embSpec)
	if err != nil {
		log.Fatal(err)
	}
	genk := genkit.Init(ctx, genkit.WithPlugins(providers.Plugins()...))
	llm, err := providers.Model(genk, llmSpec)
	if err != nil {
		log.Fatal(err)
	}
	emb, err := providers.Embedder(genk, embSpec, 1024)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "askyourdocs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := askyourdocs.NewLocalvecStore(genk, "docs", emb, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	src := specURLSource{url: page.URL + "/about"}
	indexed, deleted, err := askyourdocs.IndexSource(ctx, store, src, 1200, 150, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("indexed %d chunks (replaced %d)\n", indexed, deleted)

	question := "What does a day tour cost?"
	resp, err := store.Retriever.Retrieve(ctx, &ai.RetrieverRequest{
		Query:   askyourdocs.QueryDocument(question),
		Options: &localvec.RetrieverOptions{K: 5},
	})
	if err != nil {
		log.Fatal(err)
	}
	top := askyourdocs.DocText(resp.Documents[0])
	fmt.Printf("best match of %d: %s\n", len(resp.Documents), strings.ReplaceAll(top, "\n", " / "))

	answer, err := genkit.Generate(ctx, genk,
		ai.WithModel(llm),
		ai.WithDocs(resp.Documents...),
		ai.WithPrompt("Answer the question using only the provided context.\n\nQuestion: %s", question),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Text())
	// Output:
	// indexed 1 chunks (replaced 0)
	// best match of 1: About Fjordline / Fjordline rents sea kayaks on the west coast. / Pricing / A day tour costs 95 euros per person, equipment included.
	// From the context: A day tour costs 95 euros per person, equipment included.
}

// fakeOllama answers POST /api/embed with the engine's built-in lexical
// embedder (1024 dimensions) and POST /api/chat by quoting the first line
// of the request's messages that mentions "euros".
func fakeOllama() *httptest.Server {
	local := askyourdocs.NewLocalEmbedder(1024)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/embed":
			var req struct {
				Input []string `json:"input"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			in := &ai.EmbedRequest{}
			for _, s := range req.Input {
				in.Input = append(in.Input, ai.DocumentFromText(s, nil))
			}
			out, err := local.Embed(r.Context(), in)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			vecs := make([][]float32, len(out.Embeddings))
			for i, e := range out.Embeddings {
				vecs[i] = e.Embedding
			}
			json.NewEncoder(w).Encode(map[string]any{"embeddings": vecs})
		case "/api/chat":
			var req struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			reply := "The context does not say."
			for _, m := range req.Messages {
				for _, line := range strings.Split(m.Content, "\n") {
					if i := strings.Index(line, "A day tour"); i >= 0 && strings.Contains(line, "euros") {
						reply = "From the context: " + strings.TrimSpace(line[i:])
					}
				}
			}
			w.Header().Set("Content-Type", "application/x-ndjson")
			json.NewEncoder(w).Encode(map[string]any{
				"model": "gemma3:12b", "done": true, "done_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": reply},
			})
		default:
			http.NotFound(w, r)
		}
	}))
}
