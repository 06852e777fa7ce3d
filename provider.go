package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/googlegenai"
	"google.golang.org/genai"
)

// Provider names: the part of a model spec before the first "/".
const (
	// ProviderOllama is a local (or self-hosted) Ollama server.
	ProviderOllama = "ollama"
	// ProviderGPUStack is a GPUStack cluster reached through its
	// OpenAI-compatible API.
	ProviderGPUStack = "gpustack"
	// ProviderGoogleAI is Google's Gemini API.
	ProviderGoogleAI = "googleai"
)

// Defaults used when the corresponding ProviderConfig field is empty (or,
// for the timeout, LLM_TIMEOUT is unset); the fields document them.
const (
	defaultOllamaHost      = "http://localhost:11434"
	defaultGPUStackAPIPath = "/v1"
	defaultLLMTimeout      = 5 * time.Minute
)

// Errors returned by NewProviders, Model and Embedder; test with errors.Is.
var (
	// ErrUnknownProvider is returned by NewProviders for an entry of its
	// allowed list that is not ProviderOllama, ProviderGPUStack or
	// ProviderGoogleAI. A spec never gives it: one without a known prefix
	// is an Ollama model name ("openai/gpt-4o" too; SplitModelSpec).
	ErrUnknownProvider = errors.New("unknown model provider")
	// ErrProviderNotAllowed is returned for a spec naming a provider that
	// the allowed list of NewProviders excludes.
	ErrProviderNotAllowed = errors.New("model provider not allowed")
	// ErrProviderConfig is returned when a spec names a provider whose
	// settings are missing (GPUSTACK_URL, GEMINI_API_KEY) or invalid.
	ErrProviderConfig = errors.New("model provider misconfigured")
	// ErrProviderNotSetUp is returned by Model and Embedder for a spec
	// whose provider was not named by any spec given to NewProviders, or
	// whose plugin is missing from the Genkit instance.
	ErrProviderNotSetUp = errors.New("model provider not set up")
)

// ProviderError is the error of a request to a model server: it names the
// provider and the address, and carries the HTTP status and the start of
// the response body when the server answered. It unwraps to the transport
// error (for example a refused connection or context.DeadlineExceeded).
// After retries (see ProviderConfig.Timeout) it describes the last attempt.
type ProviderError struct {
	// Provider is ProviderOllama or ProviderGPUStack.
	Provider string
	// Address is the URL the request went to.
	Address string
	// Status is the HTTP status code, 0 when no response arrived.
	Status int
	// Body is the start of the response body of a failed request.
	Body string
	// Err is the underlying error, if any.
	Err error
}

