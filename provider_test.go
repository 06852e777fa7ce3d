package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// providerRecorder is an httptest server that records each request's path,
// headers and JSON body and answers with reply(path, body).
type providerRecorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	reqs  []providerRecorded
	reply func(w http.ResponseWriter, path string, body map[string]any)
}

type providerRecorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

func newProviderRecorder(t *testing.T, reply func(w http.ResponseWriter, path string, body map[string]any)) *providerRecorder {
	t.Helper()
	rec := &providerRecorder{reply: reply}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		if r.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, providerRecorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		rec.mu.Unlock()
		rec.reply(w, r.URL.Path, body)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *providerRecorder) last(t *testing.T) providerRecorded {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("server received no request")
	}
	return r.reqs[len(r.reqs)-1]
}

func (r *providerRecorder) all() []providerRecorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]providerRecorded(nil), r.reqs...)
}

// ollamaFakeReply speaks Ollama's /api/chat and /api/embed: chat replies
// "echo: <last message>", streaming in two NDJSON chunks when asked;
// embeddings are testVector of each input.
func ollamaFakeReply(w http.ResponseWriter, path string, body map[string]any) {
	switch path {
	case "/api/chat":
		msgs, _ := body["messages"].([]any)
		last := ""
		if len(msgs) > 0 {
			last, _ = msgs[len(msgs)-1].(map[string]any)["content"].(string)
		}
		if stream, _ := body["stream"].(bool); stream {
			w.Header().Set("Content-Type", "application/x-ndjson")
			enc := json.NewEncoder(w)
			enc.Encode(map[string]any{"model": body["model"], "message": map[string]any{"role": "assistant", "content": "echo: "}, "done": false})
			w.(http.Flusher).Flush()
			enc.Encode(map[string]any{"model": body["model"], "message": map[string]any{"role": "assistant", "content": last}, "done": false})
			enc.Encode(map[string]any{"model": body["model"], "message": map[string]any{"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"model": body["model"], "done": true, "done_reason": "stop",
			"message":           map[string]any{"role": "assistant", "content": "echo: " + last},
			"prompt_eval_count": 3, "eval_count": 2,
		})
	case "/api/embed":
		in, _ := body["input"].([]any)
		var embs [][]float32
		for _, x := range in {
			s, _ := x.(string)
			embs = append(embs, testVector(s, 8))
		}
		json.NewEncoder(w).Encode(map[string]any{"model": body["model"], "embeddings": embs})
	default:
		http.NotFound(w, nil)
	}
}

// openAIFakeReply speaks the OpenAI chat/completions (JSON and SSE) and
// embeddings API below any prefix.
func openAIFakeReply(w http.ResponseWriter, path string, body map[string]any) {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		msgs, _ := body["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)["content"].(string)
		if stream, _ := body["stream"].(bool); stream {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, part := range []string{"echo: ", last} {
				b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}}}})
				io.WriteString(w, "data: "+string(b)+"\n\n")
			}
			b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}, "usage": map[string]any{"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}})
			io.WriteString(w, "data: "+string(b)+"\n\ndata: [DONE]\n\n")
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "echo: " + last}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
		})
	case strings.HasSuffix(path, "/embeddings"):
		in, _ := body["input"].([]any)
		var data []any
		// Answer in reverse order: the client must place by index.
		for i := len(in) - 1; i >= 0; i-- {
			s, _ := in[i].(string)
			data = append(data, map[string]any{"index": i, "embedding": testVector(s, 8)})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	default:
		http.NotFound(w, nil)
	}
}

// providerGenkit returns providers for specs and a Genkit instance with
// their plugins.
func providerGenkit(t *testing.T, cfg ProviderConfig, specs ...string) (*Providers, *genkit.Genkit) {
	t.Helper()
	p, err := NewProviders(cfg, nil, specs...)
	if err != nil {
		t.Fatalf("NewProviders: %v", err)
	}
	return p, genkit.Init(context.Background(), genkit.WithPlugins(p.Plugins()...))
}

func TestSplitModelSpec(t *testing.T) {
	for _, tc := range []struct{ spec, prov, model string }{
		{"ollama/gemma3:12b", "ollama", "gemma3:12b"},
		{"gpustack/qwen3-8b", "gpustack", "qwen3-8b"},
		{"googleai/gemini-2.5-flash", "googleai", "gemini-2.5-flash"},
		{"mxbai-embed-large", "ollama", "mxbai-embed-large"},
		{" mxbai-embed-large ", "ollama", "mxbai-embed-large"},
		{"hf.co/intfloat/multilingual-e5-large:Q8_0", "ollama", "hf.co/intfloat/multilingual-e5-large:Q8_0"},
		{"ollama/library/llama3", "ollama", "library/llama3"},
	} {
		p, m := SplitModelSpec(tc.spec)
		if p != tc.prov || m != tc.model {
			t.Errorf("SplitModelSpec(%q) = %q, %q; want %q, %q", tc.spec, p, m, tc.prov, tc.model)
		}
	}
}

