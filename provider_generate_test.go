package engine

import (
	"strings"
	"testing"
)

func TestGenerateOptionsFromEnv(t *testing.T) {
	t.Setenv("OLLAMA_NUM_CTX", "16384")
	t.Setenv("OLLAMA_KEEP_ALIVE", "30m")
	t.Setenv("OLLAMA_THINK", "true")
	o, err := GenerateOptionsFromEnv()
	if err != nil || o != (GenerateOptions{NumCtx: 16384, KeepAlive: "30m", Think: true}) {
		t.Errorf("got %+v, %v", o, err)
	}
	t.Setenv("OLLAMA_THINK", "")
	t.Setenv("OLLAMA_NUM_CTX", "")
	o, err = GenerateOptionsFromEnv()
	if err != nil || o.Think || o.NumCtx != 0 {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	for k, v := range map[string]string{"OLLAMA_NUM_CTX": "big", "OLLAMA_THINK": "maybe"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := GenerateOptionsFromEnv(); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("err = %v, want one naming %s", err, k)
			}
		})
	}
}

func TestGenerateConfigShapes(t *testing.T) {
	o := GenerateOptions{NumCtx: 2048, KeepAlive: "5m", MaxTokens: 64}
	oc, ok := GenerateConfig("bare-name", o).(*ollamaConfig)
	if !ok || oc.NumCtx != 2048 || oc.NumPredict != 64 || oc.KeepAlive != "5m" || oc.Think == nil || *oc.Think {
		t.Errorf("ollama config = %+v", oc)
	}
	gc, ok := GenerateConfig("gpustack/q", o).(*gpustackConfig)
	if !ok || gc.MaxTokens != 64 || gc.EnableThinking == nil || *gc.EnableThinking {
		t.Errorf("gpustack config = %+v", gc)
	}
}