// Error returns a message naming provider, address and what failed.
func (e *ProviderError) Error() string {
	switch {
	case e.Err != nil && e.Status == 0:
		return fmt.Sprintf("%s at %s: %v", e.Provider, e.Address, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("%s at %s: HTTP %d: %v", e.Provider, e.Address, e.Status, e.Err)
	default:
		return fmt.Sprintf("%s at %s: HTTP %d: %s", e.Provider, e.Address, e.Status, e.Body)
	}
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// ProviderConfig holds the connection settings of every provider. Only the
// settings of providers that a spec names are checked.
type ProviderConfig struct {
	// OllamaHost is the Ollama base URL; "" means http://localhost:11434. As
	// with Ollama's own client, a value without scheme gets "http://" and,
	// without port, ":11434" ("ollama" means http://ollama:11434).
	OllamaHost string
	// GPUStackURL is the GPUStack server's base URL, required for a
	// gpustack/ spec.
	GPUStackURL string
	// GPUStackAPIKey is sent as a bearer token to GPUStack.
	GPUStackAPIKey string
	// GPUStackAPIPath is the path of the OpenAI-compatible API below
	// GPUStackURL; "" means "/v1" (older GPUStack releases serve it under
	// "/v1-openai").
	GPUStackAPIPath string
	// GeminiAPIKey is the Gemini API key, required for a googleai/ spec.
	// NewProviders does not read the environment for it: fill it with
	// ProviderConfigFromEnv (GEMINI_API_KEY) or set it yourself.
	GeminiAPIKey string
	// Timeout bounds every request attempt to Ollama and GPUStack (on top
	// of the caller's context, whichever ends first); 0 means no bound
	// besides the context. Transient failures (connection refused, HTTP
	// 429 and 503) are retried up to 3 times with capped exponential
	// backoff and jitter, honouring a Retry-After of up to 30 seconds; a
	// response that has started is never repeated.
	Timeout time.Duration
	// HTTPClient is used for Ollama and GPUStack requests; nil means a
	// client with Go's default transport.
	HTTPClient *http.Client
}

// LogValue implements slog.LogValuer: API keys are reported only as set or
// unset, never their value.
func (c ProviderConfig) LogValue() slog.Value {
	redact := func(s string) string {
		if s == "" {
			return ""
		}
		return "[set]"
	}
	return slog.GroupValue(
		slog.String("ollamaHost", c.OllamaHost),
		slog.String("gpustackURL", c.GPUStackURL),
		slog.String("gpustackAPIPath", c.GPUStackAPIPath),
		slog.String("gpustackAPIKey", redact(c.GPUStackAPIKey)),
		slog.String("geminiAPIKey", redact(c.GeminiAPIKey)),
		slog.Duration("timeout", c.Timeout),
	)
}

// ProviderConfigFromEnv returns the ProviderConfig described by the
// environment: OLLAMA_HOST, GPUSTACK_URL, GPUSTACK_API_KEY,
// GPUSTACK_API_PATH, GEMINI_API_KEY (GOOGLE_API_KEY as a fallback, as the
// Gemini SDK does) and LLM_TIMEOUT (a Go duration such as "90s", or whole
// seconds; unset means 5 minutes, "0" means no timeout). It fails
// only on an unparsable LLM_TIMEOUT.
func ProviderConfigFromEnv() (ProviderConfig, error) {
	cfg := ProviderConfig{
		OllamaHost:      os.Getenv("OLLAMA_HOST"),
		GPUStackURL:     os.Getenv("GPUSTACK_URL"),
		GPUStackAPIKey:  os.Getenv("GPUSTACK_API_KEY"),
		GPUStackAPIPath: os.Getenv("GPUSTACK_API_PATH"),
		GeminiAPIKey:    os.Getenv("GEMINI_API_KEY"),
		Timeout:         defaultLLMTimeout,
	}
	if cfg.GeminiAPIKey == "" {
		cfg.GeminiAPIKey = os.Getenv("GOOGLE_API_KEY")
	}
	if s := strings.TrimSpace(os.Getenv("LLM_TIMEOUT")); s != "" {
		d, err := parseSecondsOrDuration(s)
		if err != nil {
			return cfg, fmt.Errorf("LLM_TIMEOUT=%q: %w", s, err)
		}
		cfg.Timeout = d
	}
	return cfg, nil
}

// parseSecondsOrDuration parses "90s"/"2m" or a whole number of seconds.
func parseSecondsOrDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("negative duration %d", n)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration like 90s or whole seconds: %w", err)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", d)
	}
	return d, nil
}

// SplitModelSpec splits a model spec into provider and model name:
// "gpustack/qwen3-8b" gives ("gpustack", "qwen3-8b"). A spec without a
// known provider prefix is an Ollama model name, so "mxbai-embed-large" and
// "library/foo:7b" give ("ollama", spec). Surrounding space is trimmed.
func SplitModelSpec(spec string) (provider, model string) {
	spec = strings.TrimSpace(spec)
	if p, m, ok := strings.Cut(spec, "/"); ok {
		switch p {
		case ProviderOllama, ProviderGPUStack, ProviderGoogleAI:
			return p, m
		}
	}
	return ProviderOllama, spec
}

// Providers resolves model specs to Genkit models and embedders. Create it
// with NewProviders, pass Plugins to genkit.Init, then call Model and
// Embedder. It is safe for concurrent use.
type Providers struct {
	cfg     ProviderConfig
	used    []string // providers named by the specs, in first-seen order
	plugins []api.Plugin

	mu     sync.Mutex
	models map[*genkit.Genkit]map[string]ai.Model
}

