package main

import (
	"errors"
	"testing"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestLocalStoreOptions checks the embedded store's options: a command
// that asks once opens it without SQLite's memory map (its pages would
// stay resident for one query), every other keeps the default map, and
// name and language pass through.
func TestLocalStoreOptions(t *testing.T) {
	once := localStoreOptions("docs", "german", true)
	if once.MmapBytes >= 0 || once.Name != "docs" || once.KeywordLanguage != "german" {
		t.Errorf("once: %+v, want MmapBytes < 0, Name docs, KeywordLanguage german", *once)
	}
	if serving := localStoreOptions("docs", "", false); serving.MmapBytes != 0 {
		t.Errorf("serving: MmapBytes %d, want 0 (the default map)", serving.MmapBytes)
	}
}

// prefixedEmbedder is the local embedder under a provider's name, as
// Providers.Embedder names a model ("ollama/nomic-embed-text").
type prefixedEmbedder struct {
	ai.Embedder
	name string
}

func (e prefixedEmbedder) Name() string { return e.name }

// TestMatchManifestSpecOrName: a record names the model as the user
// configured it (earlier versions recorded EMBEDDING_MODEL) or as the
// embedder names itself (what the store records now); either matches,
// another model or dimension does not.
func TestMatchManifestSpecOrName(t *testing.T) {
	newBackend := func() *backend {
		return &backend{
			store:    &sqliteStore{manifests: &localStore{dir: "data", name: storeName}},
			emb:      &countingEmbedder{Embedder: prefixedEmbedder{askyourdocs.NewLocalEmbedder(64), "ollama/nomic-embed-text"}},
			manifest: indexManifest{Embedder: "nomic-embed-text"},
		}
	}
	for _, rec := range []string{"nomic-embed-text", "ollama/nomic-embed-text"} {
		b := newBackend()
		if err := b.matchManifest(askyourdocs.IndexInfo{Embedder: rec, Dim: 64}, 0); err != nil || b.manifest.Embedder != rec {
			t.Errorf("record %q: %v, manifest %+v", rec, err, b.manifest)
		}
	}
	if err := newBackend().matchManifest(askyourdocs.IndexInfo{Embedder: "ollama/other", Dim: 64}, 0); !errors.Is(err, errEmbedderMismatch) {
		t.Errorf("another model: %v, want errEmbedderMismatch", err)
	}
	if err := newBackend().matchManifest(askyourdocs.IndexInfo{Embedder: "ollama/nomic-embed-text", Dim: 64}, 128); !errors.Is(err, errEmbedderMismatch) {
		t.Errorf("another dimension: %v, want errEmbedderMismatch", err)
	}
}
