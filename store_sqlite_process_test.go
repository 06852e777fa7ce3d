package engine

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// The multi-process tests re-run the test binary as child processes
// (TestSQLiteProcessChild) that index into one database.
const (
	sqliteChildEnv    = "ASKYOURDOCS_SQLITE_CHILD" // "<mode: index or bulk> <db path> <prefix> <sources> <rounds>"
	sqliteChildChunks = 30                         // chunks per source
)

// sqliteChildSource is source i of a child: sqliteChildChunks chunks whose
// text includes version, so each round changes every chunk.
func sqliteChildSource(prefix string, i, version int) *ingestTestSource {
	texts := make([]string, sqliteChildChunks)
	for j := range texts {
		texts[j] = fmt.Sprintf("%s source %d chunk %d version %d about topic%d", prefix, i, j, version, j%5)
	}
	return &ingestTestSource{url: fmt.Sprintf("%s/%d", prefix, i), texts: texts}
}

// TestSQLiteProcessChild is the child process of the multi-process tests:
// it indexes sources <prefix>/0..<sources-1> into the database, rounds
// times (rounds 0: forever), with a new version of every chunk each round,
// printing "ready" once the store is open; mode bulk runs the rounds in
// one Bulk run.
func TestSQLiteProcessChild(t *testing.T) {
	spec := os.Getenv(sqliteChildEnv)
	if spec == "" {
		t.Skip("child process of the SQLiteStore multi-process tests")
	}
	var mode, path, prefix string
	var sources, rounds int
	if _, err := fmt.Sscanf(spec, "%s %s %s %d %d", &mode, &path, &prefix, &sources, &rounds); err != nil || mode != "index" && mode != "bulk" {
		t.Fatalf("bad %s %q: %v", sqliteChildEnv, spec, err)
	}
	ctx := context.Background()
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(64), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	run := func(w VectorStore) error {
		for round := 0; rounds == 0 || round < rounds; round++ {
			for i := range sources {
				if _, _, err := IndexSource(ctx, w, sqliteChildSource(prefix, i, round), 500, 50, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if mode == "bulk" {
		err = s.Bulk(ctx, func(b VectorStore) error { return run(b) })
	} else {
		err = run(s)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// startSQLiteChild starts a child indexing process and waits until it has
// opened the store.
func startSQLiteChild(t *testing.T, path, prefix string, sources, rounds int) *exec.Cmd {
	t.Helper()
	return startSQLiteChildMode(t, "index", path, prefix, sources, rounds)
}

// startSQLiteChildMode is startSQLiteChild in mode (index or bulk).
func startSQLiteChildMode(t *testing.T, mode, path, prefix string, sources, rounds int) *exec.Cmd {
	t.Helper()
	return startIndexChild(t, "TestSQLiteProcessChild", fmt.Sprintf("%s=%s %s %s %d %d", sqliteChildEnv, mode, path, prefix, sources, rounds))
}

// startIndexChild runs the test binary's test run with env added as a
// child process and waits until it prints "ready"; its further output is
// discarded, and it is killed at the end of the test if still running.
func startIndexChild(t *testing.T, run, env string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child did not start: %q, %v", line, err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := out.Read(buf); err != nil {
				return
			}
		}
	}()
	return cmd
}

// checkSQLiteConsistent checks the database's integrity and that every
// source in it is whole (sqliteChildChunks chunks of one version), with
// vectors and FTS rows for all chunks; it returns the sources.
func checkSQLiteConsistent(t *testing.T, path string) map[string]int {
	t.Helper()
	ctx := t.Context()
	s := sqliteTestStore(t, path, newTestEmbedder(64))
	db := s.DB()
	var integrity string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity check: %q, %v", integrity, err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO chunk_terms(chunk_terms, rank) VALUES ('integrity-check', 0)"); err != nil {
		t.Fatalf("FTS integrity check: %v", err)
	}
	var chunks, vecs int
	db.QueryRowContext(ctx, "SELECT count(*) FROM chunks").Scan(&chunks)
	db.QueryRowContext(ctx, "SELECT count(*) FROM qvecs").Scan(&vecs)
	if chunks != vecs {
		t.Errorf("%d chunks but %d vectors", chunks, vecs)
	}
	rows, err := db.QueryContext(ctx, "SELECT url, count(*) FROM chunks GROUP BY url")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make(map[string]int)
	for rows.Next() {
		var url string
		var n int
		if err := rows.Scan(&url, &n); err != nil {
			t.Fatal(err)
		}
		out[url] = n
		if n != sqliteChildChunks {
			t.Errorf("source %s has %d chunks, want %d: partial or duplicated", url, n, sqliteChildChunks)
		}
	}
	var mixed int
	db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT url FROM chunks GROUP BY url HAVING count(DISTINCT substr(text, instr(text, ' version ') + 9, 6)) > 1)`).Scan(&mixed)
	if mixed != 0 {
		t.Errorf("%d sources mix chunks of two versions", mixed)
	}
	return out
}

// TestSQLiteTwoWriterProcesses runs two processes indexing different
// sources into one database at once: both complete, all sources present.
func TestSQLiteTwoWriterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	path := filepath.Join(t.TempDir(), "d.db")
	a := startSQLiteChild(t, path, "a", 8, 2)
	b := startSQLiteChild(t, path, "b", 8, 2)
	if err := a.Wait(); err != nil {
		t.Errorf("writer a: %v", err)
	}
	if err := b.Wait(); err != nil {
		t.Errorf("writer b: %v", err)
	}
	if got := checkSQLiteConsistent(t, path); len(got) != 16 {
		t.Errorf("%d sources, want 16: %v", len(got), got)
	}
}

// TestSQLiteReaderWhileWriterProcess queries in a loop while another
// process re-indexes its sources: no query fails, and no query sees a
// source partly replaced.
func TestSQLiteReaderWhileWriterProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "d.db")
	r := sqliteTestStore(t, path, newTestEmbedder(64))
	w := startSQLiteChild(t, path, "w", 6, 4)
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	queries := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			if queries < 5 {
				t.Errorf("only %d queries ran while the writer worked", queries)
			}
			checkSQLiteConsistent(t, path)
			return
		default:
		}
		queries++
		srcs, err := r.Sources(ctx)
		if err != nil {
			t.Fatalf("sources: %v", err)
		}
		for _, s := range srcs {
			if s.Chunks != sqliteChildChunks {
				t.Fatalf("query %d saw a partial source: %v", queries, s)
			}
		}
		got, err := r.retrieveDoc(ctx, ai.DocumentFromText("w source 2 chunk 3 about topic3", nil), sqliteChildChunks)
		if err != nil {
			t.Fatalf("retrieve: %v", err)
		}
		versions := make(map[string]map[string]bool)
		for _, d := range got {
			u := metaString(d.Metadata, MetaURL)
			txt := DocText(d)
			v := txt[strings.Index(txt, " version "):]
			v = strings.Fields(v)[1]
			if versions[u] == nil {
				versions[u] = make(map[string]bool)
			}
			versions[u][v] = true
		}
		for u, vs := range versions {
			if len(vs) > 1 {
				t.Fatalf("query %d: source %s answered from two versions %v", queries, u, vs)
			}
		}
		if _, err := r.keywordSearch(ctx, "topic3 version", 5, nil, nil); err != nil {
			t.Fatalf("keyword search: %v", err)
		}
	}
}

// TestSQLiteKillWriter kills (SIGKILL) a writer process at random moments,
// 20 times: every time the database opens, is consistent (no partial
// source), and a complete run afterwards leaves every source exactly once.
func TestSQLiteKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	killSQLiteWriter(t, sqliteKillRun{mode: "index", prefix: "k", sources: 5, kills: 20, maxDelay: 400 * time.Millisecond, seed: 7})
}

// sqliteKillRun is one kill test: kills writers of mode (index or bulk)
// of sources sources named prefix, each after a random delay below
// maxDelay drawn from seed, then runs one to completion.
type sqliteKillRun struct {
	mode, prefix         string
	sources, kills, seed int
	maxDelay             time.Duration
}

// killSQLiteWriter runs k on a fresh database: after every kill the
// database opens and is consistent (whole sources only), and the complete
// run afterwards leaves every source exactly once.
func killSQLiteWriter(t *testing.T, k sqliteKillRun) {
	t.Helper()
	path := filepath.Join(t.TempDir(), k.prefix+".db")
	r := rand.New(rand.NewPCG(uint64(k.seed), uint64(k.seed)))
	for i := range k.kills {
		cmd := startSQLiteChildMode(t, k.mode, path, k.prefix, k.sources, 0)
		time.Sleep(time.Duration(r.Int64N(int64(k.maxDelay)))) // a random moment, not synchronisation
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		got := checkSQLiteConsistent(t, path)
		if t.Failed() {
			t.Fatalf("iteration %d: inconsistent after kill (%d sources)", i, len(got))
		}
	}
	// The next complete run repairs: every source once, whole.
	w := startSQLiteChildMode(t, k.mode, path, k.prefix, k.sources, 1)
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := checkSQLiteConsistent(t, path); len(got) != k.sources {
		t.Errorf("after a complete run: %d sources, want %d", len(got), k.sources)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var total, distinct int
	db.QueryRow("SELECT count(*), count(DISTINCT text) FROM chunks").Scan(&total, &distinct)
	if total != k.sources*sqliteChildChunks || distinct != total {
		t.Errorf("%d chunks (%d distinct), want %d", total, distinct, k.sources*sqliteChildChunks)
	}
}