// NewProviders checks the specs and prepares a plugin for each provider
// they name (and for no other). Empty specs are skipped, so optional
// settings such as an unset RERANK_MODEL can be passed as they are.
// allowed, when non-nil, lists the providers a spec may name; a spec
// naming another provider gives an error wrapping ErrProviderNotAllowed
// before anything is sent anywhere. A gpustack/ spec without
// cfg.GPUStackURL, or a googleai/ spec without cfg.GeminiAPIKey, gives an
// error wrapping ErrProviderConfig, as does a spec with an empty model
// name ("gpustack/"); an unknown allowed entry one wrapping
// ErrUnknownProvider. NewProviders makes no network request.
func NewProviders(cfg ProviderConfig, allowed []string, specs ...string) (*Providers, error) {
	for _, a := range allowed {
		if !knownProvider(a) {
			return nil, fmt.Errorf("allowed providers: %w %q (want %s, %s or %s)", ErrUnknownProvider, a, ProviderOllama, ProviderGPUStack, ProviderGoogleAI)
		}
	}
	p := &Providers{cfg: cfg, models: make(map[*genkit.Genkit]map[string]ai.Model)}
	for _, spec := range specs {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		prov, name := SplitModelSpec(spec)
		if name == "" {
			return nil, fmt.Errorf("model spec %q: %w: empty model name", spec, ErrProviderConfig)
		}
		if allowed != nil && !slices.Contains(allowed, prov) {
			return nil, fmt.Errorf("model spec %q: %w: %s (allowed: %s)", spec, ErrProviderNotAllowed, prov, strings.Join(allowed, ", "))
		}
		if slices.Contains(p.used, prov) {
			continue
		}
		plugin, err := newProviderPlugin(cfg, prov)
		if err != nil {
			return nil, fmt.Errorf("model spec %q: %w", spec, err)
		}
		p.used = append(p.used, prov)
		p.plugins = append(p.plugins, plugin)
	}
	return p, nil
}

func knownProvider(p string) bool {
	return p == ProviderOllama || p == ProviderGPUStack || p == ProviderGoogleAI
}

// newProviderPlugin validates cfg for prov and returns its Genkit plugin.
func newProviderPlugin(cfg ProviderConfig, prov string) (api.Plugin, error) {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	switch prov {
	case ProviderOllama:
		host := strings.TrimSpace(cfg.OllamaHost)
		if host == "" {
			host = defaultOllamaHost
		}
		bare := !strings.Contains(host, "://")
		if bare {
			host = "http://" + host
		}
		u, err := url.Parse(host)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("%w: OLLAMA_HOST %q is not an http(s) address", ErrProviderConfig, cfg.OllamaHost)
		}
		if bare && u.Port() == "" {
			// As Ollama's own client does: "ollama" means ollama:11434.
			u.Host += ":11434"
			host = u.String()
		}
		return &ollamaPlugin{base: strings.TrimRight(host, "/"), client: client, timeout: cfg.Timeout}, nil
	case ProviderGPUStack:
		if strings.TrimSpace(cfg.GPUStackURL) == "" {
			return nil, fmt.Errorf("%w: gpustack needs GPUSTACK_URL (ProviderConfig.GPUStackURL)", ErrProviderConfig)
		}
		path := strings.TrimSpace(cfg.GPUStackAPIPath)
		if path == "" {
			path = defaultGPUStackAPIPath
		}
		base := strings.TrimRight(strings.TrimSpace(cfg.GPUStackURL), "/") + "/" + strings.Trim(path, "/")
		if u, err := url.Parse(base); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("%w: GPUSTACK_URL %q is not an http(s) address", ErrProviderConfig, cfg.GPUStackURL)
		}
		return &openAIPlugin{name: ProviderGPUStack, base: base, apiKey: cfg.GPUStackAPIKey, client: client, timeout: cfg.Timeout}, nil
	case ProviderGoogleAI:
		if strings.TrimSpace(cfg.GeminiAPIKey) == "" {
			return nil, fmt.Errorf("%w: googleai needs GEMINI_API_KEY (ProviderConfig.GeminiAPIKey)", ErrProviderConfig)
		}
		return &googlegenai.GoogleAI{APIKey: cfg.GeminiAPIKey}, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownProvider, prov)
}