func TestNewProvidersOnlyNamedProviders(t *testing.T) {
	p, err := NewProviders(ProviderConfig{GPUStackURL: "http://127.0.0.1:1"}, nil, "gemma3", "", "gpustack/qwen3-8b", "ollama/mxbai-embed-large")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.used, ","); got != "ollama,gpustack" {
		t.Errorf("providers = %s, want ollama,gpustack", got)
	}
	if n := len(p.Plugins()); n != 2 {
		t.Errorf("%d plugins, want 2", n)
	}
	p, err = NewProviders(ProviderConfig{}, nil, "ollama/x")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.used, ","); got != "ollama" {
		t.Errorf("providers = %s, want ollama", got)
	}
}

func TestNewProvidersErrors(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "from-env-must-not-be-used")
	t.Setenv("GPUSTACK_URL", "http://from-env-must-not-be-used")
	onPrem := []string{ProviderOllama, ProviderGPUStack}
	for _, tc := range []struct {
		name    string
		cfg     ProviderConfig
		allowed []string
		specs   []string
		want    error
	}{
		{"googleai not allowed", ProviderConfig{GeminiAPIKey: "k"}, onPrem, []string{"ollama/a", "googleai/gemini-2.5-flash"}, ErrProviderNotAllowed},
		{"gpustack not allowed", ProviderConfig{GPUStackURL: "http://x"}, []string{ProviderOllama}, []string{"gpustack/q"}, ErrProviderNotAllowed},
		{"bare name is ollama, not allowed", ProviderConfig{}, []string{ProviderGPUStack}, []string{"mxbai-embed-large"}, ErrProviderNotAllowed},
		{"unknown allowed entry", ProviderConfig{}, []string{"openai"}, []string{"ollama/a"}, ErrUnknownProvider},
		{"gpustack without URL", ProviderConfig{}, nil, []string{"gpustack/qwen3-8b"}, ErrProviderConfig},
		{"gpustack URL without scheme", ProviderConfig{GPUStackURL: "gpu.local"}, nil, []string{"gpustack/qwen3-8b"}, ErrProviderConfig},
		{"ollama host not a URL", ProviderConfig{OllamaHost: "ftp://x"}, nil, []string{"a"}, ErrProviderConfig},
		{"googleai without key", ProviderConfig{}, nil, []string{"googleai/gemini-2.5-flash"}, ErrProviderConfig},
		{"empty model name", ProviderConfig{}, nil, []string{"ollama/"}, ErrProviderConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewProviders(tc.cfg, tc.allowed, tc.specs...)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if p != nil {
				t.Error("got Providers along with the error")
			}
		})
	}
}

func TestProvidersModelSameSpecSameModel(t *testing.T) {
	rec := newProviderRecorder(t, ollamaFakeReply)
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, "ollama/gemma3:12b", "gemma3:12b")
	a, err := p.Model(g, "ollama/gemma3:12b")
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Model(g, "gemma3:12b")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same spec gave different models")
	}
	if a.Name() != "ollama/gemma3:12b" {
		t.Errorf("Name = %q", a.Name())
	}
	if _, err := p.Model(g, "gpustack/q"); !errors.Is(err, ErrProviderNotSetUp) {
		t.Errorf("unnamed provider: err = %v, want ErrProviderNotSetUp", err)
	}
	bare := genkit.Init(context.Background())
	if _, err := p.Model(bare, "gemma3:12b"); !errors.Is(err, ErrProviderNotSetUp) {
		t.Errorf("plugin missing from instance: err = %v, want ErrProviderNotSetUp", err)
	}
}

