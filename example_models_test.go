package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// A fake Ollama server stands in for a real one so the example runs
// anywhere; in an app, cfg comes from ProviderConfigFromEnv.
func ExampleNewProviders() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Options   map[string]any `json:"options"`
			KeepAlive string         `json:"keep_alive"`
			Think     *bool          `json:"think"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		reply := fmt.Sprintf("num_ctx=%v keep_alive=%s think=%v", req.Options["num_ctx"], req.KeepAlive, *req.Think)
		json.NewEncoder(w).Encode(map[string]any{"message": map[string]any{"role": "assistant", "content": reply}, "done": true})
	}))
	defer srv.Close()

	const llmSpec = "ollama/gemma3:12b"
	p, err := askyourdocs.NewProviders(askyourdocs.ProviderConfig{OllamaHost: srv.URL},
		[]string{askyourdocs.ProviderOllama, askyourdocs.ProviderGPUStack}, llmSpec)
	if err != nil {
		panic(err)
	}
	g := genkit.Init(context.Background(), genkit.WithPlugins(p.Plugins()...))
	llm, err := p.Model(g, llmSpec)
	if err != nil {
		panic(err)
	}
	cfg := askyourdocs.GenerateConfig(llmSpec, askyourdocs.GenerateOptions{NumCtx: 8192, KeepAlive: "10m"})
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(llm), ai.WithConfig(cfg), ai.WithPrompt("hi"))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text())

	// A Gemini spec is refused when only on-premises providers are allowed.
	_, err = askyourdocs.NewProviders(askyourdocs.ProviderConfig{}, []string{askyourdocs.ProviderOllama}, "googleai/gemini-2.5-flash")
	fmt.Println(err)
	// Output:
	// num_ctx=8192 keep_alive=10m think=false
	// model spec "googleai/gemini-2.5-flash": model provider not allowed: googleai (allowed: ollama)
}

func ExampleReciprocalRankFusion() {
	byVector := []*ai.Document{ai.DocumentFromText("a", nil), ai.DocumentFromText("b", nil), ai.DocumentFromText("c", nil)}
	byKeyword := []*ai.Document{ai.DocumentFromText("c", nil), ai.DocumentFromText("a", nil)}
	fused := askyourdocs.ReciprocalRankFusion([]askyourdocs.RankedList{
		{Docs: byVector, Weight: 1},
		{Docs: byKeyword, Weight: 0.5},
	}, 60, 0)
	for _, f := range fused {
		fmt.Printf("%s %.4f\n", f.Text, f.Score)
	}
	// Output:
	// a 0.0245
	// c 0.0241
	// b 0.0161
}

func ExampleRerankScores() {
	g := genkit.Init(context.Background())
	// A stand-in for a real rerank model: it gives every passage 7.
	model := genkit.DefineModel(g, "example/rerank", nil, func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		return &ai.ModelResponse{Message: ai.NewModelTextMessage("[7, 7, 7]")}, nil
	})
	prompt := genkit.DefinePrompt(g, "rerank", ai.WithPrompt(
		"Rate each passage 0-10 for the question {{question}}. Reply with a JSON array of {{count}} integers.\n\n{{numbered}}"))
	texts := []string{"first passage", "second passage", "first passage"}
	scores := askyourdocs.RerankScores(context.Background(), prompt, model, nil, "which passage?", texts,
		askyourdocs.RerankOptions{BatchSize: 10, Parallel: 2, DefaultScore: 0})
	fmt.Println(scores)
	// Output:
	// [7 7 7]
}

func ExampleNewPrefixEmbedder() {
	// A stand-in for the model: it prints the texts that reach it.
	model := ai.NewEmbedder("ollama/nomic-embed-text", nil, func(_ context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		resp := &ai.EmbedResponse{}
		for _, d := range req.Input {
			fmt.Printf("%q\n", askyourdocs.DocText(d))
			resp.Embeddings = append(resp.Embeddings, &ai.Embedding{Embedding: []float32{1, 0}})
		}
		return resp, nil
	})
	emb := askyourdocs.NewPrefixEmbedder(model, "ollama/nomic-embed-text")
	_, err := emb.Embed(context.Background(), &ai.EmbedRequest{Input: []*ai.Document{
		askyourdocs.QueryDocument("Kündigungsfrist"),
		ai.DocumentFromText("Die Kündigungsfrist beträgt drei Monate.", nil),
	}})
	if err != nil {
		panic(err)
	}

	local := askyourdocs.NewLocalEmbedder(256)
	// The local embedder is not a known asymmetric model: left unwrapped.
	fmt.Println(askyourdocs.NewPrefixEmbedder(local, local.Name()) == local)
	// Output:
	// "search_query: Kündigungsfrist"
	// "search_document: Die Kündigungsfrist beträgt drei Monate."
	// true
}

func ExampleFormatHistoryWithOptions() {
	history := []askyourdocs.QATurn{{Question: "Wie hoch ist die Kaution?", Answer: "Drei Monatsmieten."}}
	fmt.Println(askyourdocs.FormatHistoryWithOptions(history, nil)) // no trailing newline of its own
	// Other labels go in ConversationOptions (nil: German).
	english := &askyourdocs.ConversationOptions{Labels: askyourdocs.EnglishLabels}
	fmt.Println(askyourdocs.FormatHistoryWithOptions(history, english))
	fmt.Println(askyourdocs.ConfidenceLabelWithOptions(8, false, nil), askyourdocs.ConfidenceLabelWithOptions(5, false, nil),
		askyourdocs.ConfidenceLabelWithOptions(9, true, nil), askyourdocs.ConfidenceLabelWithOptions(2, false, english))
	fmt.Println(askyourdocs.IsReliableCondense("Und in 3 Raten?", "Kann ich die Kaution in 4 Raten zahlen?", history))
	// Output:
	// Nutzer: Wie hoch ist die Kaution?
	// Assistent: Drei Monatsmieten.
	// User: Wie hoch ist die Kaution?
	// Assistant: Drei Monatsmieten.
	// hoch mittel niedrig low
	// false
}

func ExampleBestExcerpt() {
	chunk := "Die Wohnung liegt im dritten Stock. Die Kaution beträgt drei Monatsmieten. Haustiere sind erlaubt."
	// The one sentence of the chunk the answer draws on, for the citation.
	fmt.Println(askyourdocs.BestExcerpt(chunk, "Die Kaution beträgt drei Monatsmieten."))
	// BestExcerptWithOptions matches a question instead and fills up to MaxChars.
	fmt.Println(askyourdocs.BestExcerptWithOptions(chunk, &askyourdocs.ExcerptOptions{Query: "Wie hoch ist die Kaution?", MaxChars: 80}))
	// Output:
	// Die Kaution beträgt drei Monatsmieten.
	// Die Kaution beträgt drei Monatsmieten. Haustiere sind erlaubt.
}