// Plugins returns the Genkit plugins for the providers the specs named, to
// pass to genkit.Init(ctx, genkit.WithPlugins(p.Plugins()...)). Each
// plugin value may be passed to one genkit.Init only (Genkit's Google AI
// plugin refuses a second Init); build a new Providers for another
// instance. The Ollama and GPUStack plugins are this package's own and are
// named "ollama" and "gpustack", so they cannot be combined with Genkit's
// ollama plugin in one instance.
func (p *Providers) Plugins() []api.Plugin {
	return slices.Clone(p.plugins)
}

// checkSpec returns the registry name for spec or an error if its provider
// was not set up by NewProviders.
func (p *Providers) checkSpec(g *genkit.Genkit, spec string) (prov, name string, err error) {
	if g == nil {
		return "", "", fmt.Errorf("model spec %q: %w: nil *genkit.Genkit", spec, ErrProviderNotSetUp)
	}
	prov, name = SplitModelSpec(spec)
	if name == "" {
		return "", "", fmt.Errorf("model spec %q: %w: empty model name", spec, ErrProviderConfig)
	}
	if !slices.Contains(p.used, prov) {
		return "", "", fmt.Errorf("model spec %q: %w: %s was not named by a spec given to NewProviders", spec, ErrProviderNotSetUp, prov)
	}
	if genkit.LookupPlugin(g, prov) == nil {
		return "", "", fmt.Errorf("model spec %q: %w: plugin %q missing from this Genkit instance (pass Providers.Plugins to genkit.Init)", spec, ErrProviderNotSetUp, prov)
	}
	return prov, name, nil
}

// Model returns the Genkit model for spec. The same spec (and the same
// Genkit instance) gives the same ai.Model value, so answer and rerank
// model can be resolved separately and compared with ==.
func (p *Providers) Model(g *genkit.Genkit, spec string) (ai.Model, error) {
	prov, name, err := p.checkSpec(g, spec)
	if err != nil {
		return nil, err
	}
	key := prov + "/" + name
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.models[g][key]; ok {
		return m, nil
	}
	m := genkit.LookupModel(g, key)
	if m == nil {
		return nil, fmt.Errorf("model spec %q: %w: %s did not resolve model %q", spec, ErrProviderNotSetUp, prov, name)
	}
	if p.models[g] == nil {
		p.models[g] = make(map[string]ai.Model)
	}
	p.models[g][key] = m
	return m, nil
}

// Embedder returns the embedder for spec, wrapped with NewPrefixEmbedder
// (so queries built with QueryDocument get the model's query prefix).
// dim > 0 is the dimension the caller's store expects: a response vector of
// another length is an error rather than an index of mismatched vectors
// (for Google AI, dim is also requested as outputDimensionality).
// dim <= 0 skips that check.
func (p *Providers) Embedder(g *genkit.Genkit, spec string, dim int) (ai.Embedder, error) {
	prov, name, err := p.checkSpec(g, spec)
	if err != nil {
		return nil, err
	}
	emb := genkit.LookupEmbedder(g, prov+"/"+name)
	if emb == nil {
		return nil, fmt.Errorf("embedding spec %q: %w: %s did not resolve embedder %q", spec, ErrProviderNotSetUp, prov, name)
	}
	if dim > 0 {
		if prov == ProviderGoogleAI {
			// Gemini embedding models can shorten their vectors
			// (outputDimensionality); ask for dim unless the caller
			// passes options of their own.
			emb = &geminiDimEmbedder{Embedder: emb, dim: int32(dim)}
		}
		emb = &dimCheckEmbedder{Embedder: emb, dim: dim}
	}
	return NewPrefixEmbedder(emb, name), nil
}

// geminiDimEmbedder requests dim-long vectors from a Gemini embedder.
type geminiDimEmbedder struct {
	ai.Embedder
	dim int32
}

func (e *geminiDimEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	if req != nil && req.Options == nil {
		d := e.dim
		req = &ai.EmbedRequest{Input: req.Input, Options: &genai.EmbedContentConfig{OutputDimensionality: &d}}
	}
	return e.Embedder.Embed(ctx, req)
}

// dimCheckEmbedder rejects embeddings whose length is not dim.
type dimCheckEmbedder struct {
	ai.Embedder
	dim int
}

