package main

import (
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestFusionForEmbedder checks that the default fusion follows the index's
// embedder (lexical-first for the built-in one, every list alike for a
// model) and that settings a user gave are never replaced.
func TestFusionForEmbedder(t *testing.T) {
	def := defaultRetrieveOptions()
	builtin := def.forEmbedder(askyourdocs.LocalEmbedderName(1024))
	if builtin.rrfK != def.rrfK || builtin.vectorWeight != def.vectorWeight || builtin.keywordWeight != def.keywordWeight || builtin.hydeWeight != def.hydeWeight {
		t.Errorf("built-in embedder: %+v, want the tuned defaults %+v", builtin, def)
	}
	if def.vectorWeight >= def.keywordWeight {
		t.Fatalf("the tuned defaults are not lexical-first (%+v): the test would not tell the settings apart", def)
	}
	model := def.forEmbedder("ollama/nomic-embed-text")
	if model.rrfK != 60 || model.vectorWeight != 1 || model.keywordWeight != 1 || model.hydeWeight != 1 {
		t.Errorf("embedding model: k %d, weights vector %v keyword %v hyde %v; want k 60 and every list weighted 1",
			model.rrfK, model.vectorWeight, model.keywordWeight, model.hydeWeight)
	}
	if again := model.forEmbedder("ollama/nomic-embed-text"); again != model {
		t.Errorf("applying it twice changed the settings: %+v then %+v", model, again)
	}
	given := def
	given.embedderFusion, given.vectorWeight = false, 0.3
	if got := given.forEmbedder("ollama/nomic-embed-text"); got != given {
		t.Errorf("a user's settings were replaced: %+v, want %+v", got, given)
	}
}
