package engine

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestSQLiteStoreReembed reopens a store of 16-dimensional vectors with a
// 32-dimensional embedder: Index refuses until Reembed, which keeps every
// chunk and gives it the new embedder's vector; a second process's view
// (another store on the file) searches the new vectors too.
func TestSQLiteStoreReembed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s16, err := NewSQLiteStore(ctx, nil, newTestEmbedder(16), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := append(pgTestDocs("a", "alpha", 70), pgTestDocs("b", "beta", 50)...)
	if err := s16.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := s16.retrieveDoc(ctx, ai.DocumentFromText("alpha", nil), 1); err != nil {
		t.Fatal(err)
	}
	s16.Close()

	emb := pgRenamedEmbedder{newTestEmbedder(32)}
	s, err := NewSQLiteStore(ctx, nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Index(ctx, pgTestDocs("c", "gamma", 1)); !errors.Is(err, ErrDimensionMismatch) {
		t.Fatalf("Index with another dimension before Reembed: %v, want ErrDimensionMismatch", err)
	}
	var last [2]int
	n, err := s.Reembed(ctx, func(done, total int) { last = [2]int{done, total} })
	if err != nil || n != len(docs) {
		t.Fatalf("Reembed = %d, %v; want %d", n, err, len(docs))
	}
	if last[0] != last[1] || last[1] == 0 {
		t.Errorf("last progress %v", last)
	}
	if got := storedChunks(t, s); got != len(docs) {
		t.Errorf("%d chunks after Reembed, want %d", got, len(docs))
	}
	const q = "beta chunk 12 about topic5 and subject1"
	got, err := s.retrieveDoc(ctx, ai.DocumentFromText(q, nil), 1)
	if err != nil || len(got) != 1 || !slices.Equal(testVector(DocText(got[0]), 32), testVector(q, 32)) || got[0].Metadata[MetaSource] != "b" {
		t.Errorf("retrieve after Reembed: %v, %v", pgTestTexts(got), err)
	}
	info, found, err := s.IndexInfo(ctx)
	if err != nil || !found || info.Embedder != "test/renamed" || info.Dim != 32 {
		t.Errorf("IndexInfo after Reembed = %+v, %v, %v", info, found, err)
	}
	if err := s.Index(ctx, pgTestDocs("c", "gamma", 3)); err != nil {
		t.Errorf("Index after Reembed: %v", err)
	}
	if hits, err := s.keywordSearch(ctx, "alpha", 0, nil, nil); err != nil || len(hits) != 70 {
		t.Errorf("keyword search after Reembed: %d, %v", len(hits), err)
	}
	if _, err := s.Reembed(ctx, nil); err == nil {
		t.Error("Reembed at the stored dimension: no error")
	}
	// Another store on the file (as another process) sees the new vectors.
	other, err := NewSQLiteStore(ctx, nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got, err := other.retrieveDoc(ctx, ai.DocumentFromText(q, nil), 1); err != nil || len(got) != 1 || !slices.Equal(testVector(DocText(got[0]), 32), testVector(q, 32)) {
		t.Errorf("second store after Reembed: %v, %v", pgTestTexts(got), err)
	}
}