func (e *dimCheckEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	resp, err := e.Embedder.Embed(ctx, req)
	if err != nil {
		return nil, err
	}
	for i, emb := range resp.Embeddings {
		if emb != nil && len(emb.Embedding) != e.dim {
			return nil, fmt.Errorf("embedder %s: vector %d has dimension %d, want %d (wrong model or embedding dimension setting)", e.Name(), i, len(emb.Embedding), e.dim)
		}
	}
	return resp, nil
}

// providerHTTP is the HTTP side shared by the Ollama and GPUStack clients.
type providerHTTP struct {
	provider string
	client   *http.Client
	timeout  time.Duration
	apiKey   string
	// retry tunes the retries of post; nil means the package policy.
	retry *providerRetry
}

// post sends body as JSON to url and returns the response, whose body the
// caller closes; a non-2xx status is returned as a *ProviderError. cancel
// must be called when the caller is done with the body. Transient failures
// (connection refused, 429, 503) are retried with capped exponential
// backoff and jitter, honouring Retry-After and ctx (see providerClassify);
// once a 2xx response is returned nothing is retried, so a stream is never
// replayed after its first byte. The timeout applies to each attempt.
func (h providerHTTP) post(ctx context.Context, url string, body any) (*http.Response, context.CancelFunc, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: encode request: %w", h.provider, err)
	}
	type answer struct {
		resp   *http.Response
		cancel context.CancelFunc
	}
	a, err := providerDo(ctx, h.retry, func() (answer, error) {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if h.timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, h.timeout)
		}
		req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(payload))
		if err != nil {
			cancel()
			return answer{}, backoff.Permanent(&ProviderError{Provider: h.provider, Address: url, Err: err})
		}
		req.Header.Set("Content-Type", "application/json")
		if h.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+h.apiKey)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			cancel()
			return answer{}, providerClassify(&ProviderError{Provider: h.provider, Address: url, Err: err}, nil, 0)
		}
		if resp.StatusCode/100 != 2 {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
			resp.Body.Close()
			cancel()
			perr := &ProviderError{Provider: h.provider, Address: url, Status: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
			return answer{}, providerClassify(perr, resp.Header, h.retry.retryAfterLimit())
		}
		return answer{resp, cancel}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return a.resp, a.cancel, nil
}

// postJSON posts body and decodes the JSON response into out.
func (h providerHTTP) postJSON(ctx context.Context, url string, body, out any) error {
	resp, cancel, err := h.post(ctx, url, body)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(out); err != nil {
		return &ProviderError{Provider: h.provider, Address: url, Status: resp.StatusCode, Err: fmt.Errorf("decode response: %w", err)}
	}
	return nil
}

// messageText returns the text of m's text parts (reasoning parts excluded).
func messageText(m *ai.Message) string {
	var b strings.Builder
	for _, p := range m.Content {
		if p != nil && p.IsText() {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// checkTextOnly rejects message content this package's models cannot send.
func checkTextOnly(provider string, msgs []*ai.Message) error {
	for _, m := range msgs {
		for _, p := range m.Content {
			if p == nil || p.IsText() || p.IsReasoning() {
				continue
			}
			return fmt.Errorf("%s: only text content is supported, got a %s part", provider, partKind(p))
		}
	}
	return nil
}

func partKind(p *ai.Part) string {
	switch {
	case p.IsMedia():
		return "media"
	case p.IsToolRequest():
		return "tool request"
	case p.IsToolResponse():
		return "tool response"
	case p.IsData():
		return "data"
	}
	return "non-text"
}

// roleName maps Genkit roles to the chat roles Ollama and OpenAI use.
func roleName(r ai.Role) string {
	switch r {
	case ai.RoleModel:
		return "assistant"
	case ai.RoleSystem:
		return "system"
	case ai.RoleTool:
		return "tool"
	}
	return "user"
}

// textModelOptions are the capabilities of this package's chat models.
func textModelOptions(label string) *ai.ModelOptions {
	return &ai.ModelOptions{
		Label: label,
		Supports: &ai.ModelSupports{
			Multiturn:   true,
			SystemRole:  true,
			Constrained: ai.ConstrainedSupportNone,
		},
	}
}
