package engine

import (
	"context"
	"testing"

	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// TestLocalvecFileMatchesGenkitBytes checks that LocalvecStore writes the
// very bytes Genkit's localvec writes for the same documents: documents
// whose JSON Index kept from computing their IDs, documents read back from
// the file (encoded again when written), rows moved by a delete, and
// sparse vectors (the zeros' short path of the number encoder).
func TestLocalvecFileMatchesGenkitBytes(t *testing.T) {
	ctx := t.Context()
	emb := newTestEmbedder(64) // mostly zeros: a few words hashed into 64 buckets
	docs := append(localvecTestDocs(30, "u"), localvecTestDocs(20, "v")...)
	for i, d := range docs[30:] {
		d.Metadata["n"] = i // numbers, and text that needs escaping
		d.Content[0].Text += ` <b>"quoted"</b> & more`
	}
	gdir, odir := t.TempDir(), t.TempDir()
	ds, _, err := localvec.DefineRetriever(genkit.Init(ctx), "docs", localvec.Config{Dir: gdir, Embedder: emb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	genkitIndex := func(from, to int) string {
		t.Helper()
		if err := localvec.Index(ctx, docs[from:to], ds); err != nil {
			t.Fatal(err)
		}
		return localvecTestFile(t, ds.Filename)
	}
	open := func() *LocalvecStore {
		t.Helper()
		s, err := NewLocalvecStore(genkit.Init(ctx), "docs", emb, odir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := func(what string, s *LocalvecStore, want string) {
		t.Helper()
		if got := localvecTestFile(t, s.path); got != want {
			t.Fatalf("%s: our file (%d bytes) differs from genkit's (%d bytes)", what, len(got), len(want))
		}
	}

	want := genkitIndex(0, 40)
	s := open()
	if err := IndexInBatches(ctx, s, docs[:40], nil); err != nil {
		t.Fatal(err)
	}
	same("after IndexInBatches", s, want)
	s.Close()

	s = open() // the rows now come from the file
	defer s.Close()
	want = genkitIndex(40, 50)
	if err := s.Index(ctx, docs[40:50]); err != nil {
		t.Fatal(err)
	}
	same("after Index on a reopened store", s, want)

	extra := localvecTestDocs(15, "tmp")
	if err := s.Index(context.Background(), extra); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteByURL(ctx, "tmp"); err != nil || n != 15 {
		t.Fatalf("DeleteByURL: %d, %v", n, err)
	}
	if _, err := s.DeleteBySource(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Index(ctx, docs); err != nil { // the deleted ones again
		t.Fatal(err)
	}
	same("after deletes and re-adds", s, want)
}