func TestOllamaOptionsReachTheWire(t *testing.T) {
	rec := newProviderRecorder(t, ollamaFakeReply)
	const spec = "ollama/gemma3:12b"
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, spec)
	m, err := p.Model(g, spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := GenerateConfig(spec, GenerateOptions{NumCtx: 8192, KeepAlive: "10m", MaxTokens: 256})
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithConfig(cfg),
		ai.WithSystem("be brief"), ai.WithPrompt("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "echo: hello" {
		t.Errorf("text = %q", resp.Text())
	}
	if resp.Usage == nil || resp.Usage.InputTokens != 3 || resp.Usage.OutputTokens != 2 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	r := rec.last(t)
	if r.Path != "/api/chat" {
		t.Errorf("path = %s", r.Path)
	}
	b := r.Body
	opts, _ := b["options"].(map[string]any)
	if opts["num_ctx"] != float64(8192) || opts["num_predict"] != float64(256) {
		t.Errorf("options = %v, want num_ctx 8192 and num_predict 256", opts)
	}
	if b["keep_alive"] != "10m" {
		t.Errorf("keep_alive = %v", b["keep_alive"])
	}
	if think, ok := b["think"]; !ok || think != false {
		t.Errorf("think = %v (present %v), want false", think, ok)
	}
	if b["model"] != "gemma3:12b" || b["stream"] != false {
		t.Errorf("model/stream = %v/%v", b["model"], b["stream"])
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["content"] != "hello" {
		t.Errorf("messages = %v", msgs)
	}

	// Thinking asked for: think true.
	cfg = GenerateConfig(spec, GenerateOptions{Think: true})
	if _, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithConfig(cfg), ai.WithPrompt("x")); err != nil {
		t.Fatal(err)
	}
	if b := rec.last(t).Body; b["think"] != true || b["options"] != nil {
		t.Errorf("think = %v options = %v, want true and none", b["think"], b["options"])
	}
}

func TestOllamaConfigFromMapAndCommonConfig(t *testing.T) {
	rec := newProviderRecorder(t, ollamaFakeReply)
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, "llama3")
	m, err := p.Model(g, "llama3")
	if err != nil {
		t.Fatal(err)
	}
	// A map, as a .prompt file's config arrives.
	_, err = genkit.Generate(context.Background(), g, ai.WithModel(m),
		ai.WithConfig(map[string]any{"num_ctx": 4096, "think": false, "options": map[string]any{"seed": 7}}), ai.WithPrompt("x"))
	if err != nil {
		t.Fatal(err)
	}
	b := rec.last(t).Body
	opts, _ := b["options"].(map[string]any)
	if opts["num_ctx"] != float64(4096) || opts["seed"] != float64(7) || b["think"] != false {
		t.Errorf("body = %v", b)
	}
	// Genkit's common config.
	temp := 0.2
	_, err = genkit.Generate(context.Background(), g, ai.WithModel(m),
		ai.WithConfig(&ai.GenerationCommonConfig{MaxOutputTokens: 99, Temperature: temp}), ai.WithPrompt("x"))
	if err != nil {
		t.Fatal(err)
	}
	opts, _ = rec.last(t).Body["options"].(map[string]any)
	if opts["num_predict"] != float64(99) || opts["temperature"] != 0.2 {
		t.Errorf("options = %v", opts)
	}
}

