package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// localvecChildEnv configures TestLocalvecProcessChild:
// "index <dir> <prefix> <sources> <rounds>".
const localvecChildEnv = "ASKYOURDOCS_LOCALVEC_CHILD"

// TestLocalvecProcessChild is the child process of the LocalvecStore
// kill and reader tests: it indexes the sources of sqliteChildSource into
// the store "docs" in dir, one IndexSource call (one locked write) each,
// rounds times (0: forever) with a new version of every chunk each round,
// printing "ready" once the store is open.
func TestLocalvecProcessChild(t *testing.T) {
	spec := os.Getenv(localvecChildEnv)
	if spec == "" {
		t.Skip("child process of the LocalvecStore multi-process tests")
	}
	var dir, prefix string
	var sources, rounds int
	if _, err := fmt.Sscanf(spec, "index %s %s %d %d", &dir, &prefix, &sources, &rounds); err != nil {
		t.Fatalf("bad %s %q: %v", localvecChildEnv, spec, err)
	}
	ctx := context.Background()
	s, err := NewLocalvecStore(genkit.Init(ctx), "docs", newTestEmbedder(64), dir)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	for round := 0; rounds == 0 || round < rounds; round++ {
		for i := range sources {
			if _, _, err := IndexSource(ctx, s, sqliteChildSource(prefix, i, round), 500, 50, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkLocalvecConsistent opens the store in dir as a new process would
// and checks that every source in it is whole: sqliteChildChunks chunks of
// one version. It returns url -> chunks.
func checkLocalvecConsistent(t *testing.T, dir string) map[string]int {
	t.Helper()
	s, err := NewLocalvecStore(genkit.Init(t.Context()), "docs", newTestEmbedder(64), dir)
	if err != nil {
		t.Fatalf("the index does not open: %v", err)
	}
	defer s.Close()
	s.mu.RLock()
	docs := s.rows.docs
	s.mu.RUnlock()
	out := make(map[string]int)
	versions := make(map[string]map[string]bool)
	for _, d := range docs {
		u := metaString(d.Metadata, MetaURL)
		out[u]++
		if versions[u] == nil {
			versions[u] = make(map[string]bool)
		}
		versions[u][childVersion(DocText(d))] = true
	}
	for u, n := range out {
		if n != sqliteChildChunks || len(versions[u]) != 1 {
			t.Errorf("source %s has %d chunks of versions %v, want %d of one", u, n, versions[u], sqliteChildChunks)
		}
	}
	return out
}

// childVersion returns the version word of a sqliteChildSource chunk.
func childVersion(text string) string {
	_, after, _ := strings.Cut(text, " version ")
	f := strings.Fields(after)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// TestLocalvecKillWriter kills (SIGKILL) a LocalvecStore writer process at
// random moments, 20 times: every time the file opens, every source in it
// is whole, no temporary file outlives the next open, and the lock is free
// for the next writer; a complete run afterwards leaves every source once.
func TestLocalvecKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(11, 11))
	const sources = 5
	for i := range 20 {
		cmd := startIndexChild(t, "TestLocalvecProcessChild", fmt.Sprintf("%s=index %s k %d 0", localvecChildEnv, dir, sources))
		time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond) // a random moment, not synchronisation
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		checkLocalvecConsistent(t, dir)
		if t.Failed() {
			t.Fatalf("iteration %d: inconsistent after kill", i)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
			t.Fatalf("iteration %d: temporary files left after an open: %v", i, tmps)
		}
	}
	w := startIndexChild(t, "TestLocalvecProcessChild", fmt.Sprintf("%s=index %s k %d 1", localvecChildEnv, dir, sources))
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	got := checkLocalvecConsistent(t, dir)
	if len(got) != sources {
		t.Errorf("after a complete run: %d sources, want %d: %v", len(got), sources, got)
	}
}

// TestLocalvecReaderWhileWriterProcess queries a LocalvecStore in a loop
// while another process re-indexes its sources: the reader reloads the
// file as it changes, no query fails, and none sees a source partly
// replaced.
func TestLocalvecReaderWhileWriterProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	ctx := t.Context()
	dir := t.TempDir()
	rd, err := NewLocalvecStore(genkit.Init(ctx), "docs", newTestEmbedder(64), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	w := startIndexChild(t, "TestLocalvecProcessChild", fmt.Sprintf("%s=index %s w 6 4", localvecChildEnv, dir))
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	queries := 0
	seen := make(map[string]bool) // versions the reader saw
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			if queries < 5 {
				t.Errorf("only %d queries ran while the writer worked", queries)
			}
			got, err := rd.Sources(ctx)
			if err != nil || len(got) != 6 {
				t.Fatalf("after the writer ended the reader sees %d sources (%v), want 6", len(got), err)
			}
			if len(seen) < 2 {
				t.Errorf("the reader saw versions %v: it did not reload while the writer worked", seen)
			}
			checkLocalvecConsistent(t, dir)
			return
		default:
		}
		queries++
		srcs, err := rd.Sources(ctx)
		if err != nil {
			t.Fatalf("sources: %v", err)
		}
		for _, s := range srcs {
			if s.Chunks != sqliteChildChunks {
				t.Fatalf("query %d saw a partial source: %v", queries, s)
			}
		}
		resp, err := rd.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("w source 2 chunk 3 about topic3", nil)})
		if err != nil {
			t.Fatalf("retrieve: %v", err)
		}
		for _, d := range resp.Documents {
			seen[childVersion(DocText(d))] = true
		}
		if _, err := rd.KeywordSearch(ctx, "topic3 version", 5, nil, nil); err != nil {
			t.Fatalf("keyword search: %v", err)
		}
	}
}
