package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// otherProviders are the prefixes of model providers askyourdocs does not
// speak: a spec such as "openai/gpt-4o" is refused instead of being sent
// to Ollama as a model of that name.
var otherProviders = []string{"openai", "anthropic", "azure", "azureopenai", "mistral", "groq", "cohere",
	"vertexai", "vertex", "bedrock", "together", "deepseek", "openrouter", "xai", "perplexity", "fireworks", "huggingface", "hf"}

// checkModelSpec refuses a spec naming a provider askyourdocs cannot use.
// Ollama models in a namespace stay possible with an explicit prefix:
// "ollama/openai/gpt-oss".
func checkModelSpec(env, spec string) error {
	p, _, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok {
		return nil
	}
	for _, o := range otherProviders {
		if strings.EqualFold(p, o) {
			return withHint(fmt.Errorf("%s=%s: %w %q", env, spec, askyourdocs.ErrUnknownProvider, p),
				fmt.Sprintf("askyourdocs speaks ollama/, gpustack/ (any OpenAI-compatible server, GPUSTACK_URL) and googleai/; "+
					"for an Ollama model named %s write ollama/%s", spec, spec))
		}
	}
	return nil
}

// checkModelEnv checks LLM_MODEL, RERANK_MODEL and EMBEDDING_MODEL.
func (a *cliApp) checkModelEnv() error {
	for _, env := range []string{"LLM_MODEL", "RERANK_MODEL", "EMBEDDING_MODEL"} {
		if err := checkModelSpec(env, a.getenv(env)); err != nil {
			return err
		}
	}
	return nil
}

// logLevel is the engine's log level when LOG_LEVEL is unset: only errors
// (the CLI reports problems itself, in one line each), "debug" with -v (the
// engine logs per item, such as each indexed source, at debug only).
func (a *cliApp) logLevel() string {
	if a.verbose {
		return "debug"
	}
	return "error"
}

// storeLabel names a store for people: the index directory of a local
// store (not its __db_*.json file), the table of a PostgreSQL store.
func storeLabel(s cliStore) string {
	if ss, ok := s.(*sqliteStore); ok && ss.manifests != nil {
		ls := ss.manifests
		if ls.name != storeName {
			return fmt.Sprintf("%s (store %q)", ls.dir, ls.name)
		}
		return ls.dir
	}
	return s.describe()
}

// modelServerDown returns a one-line note when the server of the model
// spec refuses connections or cannot be resolved ("" when it answers or
// the provider has no server to dial): ask then answers extractively at
// once instead of waiting for the provider's retries.
func (a *cliApp) modelServerDown(ctx context.Context, spec string) string {
	prov, _ := askyourdocs.SplitModelSpec(spec)
	var name, base string
	switch prov {
	case askyourdocs.ProviderOllama:
		name, base = "Ollama", ollamaBase(a.getenv("OLLAMA_HOST"))
	case askyourdocs.ProviderGPUStack:
		name, base = "GPUStack", strings.TrimRight(strings.TrimSpace(a.getenv("GPUSTACK_URL")), "/")
	default:
		return ""
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return ""
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Sprintf("%s at %s not reachable (%s): quoting the best passages instead", name, base, connectReason(err))
	}
	conn.Close()
	return ""
}

// dropUnreachableModels turns off the LLM and the reranker when their
// server is down, noting why for the answer.
func (a *cliApp) dropUnreachableModels(ctx context.Context, b *backend) {
	if b.llm != nil {
		if note := a.modelServerDown(ctx, b.llmSpec); note != "" {
			b.llm, b.fallbackNote = nil, note
		}
	}
	if b.rerank != nil && a.modelServerDown(ctx, b.rerankSpec) != "" {
		b.rerank = nil
	}
}
