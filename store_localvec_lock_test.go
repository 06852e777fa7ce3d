package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

const localvecLockChildEnv = "ASKYOURDOCS_LOCALVEC_LOCK_CHILD" // "<dir> <prefix> <sources>"

// TestLocalvecLockChild is the child process of
// TestLocalvecTwoWriterProcesses: it indexes sources <prefix>/0.. one
// IndexSource call (one locked write) each.
func TestLocalvecLockChild(t *testing.T) {
	spec := os.Getenv(localvecLockChildEnv)
	if spec == "" {
		t.Skip("child process of TestLocalvecTwoWriterProcesses")
	}
	var dir, prefix string
	var n int
	if _, err := fmt.Sscanf(spec, "%s %s %d", &dir, &prefix, &n); err != nil {
		t.Fatal(err)
	}
	s, err := NewLocalvecStore(genkit.Init(context.Background()), "shared", newTestEmbedder(32), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		src := &ingestTestSource{url: fmt.Sprintf("%s/%d", prefix, i), texts: ingestTestTexts(fmt.Sprintf("%s%d", prefix, i), 20)}
		if _, _, err := IndexSource(context.Background(), s, src, 500, 50, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLocalvecTwoWriterProcesses runs two processes writing different
// sources into one localvec file at once: with the file lock and reload,
// neither loses the other's sources.
func TestLocalvecTwoWriterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for _, prefix := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLocalvecLockChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d", localvecLockChildEnv, dir, prefix, 15))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	s, err := NewLocalvecStore(genkit.Init(t.Context()), "shared", newTestEmbedder(32), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srcs, err := s.Sources(t.Context())
	if err != nil || len(srcs) != 30 {
		t.Fatalf("%d sources after two writer processes, want 30 (%v)", len(srcs), err)
	}
	for _, src := range srcs {
		if src.Chunks != 20 {
			t.Errorf("source %v", src)
		}
	}
}

// TestLocalvecReaderReloads checks that a store sees what another store
// (another process) wrote to its file on its next query, and that a writer
// starts from the other's data instead of overwriting it.
func TestLocalvecReaderReloads(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newTestEmbedder(32)
	open := func() *LocalvecStore {
		s, err := NewLocalvecStore(genkit.Init(ctx), "docs", emb, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	r, w := open(), open()
	if err := r.Index(ctx, pgTestDocs("r", "red", 3)); err != nil {
		t.Fatal(err)
	}
	if err := w.Index(ctx, pgTestDocs("w", "white", 4)); err != nil {
		t.Fatal(err)
	}
	if storedChunks(t, r) != 7 || storedChunks(t, w) != 7 {
		t.Fatalf("%d and %d chunks, want 7: a writer lost the other's documents", storedChunks(t, r), storedChunks(t, w))
	}
	resp, err := r.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("white chunk 2 about topic2 and subject2", nil)})
	if err != nil || len(resp.Documents) == 0 || resp.Documents[0].Metadata[MetaSource] != "w" {
		t.Fatalf("reader did not reload: %v", err)
	}
	if err := w.Bulk(ctx, func(b VectorStore) error {
		_, err := b.DeleteBySource(ctx, "r")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srcs, err := r.Sources(ctx)
	if err != nil || len(srcs) != 1 || srcs[0].Source != "w" {
		t.Errorf("sources after the other store deleted: %v, %v", srcs, err)
	}
}

// TestLocalvecOpenKeepsTempsOfLiveWriter checks that opening a store never
// removes a temporary file while another process holds the write lock
// (it may be writing that file), and removes stale ones otherwise.
func TestLocalvecOpenKeepsTempsOfLiveWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "__db_docs.json")
	tmp := path + ".12345.tmp"
	if err := os.WriteFile(tmp, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, ok, err := lockFile(path+".lock", true)
	if err != nil || !ok {
		t.Fatalf("lock: %v", err)
	}
	s, err := NewLocalvecStore(genkit.Init(t.Context()), "docs", newTestEmbedder(8), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a live writer's temporary file was removed: %v", err)
	}
	unlockFile(f)
	s, err = NewLocalvecStore(genkit.Init(t.Context()), "docs", newTestEmbedder(8), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("stale temporary file kept: %v", err)
	}
}