func TestOllamaStreaming(t *testing.T) {
	rec := newProviderRecorder(t, ollamaFakeReply)
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, "llama3")
	m, _ := p.Model(g, "llama3")
	var chunks []string
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("stream me"),
		ai.WithStreaming(func(ctx context.Context, c *ai.ModelResponseChunk) error {
			chunks = append(chunks, c.Text())
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(chunks, "|") != "echo: |stream me" {
		t.Errorf("chunks = %q", chunks)
	}
	if resp.Text() != "echo: stream me" {
		t.Errorf("text = %q", resp.Text())
	}
	if rec.last(t).Body["stream"] != true {
		t.Error("stream not requested")
	}
}

func TestGPUStackOptionsAndAuthReachTheWire(t *testing.T) {
	for _, tc := range []struct{ apiPath, wantPrefix string }{
		{"", "/v1/"},
		{"/v1-openai", "/v1-openai/"},
		{"v1-openai/", "/v1-openai/"},
	} {
		t.Run("path="+tc.apiPath, func(t *testing.T) {
			rec := newProviderRecorder(t, openAIFakeReply)
			const spec = "gpustack/qwen3-8b"
			p, g := providerGenkit(t, ProviderConfig{GPUStackURL: rec.srv.URL + "/", GPUStackAPIKey: "gpustack_secret", GPUStackAPIPath: tc.apiPath}, spec)
			m, err := p.Model(g, spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg := GenerateConfig(spec, GenerateOptions{NumCtx: 8192, MaxTokens: 300})
			resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithConfig(cfg), ai.WithPrompt("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text() != "echo: hi" {
				t.Errorf("text = %q", resp.Text())
			}
			r := rec.last(t)
			if r.Path != tc.wantPrefix+"chat/completions" {
				t.Errorf("path = %s, want %schat/completions", r.Path, tc.wantPrefix)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer gpustack_secret" {
				t.Errorf("Authorization = %q", got)
			}
			if r.Body["max_tokens"] != float64(300) {
				t.Errorf("max_tokens = %v", r.Body["max_tokens"])
			}
			kw, _ := r.Body["chat_template_kwargs"].(map[string]any)
			if v, ok := kw["enable_thinking"]; !ok || v != false {
				t.Errorf("chat_template_kwargs = %v, want enable_thinking false", r.Body["chat_template_kwargs"])
			}
			if _, ok := r.Body["num_ctx"]; ok {
				t.Error("num_ctx sent to GPUStack")
			}
			if r.Body["model"] != "qwen3-8b" {
				t.Errorf("model = %v", r.Body["model"])
			}
		})
	}
}

func TestGPUStackStreamingAndEmbeddings(t *testing.T) {
	rec := newProviderRecorder(t, openAIFakeReply)
	p, g := providerGenkit(t, ProviderConfig{GPUStackURL: rec.srv.URL, GPUStackAPIKey: "k"}, "gpustack/qwen3-8b", "gpustack/bge-m3")
	m, _ := p.Model(g, "gpustack/qwen3-8b")
	var chunks []string
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("abc"),
		ai.WithStreaming(func(ctx context.Context, c *ai.ModelResponseChunk) error {
			chunks = append(chunks, c.Text())
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(chunks, "|") != "echo: |abc" || resp.Text() != "echo: abc" {
		t.Errorf("chunks %q text %q", chunks, resp.Text())
	}
	if resp.Usage == nil || resp.Usage.TotalTokens != 6 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	emb, err := p.Embedder(g, "gpustack/bge-m3", 8)
	if err != nil {
		t.Fatal(err)
	}
	out, err := emb.Embed(context.Background(), &ai.EmbedRequest{Input: []*ai.Document{ai.DocumentFromText("one two", nil), ai.DocumentFromText("three", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Embeddings) != 2 || out.Embeddings[0].Embedding[0] != testVector("one two", 8)[0] || out.Embeddings[1].Embedding[3] != testVector("three", 8)[3] {
		t.Errorf("embeddings not placed by index: %v", out.Embeddings)
	}
	if r := rec.last(t); r.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("embed request %s %q", r.Path, r.Header.Get("Authorization"))
	}
}

func TestProviderDownNamesProviderAndAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: addr, GPUStackURL: addr}, "llama3", "gpustack/q")
	for _, spec := range []string{"llama3", "gpustack/q"} {
		m, err := p.Model(g, spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("x"))
		if err == nil {
			t.Fatalf("%s: no error from a server that is down", spec)
		}
		prov, _ := SplitModelSpec(spec)
		if !strings.Contains(err.Error(), prov) || !strings.Contains(err.Error(), addr) {
			t.Errorf("%s: error %q does not name provider and address", spec, err)
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || pe.Provider != prov {
			t.Errorf("%s: error is not a *ProviderError for %s: %v", spec, prov, err)
		}
	}
}

func TestProviderHTTPErrorStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"model \"nope\" not found, try pulling it first"}`, http.StatusNotFound)
	}))
	defer srv.Close()
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: srv.URL}, "nope")
	m, _ := p.Model(g, "nope")
	_, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("x"))
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 404 || !strings.Contains(pe.Body, "not found") {
		t.Fatalf("err = %v", err)
	}
}

func TestProviderTimeoutAndContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)

	p, g := providerGenkit(t, ProviderConfig{OllamaHost: srv.URL, Timeout: 50 * time.Millisecond}, "slow")
	m, _ := p.Model(g, "slow")
	_, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("LLM timeout: err = %v, want DeadlineExceeded", err)
	}

	p, g = providerGenkit(t, ProviderConfig{OllamaHost: srv.URL}, "slow")
	m, _ = p.Model(g, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller ctx: err = %v, want DeadlineExceeded", err)
	}
}

func TestGoogleAIAgainstFakeGemini(t *testing.T) {
	rec := newProviderRecorder(t, func(w http.ResponseWriter, path string, body map[string]any) {
		json.NewEncoder(w).Encode(map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": "gemini says hi"}}},
				"finishReason": "STOP",
			}},
		})
	})
	// The Gemini SDK reads its base URL override from the environment.
	t.Setenv("GOOGLE_GEMINI_BASE_URL", rec.srv.URL)
	p, g := providerGenkit(t, ProviderConfig{GeminiAPIKey: "test-key"}, "googleai/gemini-2.5-flash")
	if cfg := GenerateConfig("googleai/gemini-2.5-flash", GenerateOptions{MaxTokens: 10}); cfg != nil {
		t.Errorf("GenerateConfig for googleai = %v, want nil", cfg)
	}
	m, err := p.Model(g, "googleai/gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "gemini says hi" {
		t.Errorf("text = %q", resp.Text())
	}
	r := rec.last(t)
	if !strings.Contains(r.Path, "gemini-2.5-flash:generateContent") {
		t.Errorf("path = %s", r.Path)
	}
	if r.Header.Get("x-goog-api-key") != "test-key" {
		t.Errorf("api key header = %q", r.Header.Get("x-goog-api-key"))
	}
}

func TestProviderConfigFromEnv(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "http://ollama:11434")
	t.Setenv("GPUSTACK_URL", "http://gpu")
	t.Setenv("GPUSTACK_API_KEY", "secret")
	t.Setenv("GPUSTACK_API_PATH", "/v1-openai")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "g")
	t.Setenv("LLM_TIMEOUT", "90")
	cfg, err := ProviderConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := ProviderConfig{OllamaHost: "http://ollama:11434", GPUStackURL: "http://gpu", GPUStackAPIKey: "secret", GPUStackAPIPath: "/v1-openai", GeminiAPIKey: "g", Timeout: 90 * time.Second}
	if cfg != want {
		t.Errorf("cfg = %+v\nwant %+v", cfg, want)
	}
	for in, want := range map[string]time.Duration{"2m": 2 * time.Minute, "0": 0, "": 5 * time.Minute} {
		t.Setenv("LLM_TIMEOUT", in)
		cfg, err := ProviderConfigFromEnv()
		if err != nil || cfg.Timeout != want {
			t.Errorf("LLM_TIMEOUT=%q: %v, %v; want %v", in, cfg.Timeout, err, want)
		}
	}
	t.Setenv("LLM_TIMEOUT", "soon")
	if _, err := ProviderConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "LLM_TIMEOUT") {
		t.Errorf("bad LLM_TIMEOUT: err = %v", err)
	}
	// Secrets stay out of logs.
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("cfg", "providers", want)
	if strings.Contains(b.String(), "secret") || !strings.Contains(b.String(), "[set]") {
		t.Errorf("LogValue leaks or hides too much: %s", b.String())
	}
}

func TestOllamaModelWithDocs(t *testing.T) {
	rec := newProviderRecorder(t, ollamaFakeReply)
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: rec.srv.URL}, "llama3")
	m, _ := p.Model(g, "llama3")
	_, err := genkit.Generate(context.Background(), g, ai.WithModel(m),
		ai.WithDocs(ai.DocumentFromText("Die Kaution beträgt drei Monatsmieten.", nil)),
		ai.WithPrompt("Wie hoch ist die Kaution?"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := rec.last(t).Body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)["content"].(string)
	if !strings.Contains(last, "drei Monatsmieten") || !strings.Contains(last, "Wie hoch ist die Kaution?") {
		t.Errorf("documents not in the prompt: %q", last)
	}
}

func TestOllamaHostForms(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "http://localhost:11434",
		"ollama":                 "http://ollama:11434",
		"127.0.0.1:8080":         "http://127.0.0.1:8080",
		"https://llm.example/":   "https://llm.example",
		"http://gpu-box:11434/ ": "http://gpu-box:11434",
	} {
		p, err := NewProviders(ProviderConfig{OllamaHost: in}, nil, "m")
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := p.Plugins()[0].(*ollamaPlugin).base; got != want {
			t.Errorf("OllamaHost %q -> %q, want %q", in, got, want)
		}
	}
}

func TestGoogleAIEmbedderRequestsDimension(t *testing.T) {
	rec := newProviderRecorder(t, func(w http.ResponseWriter, path string, body map[string]any) {
		reqs, _ := body["requests"].([]any)
		var embs []any
		for _, r := range reqs {
			d, _ := r.(map[string]any)["outputDimensionality"].(float64)
			embs = append(embs, map[string]any{"values": make([]float32, int(d))})
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": embs})
	})
	t.Setenv("GOOGLE_GEMINI_BASE_URL", rec.srv.URL)
	p, g := providerGenkit(t, ProviderConfig{GeminiAPIKey: "k"}, "googleai/gemini-embedding-001")
	emb, err := p.Embedder(g, "googleai/gemini-embedding-001", 768)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := emb.Embed(context.Background(), &ai.EmbedRequest{Input: []*ai.Document{QueryDocument("q"), ai.DocumentFromText("p", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Embeddings) != 2 || len(resp.Embeddings[0].Embedding) != 768 {
		t.Fatalf("embeddings: %d", len(resp.Embeddings))
	}
	if r := rec.last(t); !strings.Contains(r.Path, "gemini-embedding-001:batchEmbedContents") {
		t.Errorf("path = %s", r.Path)
	}
}
