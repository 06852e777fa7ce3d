package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// ollamaPlugin is this package's Genkit plugin for Ollama. Unlike Genkit's
// own ollama plugin (v1.4.0), it sends options (num_ctx, num_predict,
// temperature, ...), keep_alive and think, and resolves any model name on
// demand: "ollama/<name>" is a chat model (POST /api/chat) when looked up
// as a model and an embedder (POST /api/embed) when looked up as one.
type ollamaPlugin struct {
	base    string
	client  *http.Client
	timeout time.Duration
}

// Name returns "ollama".
func (p *ollamaPlugin) Name() string { return ProviderOllama }

// Init registers nothing up front: models resolve on demand.
func (p *ollamaPlugin) Init(ctx context.Context) []api.Action { return nil }

// ListActions returns nothing: which models exist is the server's business.
func (p *ollamaPlugin) ListActions(ctx context.Context) []api.ActionDesc { return nil }

// ResolveAction returns the chat model or embedder called name.
func (p *ollamaPlugin) ResolveAction(atype api.ActionType, name string) api.Action {
	c := &ollamaClient{base: p.base, model: name, http: providerHTTP{provider: ProviderOllama, client: p.client, timeout: p.timeout}}
	switch atype {
	case api.ActionTypeModel:
		return ai.NewModel(api.NewName(ProviderOllama, name), textModelOptions("Ollama - "+name), c.generate).(api.Action)
	case api.ActionTypeEmbedder:
		return ai.NewEmbedder(api.NewName(ProviderOllama, name), &ai.EmbedderOptions{
			Label:    "Ollama - " + name,
			Supports: &ai.EmbedderSupports{Input: []string{"text"}},
		}, c.embed).(api.Action)
	}
	return nil
}

// ollamaClient talks to one model on one Ollama server.
type ollamaClient struct {
	base  string
	model string
	http  providerHTTP
}

type ollamaChatMessage struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"`
}

type ollamaChatRequest struct {
	Model     string              `json:"model"`
	Messages  []ollamaChatMessage `json:"messages"`
	Stream    bool                `json:"stream"`
	Format    any                 `json:"format,omitempty"`
	Options   map[string]any      `json:"options,omitempty"`
	KeepAlive string              `json:"keep_alive,omitempty"`
	Think     *bool               `json:"think,omitempty"`
}

type ollamaChatResponse struct {
	Model           string            `json:"model"`
	Message         ollamaChatMessage `json:"message"`
	Done            bool              `json:"done"`
	DoneReason      string            `json:"done_reason"`
	PromptEvalCount int               `json:"prompt_eval_count"`
	EvalCount       int               `json:"eval_count"`
	Error           string            `json:"error"`
}

// chatRequest builds the /api/chat body for req.
func (c *ollamaClient) chatRequest(req *ai.ModelRequest, stream bool) (*ollamaChatRequest, error) {
	if err := checkTextOnly(ProviderOllama, req.Messages); err != nil {
		return nil, err
	}
	cfg, err := decodeProviderConfig(req.Config)
	if err != nil {
		return nil, fmt.Errorf("ollama %s: %w", c.model, err)
	}
	out := &ollamaChatRequest{Model: c.model, Stream: stream, KeepAlive: cfg.KeepAlive, Think: cfg.Think}
	if out.Think == nil {
		out.Think = cfg.EnableThinking
	}
	opts := maps.Clone(cfg.Options)
	set := func(k string, v any) {
		if opts == nil {
			opts = make(map[string]any)
		}
		opts[k] = v
	}
	if cfg.NumCtx > 0 {
		set("num_ctx", cfg.NumCtx)
	}
	switch {
	case cfg.NumPredict > 0:
		set("num_predict", cfg.NumPredict)
	case cfg.MaxOutputTokens > 0:
		set("num_predict", cfg.MaxOutputTokens)
	case cfg.MaxTokens > 0:
		set("num_predict", cfg.MaxTokens)
	}
	if cfg.Temperature != nil {
		set("temperature", *cfg.Temperature)
	}
	if cfg.TopK > 0 {
		set("top_k", cfg.TopK)
	}
	if cfg.TopP != nil {
		set("top_p", *cfg.TopP)
	}
	if len(cfg.StopSequences) > 0 {
		set("stop", cfg.StopSequences)
	}
	out.Options = opts
	if o := req.Output; o != nil && o.Format == "json" {
		if o.Constrained && len(o.Schema) > 0 {
			out.Format = o.Schema
		} else {
			out.Format = "json"
		}
	}
	for _, m := range req.Messages {
		out.Messages = append(out.Messages, ollamaChatMessage{Role: roleName(m.Role), Content: messageText(m)})
	}
	return out, nil
}

