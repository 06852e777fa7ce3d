package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// openAIPlugin is this package's Genkit plugin for an OpenAI-compatible
// API (GPUStack): "<name>/<model>" resolves to a chat model
// (POST <base>/chat/completions) or an embedder (POST <base>/embeddings),
// where base already includes the API path (e.g. http://gpu:80/v1).
type openAIPlugin struct {
	name    string
	base    string
	apiKey  string
	client  *http.Client
	timeout time.Duration
}

// Name returns the provider name.
func (p *openAIPlugin) Name() string { return p.name }

// Init registers nothing up front: models resolve on demand.
func (p *openAIPlugin) Init(ctx context.Context) []api.Action { return nil }

// ListActions returns nothing: which models exist is the server's business.
func (p *openAIPlugin) ListActions(ctx context.Context) []api.ActionDesc { return nil }

// ResolveAction returns the chat model or embedder called name.
func (p *openAIPlugin) ResolveAction(atype api.ActionType, name string) api.Action {
	c := &openAIClient{base: p.base, model: name, http: providerHTTP{provider: p.name, client: p.client, timeout: p.timeout, apiKey: p.apiKey}}
	switch atype {
	case api.ActionTypeModel:
		return ai.NewModel(api.NewName(p.name, name), textModelOptions("GPUStack - "+name), c.generate).(api.Action)
	case api.ActionTypeEmbedder:
		return ai.NewEmbedder(api.NewName(p.name, name), &ai.EmbedderOptions{
			Label:    "GPUStack - " + name,
			Supports: &ai.EmbedderSupports{Input: []string{"text"}},
		}, c.embed).(api.Action)
	}
	return nil
}

// openAIClient talks to one model behind an OpenAI-compatible API.
type openAIClient struct {
	base  string
	model string
	http  providerHTTP
}

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIChatRequest struct {
	Model              string          `json:"model"`
	Messages           []openAIMessage `json:"messages"`
	Stream             bool            `json:"stream"`
	MaxTokens          int             `json:"max_tokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"top_p,omitempty"`
	Stop               []string        `json:"stop,omitempty"`
	ResponseFormat     map[string]any  `json:"response_format,omitempty"`
	ChatTemplateKwargs map[string]any  `json:"chat_template_kwargs,omitempty"`
	StreamOptions      map[string]any  `json:"stream_options,omitempty"`
}

type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type openAIChatResponse struct {
	Choices []struct {
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIUsage `json:"usage"`
}

// chatRequest builds the /chat/completions body for req.
func (c *openAIClient) chatRequest(req *ai.ModelRequest, stream bool) (*openAIChatRequest, error) {
	if err := checkTextOnly(c.http.provider, req.Messages); err != nil {
		return nil, err
	}
	cfg, err := decodeProviderConfig(req.Config)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.http.provider, c.model, err)
	}
	out := &openAIChatRequest{Model: c.model, Stream: stream, Temperature: cfg.Temperature, TopP: cfg.TopP, Stop: cfg.StopSequences}
	switch {
	case cfg.MaxTokens > 0:
		out.MaxTokens = cfg.MaxTokens
	case cfg.MaxOutputTokens > 0:
		out.MaxTokens = cfg.MaxOutputTokens
	case cfg.NumPredict > 0:
		out.MaxTokens = cfg.NumPredict
	}
	if len(cfg.ChatTemplateKwargs) > 0 {
		out.ChatTemplateKwargs = cfg.ChatTemplateKwargs
	}
	think := cfg.EnableThinking
	if think == nil {
		think = cfg.Think
	}
	if think != nil {
		if out.ChatTemplateKwargs == nil {
			out.ChatTemplateKwargs = make(map[string]any)
		}
		out.ChatTemplateKwargs["enable_thinking"] = *think
	}
	if stream {
		out.StreamOptions = map[string]any{"include_usage": true}
	}
	if o := req.Output; o != nil && o.Format == "json" {
		out.ResponseFormat = map[string]any{"type": "json_object"}
	}
	for _, m := range req.Messages {
		out.Messages = append(out.Messages, openAIMessage{Role: roleName(m.Role), Content: messageText(m)})
	}
	return out, nil
}

