package engine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// TestLocalvecStoreReembed reopens a store of 16-dimensional vectors with a
// 32-dimensional embedder: Index refuses until Reembed, which keeps every
// chunk with the new embedder's vector, in the file too (a store opened
// afterwards finds them).
func TestLocalvecStoreReembed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s16, err := NewLocalvecStore(genkit.Init(ctx), "re", newTestEmbedder(16), dir)
	if err != nil {
		t.Fatal(err)
	}
	docs := append(pgTestDocs("a", "alpha", 70), pgTestDocs("b", "beta", 50)...)
	if err := s16.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	s16.Close()

	emb := pgRenamedEmbedder{newTestEmbedder(32)}
	s, err := NewLocalvecStore(genkit.Init(ctx), "re", emb, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Index(ctx, pgTestDocs("c", "gamma", 1)); !errors.Is(err, ErrDimensionMismatch) {
		t.Fatalf("Index with another dimension before Reembed: %v, want ErrDimensionMismatch", err)
	}
	var last [2]int
	n, err := s.Reembed(ctx, func(done, total int) { last = [2]int{done, total} })
	if err != nil || n != len(docs) || last[0] != last[1] || last[1] == 0 {
		t.Fatalf("Reembed = %d, %v (last progress %v); want %d", n, err, last, len(docs))
	}
	const q = "beta chunk 12 about topic5 and subject1"
	check := func(st *LocalvecStore, who string) {
		t.Helper()
		resp, err := st.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText(q, nil), Options: &localvec.RetrieverOptions{K: 1}})
		var got []*ai.Document
		if err == nil {
			got = resp.Documents
		}
		if err != nil || len(got) != 1 || !slices.Equal(testVector(DocText(got[0]), 32), testVector(q, 32)) || got[0].Metadata[MetaSource] != "b" {
			t.Errorf("%s: retrieve after Reembed: %v, %v", who, pgTestTexts(got), err)
		}
		if storedChunks(t, st) != len(docs) {
			t.Errorf("%s: %d chunks, want %d", who, storedChunks(t, st), len(docs))
		}
	}
	check(s, "same store")
	if hits, err := s.KeywordSearch(ctx, "alpha", 0, nil, nil); err != nil || len(hits) != 70 {
		t.Errorf("keyword search after Reembed: %d, %v", len(hits), err)
	}
	info, found, err := s.IndexInfo(ctx)
	if err != nil || !found || info.Embedder != "test/renamed" || info.Dim != 32 {
		t.Errorf("IndexInfo after Reembed = %+v, %v, %v", info, found, err)
	}
	if err := s.Index(ctx, pgTestDocs("c", "gamma", 3)); err != nil {
		t.Errorf("Index after Reembed: %v", err)
	}
	if _, err := s.Reembed(ctx, nil); err == nil {
		t.Error("Reembed at the stored dimension: no error")
	}
	s.Close()
	again, err := NewLocalvecStore(genkit.Init(ctx), "re", emb, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	docs = append(docs, pgTestDocs("c", "gamma", 3)...)
	check(again, "reopened")
}