// generate implements ai.ModelFunc against POST /api/chat, streaming NDJSON
// chunks to cb when it is non-nil.
func (c *ollamaClient) generate(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	body, err := c.chatRequest(req, cb != nil)
	if err != nil {
		return nil, err
	}
	url := c.base + "/api/chat"
	if cb == nil {
		var r ollamaChatResponse
		if err := c.http.postJSON(ctx, url, body, &r); err != nil {
			return nil, err
		}
		if r.Error != "" {
			return nil, &ProviderError{Provider: ProviderOllama, Address: url, Status: http.StatusOK, Body: r.Error}
		}
		return ollamaResponse(req, r.Message.Thinking, r.Message.Content, r), nil
	}
	resp, cancel, err := c.http.post(ctx, url, body)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	var text, thinking strings.Builder
	var last ollamaChatResponse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r ollamaChatResponse
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, &ProviderError{Provider: ProviderOllama, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("decode stream line: %w", err)}
		}
		if r.Error != "" {
			return nil, &ProviderError{Provider: ProviderOllama, Address: url, Status: resp.StatusCode, Body: r.Error}
		}
		chunk := &ai.ModelResponseChunk{Role: ai.RoleModel}
		if r.Message.Thinking != "" {
			thinking.WriteString(r.Message.Thinking)
			chunk.Content = append(chunk.Content, ai.NewReasoningPart(r.Message.Thinking, nil))
		}
		if r.Message.Content != "" {
			text.WriteString(r.Message.Content)
			chunk.Content = append(chunk.Content, ai.NewTextPart(r.Message.Content))
		}
		if len(chunk.Content) > 0 {
			if err := cb(ctx, chunk); err != nil {
				return nil, err
			}
		}
		last = r
		if r.Done {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ProviderError{Provider: ProviderOllama, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("read stream: %w", err)}
	}
	if !last.Done {
		return nil, &ProviderError{Provider: ProviderOllama, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("stream ended before done")}
	}
	return ollamaResponse(req, thinking.String(), text.String(), last), nil
}

// ollamaResponse builds the Genkit response from the collected reply.
func ollamaResponse(req *ai.ModelRequest, thinking, text string, last ollamaChatResponse) *ai.ModelResponse {
	msg := &ai.Message{Role: ai.RoleModel}
	if thinking != "" {
		msg.Content = append(msg.Content, ai.NewReasoningPart(thinking, nil))
	}
	msg.Content = append(msg.Content, ai.NewTextPart(text))
	reason := ai.FinishReasonStop
	if last.DoneReason == "length" {
		reason = ai.FinishReasonLength
	}
	return &ai.ModelResponse{
		Request:      req,
		Message:      msg,
		FinishReason: reason,
		Usage: &ai.GenerationUsage{
			InputTokens:  last.PromptEvalCount,
			OutputTokens: last.EvalCount,
			TotalTokens:  last.PromptEvalCount + last.EvalCount,
		},
	}
}

type ollamaEmbedRequest struct {
	Model     string         `json:"model"`
	Input     []string       `json:"input"`
	KeepAlive string         `json:"keep_alive,omitempty"`
	Options   map[string]any `json:"options,omitempty"`
}

type ollamaEmbedResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
}

// embed implements ai.EmbedderFunc against POST /api/embed, one request
// for all documents. req.Options may carry keep_alive and num_ctx
// (a map with those names, or GenerateConfig's result).
func (c *ollamaClient) embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	cfg, err := decodeProviderConfig(req.Options)
	if err != nil {
		return nil, fmt.Errorf("ollama %s: %w", c.model, err)
	}
	body := ollamaEmbedRequest{Model: c.model, Input: make([]string, len(req.Input)), KeepAlive: cfg.KeepAlive}
	if cfg.NumCtx > 0 {
		body.Options = map[string]any{"num_ctx": cfg.NumCtx}
	}
	for i, d := range req.Input {
		body.Input[i] = DocText(d)
	}
	resp := &ai.EmbedResponse{}
	if len(body.Input) == 0 {
		return resp, nil
	}
	url := c.base + "/api/embed"
	var r ollamaEmbedResponse
	if err := c.http.postJSON(ctx, url, body, &r); err != nil {
		return nil, err
	}
	if len(r.Embeddings) != len(body.Input) {
		return nil, &ProviderError{Provider: ProviderOllama, Address: url, Status: http.StatusOK, Err: fmt.Errorf("got %d embeddings for %d inputs", len(r.Embeddings), len(body.Input))}
	}
	for _, v := range r.Embeddings {
		resp.Embeddings = append(resp.Embeddings, &ai.Embedding{Embedding: v})
	}
	return resp, nil
}
