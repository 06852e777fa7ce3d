package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// interruptingEmbedder cancels the run's context on its first call and
// fails with that, as Ctrl-C during embedding does.
type interruptingEmbedder struct {
	ai.Embedder
	cancel context.CancelFunc
	calls  int
}

func (e *interruptingEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	e.calls++
	if e.calls == 1 {
		e.cancel()
		return nil, context.Canceled
	}
	return e.Embedder.Embed(ctx, req)
}

// TestIndexEmbeddedCountsKeptSources: an index run interrupted while a
// source was being embedded reports 0 embedded for it (it was rolled
// back); it reported the chunks embedded before the rollback.
func TestIndexEmbeddedCountsKeptSources(t *testing.T) {
	dir := t.TempDir()
	b, err := benchApp().open(t.Context(), &commonFlags{data: dir, name: storeName}, openOptions{write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	file, _ := filepath.Abs("../../testdata/cli/docs/faq.docx")
	newIndexer := func() *indexer {
		return &indexer{b: b, rep: newIndexReport(), prog: newProgress(io.Discard, 1, false), chunkSize: defaultChunkSize,
			overlap: defaultChunkOverlap, oldChunks: map[string]int{}}
	}

	ctx, cancel := context.WithCancel(t.Context())
	real := b.emb.Embedder
	b.emb.Embedder = &interruptingEmbedder{Embedder: real, cancel: cancel}
	ix := newIndexer()
	if _, err := ix.indexOne(ctx, "faq.docx", newFileSource(file, filepath.Dir(file), "docx")); err == nil {
		t.Fatal("an interrupted source indexed without error")
	}
	if ix.rep.Interrupted != "faq.docx" || ix.rep.Embedded != 0 || b.emb.docs.Load() == 0 {
		t.Errorf("interrupted: report %q, %d embedded (the embedder saw %d chunks); want the source named and 0",
			ix.rep.Interrupted, ix.rep.Embedded, b.emb.docs.Load())
	}

	b.emb.Embedder = real
	before := b.emb.docs.Load()
	ix = newIndexer()
	n, err := ix.indexOne(t.Context(), "faq.docx", newFileSource(file, filepath.Dir(file), "docx"))
	if err != nil || n == 0 {
		t.Fatalf("second run: %d chunks, %v", n, err)
	}
	if got, want := ix.rep.Embedded, b.emb.docs.Load()-before; got != want || got == 0 {
		t.Errorf("kept source: %d embedded, the embedder saw %d", got, want)
	}
}