// generate implements ai.ModelFunc against POST /chat/completions,
// streaming server-sent events to cb when it is non-nil.
func (c *openAIClient) generate(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	body, err := c.chatRequest(req, cb != nil)
	if err != nil {
		return nil, err
	}
	url := c.base + "/chat/completions"
	if cb == nil {
		var r openAIChatResponse
		if err := c.http.postJSON(ctx, url, body, &r); err != nil {
			return nil, err
		}
		if len(r.Choices) == 0 {
			return nil, &ProviderError{Provider: c.http.provider, Address: url, Status: http.StatusOK, Err: fmt.Errorf("response has no choices")}
		}
		ch := r.Choices[0]
		return openAIResponse(req, ch.Message.ReasoningContent, ch.Message.Content, ch.FinishReason, r.Usage), nil
	}
	resp, cancel, err := c.http.post(ctx, url, body)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	var text, reasoning strings.Builder
	var finish string
	var usage *openAIUsage
	done := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // blank separators, comments, event: lines
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var r openAIChatResponse
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return nil, &ProviderError{Provider: c.http.provider, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("decode stream event: %w", err)}
		}
		if r.Usage != nil {
			usage = r.Usage
		}
		if len(r.Choices) == 0 {
			continue
		}
		d := r.Choices[0].Delta
		if r.Choices[0].FinishReason != "" {
			finish = r.Choices[0].FinishReason
		}
		chunk := &ai.ModelResponseChunk{Role: ai.RoleModel}
		if d.ReasoningContent != "" {
			reasoning.WriteString(d.ReasoningContent)
			chunk.Content = append(chunk.Content, ai.NewReasoningPart(d.ReasoningContent, nil))
		}
		if d.Content != "" {
			text.WriteString(d.Content)
			chunk.Content = append(chunk.Content, ai.NewTextPart(d.Content))
		}
		if len(chunk.Content) > 0 {
			if err := cb(ctx, chunk); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ProviderError{Provider: c.http.provider, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("read stream: %w", err)}
	}
	if !done && finish == "" {
		return nil, &ProviderError{Provider: c.http.provider, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("stream ended before [DONE]")}
	}
	return openAIResponse(req, reasoning.String(), text.String(), finish, usage), nil
}

// openAIResponse builds the Genkit response from the collected reply.
func openAIResponse(req *ai.ModelRequest, reasoning, text, finish string, usage *openAIUsage) *ai.ModelResponse {
	msg := &ai.Message{Role: ai.RoleModel}
	if reasoning != "" {
		msg.Content = append(msg.Content, ai.NewReasoningPart(reasoning, nil))
	}
	msg.Content = append(msg.Content, ai.NewTextPart(text))
	reason := ai.FinishReasonStop
	switch finish {
	case "length":
		reason = ai.FinishReasonLength
	case "content_filter":
		reason = ai.FinishReasonBlocked
	}
	out := &ai.ModelResponse{Request: req, Message: msg, FinishReason: reason}
	if usage != nil {
		out.Usage = &ai.GenerationUsage{InputTokens: usage.PromptTokens, OutputTokens: usage.CompletionTokens, TotalTokens: usage.TotalTokens}
	}
	return out
}

type openAIEmbedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type openAIEmbedResponse struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
}

// embed implements ai.EmbedderFunc against POST /embeddings, one request
// for all documents; the vectors are placed by their index field.
func (c *openAIClient) embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	body := openAIEmbedRequest{Model: c.model, Input: make([]string, len(req.Input))}
	for i, d := range req.Input {
		body.Input[i] = DocText(d)
	}
	resp := &ai.EmbedResponse{}
	if len(body.Input) == 0 {
		return resp, nil
	}
	url := c.base + "/embeddings"
	var r openAIEmbedResponse
	if err := c.http.postJSON(ctx, url, body, &r); err != nil {
		return nil, err
	}
	resp.Embeddings = make([]*ai.Embedding, len(body.Input))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(body.Input) || resp.Embeddings[d.Index] != nil {
			return nil, &ProviderError{Provider: c.http.provider, Address: url, Status: http.StatusOK, Err: fmt.Errorf("bad or repeated embedding index %d for %d inputs", d.Index, len(body.Input))}
		}
		resp.Embeddings[d.Index] = &ai.Embedding{Embedding: d.Embedding}
	}
	for i, e := range resp.Embeddings {
		if e == nil {
			return nil, &ProviderError{Provider: c.http.provider, Address: url, Status: http.StatusOK, Err: fmt.Errorf("no embedding for input %d", i)}
		}
	}
	return resp, nil
}
