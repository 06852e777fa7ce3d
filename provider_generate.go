package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// GenerateOptions are the provider-neutral generation settings that
// GenerateConfig maps onto each provider.
type GenerateOptions struct {
	// NumCtx is Ollama's context window in tokens (num_ctx); 0 keeps the
	// server's default. GPUStack fixes the window at deployment and
	// ignores it.
	NumCtx int
	// KeepAlive is how long Ollama keeps the model loaded after a request
	// (keep_alive, e.g. "10m", "-1" for ever); "" keeps the server default.
	KeepAlive string
	// Think enables the model's reasoning ("thinking") output. Off by
	// default: the pipelines here ask for fixed output shapes and never
	// read reasoning tokens.
	Think bool
	// MaxTokens caps the generated tokens (Ollama num_predict, GPUStack
	// max_tokens); 0 means no cap.
	MaxTokens int
}

// GenerateOptionsFromEnv returns the GenerateOptions described by
// OLLAMA_NUM_CTX (a positive integer), OLLAMA_KEEP_ALIVE and OLLAMA_THINK
// (a boolean such as "true", "1", "false"). Unset variables keep the zero
// value; an unparsable one is an error naming it.
func GenerateOptionsFromEnv() (GenerateOptions, error) {
	var o GenerateOptions
	if s := strings.TrimSpace(os.Getenv("OLLAMA_NUM_CTX")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return o, fmt.Errorf("OLLAMA_NUM_CTX=%q: want a non-negative integer", s)
		}
		o.NumCtx = n
	}
	o.KeepAlive = strings.TrimSpace(os.Getenv("OLLAMA_KEEP_ALIVE"))
	if s := strings.TrimSpace(os.Getenv("OLLAMA_THINK")); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return o, fmt.Errorf("OLLAMA_THINK=%q: want true or false: %w", s, err)
		}
		o.Think = b
	}
	return o, nil
}

// ollamaConfig is the request config this package's Ollama models
// understand; GenerateConfig returns one for ollama/ specs. Its JSON form
// uses Ollama's names, and a map of those names (a .prompt file's config,
// an app's temperature or further options) is read the same way; Genkit's
// common config names (maxOutputTokens, temperature, topK, topP,
// stopSequences) are accepted too.
type ollamaConfig struct {
	// NumCtx is options.num_ctx; 0 leaves it out.
	NumCtx int `json:"num_ctx,omitempty"`
	// NumPredict is options.num_predict; 0 leaves it out.
	NumPredict int `json:"num_predict,omitempty"`
	// KeepAlive is keep_alive; "" leaves it out.
	KeepAlive string `json:"keep_alive,omitempty"`
	// Think is think; nil leaves it out (the server then decides).
	Think *bool `json:"think,omitempty"`
	// Temperature is options.temperature; nil leaves it out.
	Temperature *float64 `json:"temperature,omitempty"`
	// Options are further entries of Ollama's options object (top_k,
	// seed, ...); the fields above take precedence.
	Options map[string]any `json:"options,omitempty"`
}

// gpustackConfig is the request config this package's GPUStack models
// understand; GenerateConfig returns one for gpustack/ specs (an app sets
// more with a map of the same JSON names). Its JSON form
// uses the OpenAI names; Genkit's common config names are accepted too.
type gpustackConfig struct {
	// MaxTokens is max_tokens; 0 leaves it out.
	MaxTokens int `json:"max_tokens,omitempty"`
	// EnableThinking is chat_template_kwargs.enable_thinking; nil leaves
	// chat_template_kwargs out.
	EnableThinking *bool `json:"enable_thinking,omitempty"`
	// Temperature is temperature; nil leaves it out.
	Temperature *float64 `json:"temperature,omitempty"`
}

// GenerateConfig returns the model config for spec built from opts, to
// pass with ai.WithConfig (or PromptOptions): for Ollama one with num_ctx,
// keep_alive, think and num_predict; for GPUStack one with max_tokens and
// chat_template_kwargs.enable_thinking
// (NumCtx is ignored there); nil for Google AI, where a token cap would
// also count thinking tokens. Thinking is always sent explicitly (false
// unless opts.Think).
func GenerateConfig(spec string, opts GenerateOptions) any {
	prov, _ := SplitModelSpec(spec)
	think := opts.Think
	switch prov {
	case ProviderOllama:
		return &ollamaConfig{NumCtx: opts.NumCtx, NumPredict: opts.MaxTokens, KeepAlive: opts.KeepAlive, Think: &think}
	case ProviderGPUStack:
		return &gpustackConfig{MaxTokens: opts.MaxTokens, EnableThinking: &think}
	}
	return nil
}

// providerRequestConfig is the union of the config names our models read:
// provider-specific ones and Genkit's ai.GenerationCommonConfig names.
type providerRequestConfig struct {
	ollamaConfig
	MaxTokens          int            `json:"max_tokens,omitempty"`
	EnableThinking     *bool          `json:"enable_thinking,omitempty"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
	MaxOutputTokens    int            `json:"maxOutputTokens,omitempty"`
	TopK               int            `json:"topK,omitempty"`
	TopP               *float64       `json:"topP,omitempty"`
	StopSequences      []string       `json:"stopSequences,omitempty"`
}

// decodeProviderConfig reads a request's config, whatever its Go type (our
// config structs, ai.GenerationCommonConfig, a map), through its JSON form.
func decodeProviderConfig(cfg any) (providerRequestConfig, error) {
	var out providerRequestConfig
	if cfg == nil {
		return out, nil
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return out, fmt.Errorf("model config %T is not JSON-encodable: %w", cfg, err)
	}
	if string(b) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("model config %s: %w", b, err)
	}
	return out, nil
}
