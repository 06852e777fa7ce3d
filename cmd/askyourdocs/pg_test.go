package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// cliTestDSN returns the DSN of the pgvector test database, in the order of
// scripts/test (see docs/testing.md): ASKYOURDOCS_TEST_DSN if set; else a
// pgvector/pgvector:pg17 container when a local Docker engine answers (one
// per test binary, as the root package's tests do); else the test skips, or
// fails when ASKYOURDOCS_REQUIRE_DB=1.
func cliTestDSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("ASKYOURDOCS_TEST_DSN"); dsn != "" {
		return dsn
	}
	if cliTestDockerAnswers() {
		cliTestContainer.once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ctr, err := tcpostgres.Run(ctx, "pgvector/pgvector:pg17", tcpostgres.BasicWaitStrategies())
			if err != nil {
				cliTestContainer.err = fmt.Errorf("start pgvector container: %w", err)
				return
			}
			cliTestContainer.dsn, cliTestContainer.err = ctr.ConnectionString(ctx, "sslmode=disable")
		})
		if cliTestContainer.err != nil {
			t.Fatal(cliTestContainer.err)
		}
		return cliTestContainer.dsn
	}
	if os.Getenv("ASKYOURDOCS_REQUIRE_DB") == "1" {
		t.Fatal("ASKYOURDOCS_REQUIRE_DB=1 but there is no test database: ASKYOURDOCS_TEST_DSN is unset and no Docker engine answers")
	}
	t.Skip("no test database: set ASKYOURDOCS_TEST_DSN or run scripts/test")
	return ""
}

// cliTestContainer is the pgvector container of this test binary, started
// on first use when there is no ASKYOURDOCS_TEST_DSN but Docker.
var cliTestContainer struct {
	once sync.Once
	dsn  string
	err  error
}

// cliTestDockerAnswers reports whether a Docker engine answers /_ping on a
// local unix socket within a second (remote engines are not used).
func cliTestDockerAnswers() bool {
	sock := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		p, ok := strings.CutPrefix(h, "unix://")
		if !ok {
			return false
		}
		sock = p
	}
	conn, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 512)
	n, _ := conn.Read(buf)
	return bytes.HasPrefix(buf[:n], []byte("HTTP/1.")) && bytes.Contains(buf[:n], []byte(" 200 "))
}

// TestPgvecStoreEndToEnd runs the CLI against a PgvecStore: index, unchanged
// re-index, ask, keyword search through KeywordSearchSQL, sources, delete,
// and the embedder check, which must refuse before the store's migration
// could empty a table built with another dimension.
func TestPgvecStoreEndToEnd(t *testing.T) {
	dsn := cliTestDSN(t)
	buildCLI(t)
	work := t.TempDir()
	for _, f := range []string{"handbook.pdf", "faq.docx", "prices.html"} {
		copyFixture(t, "../../testdata/cli/docs/"+f, filepath.Join(work, "docs", f))
	}
	name := fmt.Sprintf("cli_e2e_%d", time.Now().UnixNano()%1e9)
	pg := []string{"--pg", dsn, "--name", name}
	cmd := func(args ...string) []string { return append(args, pg...) }

	r := runCLI(t, work, nil, cmd("index", "--json", "docs")...)
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.Sources != 3 || rep.Embedded != int64(rep.Chunks) {
		t.Fatalf("index into pg: %v %+v\n%s", err, rep, r)
	}
	if !strings.Contains(rep.Store, "PostgreSQL table askyourdocs_"+name) {
		t.Errorf("store = %q", rep.Store)
	}
	r = runCLI(t, work, nil, cmd("index", "--json", "docs")...)
	rep = indexReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.Embedded != 0 || rep.Unchanged != 3 {
		t.Errorf("unchanged re-index into pg: %v %+v\n%s", err, rep, r)
	}

	r = runCLI(t, work, nil, cmd("ask", "How long before the tour can I cancel for a full refund?")...)
	if r.code != 0 || !strings.Contains(r.stdout, "48 hours") || !strings.Contains(r.stdout, "[1] docs/handbook.pdf, p. 1") {
		t.Errorf("ask on pg:\n%s", r)
	}
	r = runCLI(t, work, nil, cmd("search", "--mode", "keyword", "--json", "wetsuits")...)
	var found searchOutput
	err := json.Unmarshal([]byte(r.stdout), &found)
	if hits := found.Results; err != nil || len(hits) == 0 || !strings.HasSuffix(hits[0].URL, "faq.docx") {
		t.Errorf("keyword search on pg: %v\n%s", err, r)
	}

	// Keyword search ranks as on the embedded default store (the same
	// analyzer language and BM25F score): the embedded store's results
	// come first, in its order (the PostgreSQL store's substring stage may
	// add more after them).
	r = runCLI(t, work, nil, "index", "docs")
	if r.code != 0 {
		t.Fatalf("index into the embedded store:\n%s", r)
	}
	for _, q := range []string{"wetsuits", "refunds for cancelled tours", "price of the sunset cruise"} {
		var local, remote searchOutput
		r = runCLI(t, work, nil, "search", "--mode", "keyword", "--json", "-k", "20", q)
		if err := json.Unmarshal([]byte(r.stdout), &local); err != nil || len(local.Results) == 0 {
			t.Fatalf("keyword search %q on the embedded store: %v\n%s", q, err, r)
		}
		r = runCLI(t, work, nil, cmd("search", "--mode", "keyword", "--json", "-k", "20", q)...)
		if err := json.Unmarshal([]byte(r.stdout), &remote); err != nil || len(remote.Results) < len(local.Results) {
			t.Fatalf("keyword search %q on pg: %v\n%s", q, err, r)
		}
		for i, hit := range local.Results {
			if got := remote.Results[i]; got.URL != hit.URL || got.Breadcrumb != hit.Breadcrumb || got.Pages != hit.Pages {
				t.Errorf("keyword search %q: result %d on pg is %s %q p. %s, on the embedded store %s %q p. %s",
					q, i+1, got.URL, got.Breadcrumb, got.Pages, hit.URL, hit.Breadcrumb, hit.Pages)
			}
		}
	}

	// Another embedder dimension: refused, and the table keeps its chunks.
	r = runCLI(t, work, []string{"EMBEDDING_DIM=256"}, cmd("sources")...)
	if r.code != exitError || !strings.Contains(r.stderr, "index was built with another embedder") {
		t.Errorf("embedder mismatch on pg:\n%s", r)
	}
	r = runCLI(t, work, nil, cmd("sources", "--json")...)
	var srcs sourcesOutput
	if err := json.Unmarshal([]byte(r.stdout), &srcs); err != nil || len(srcs.Results) != 3 {
		t.Fatalf("sources on pg after the refused run: %v\n%s", err, r)
	}

	total := 0
	for _, src := range srcs.Results {
		total += src.Chunks
	}
	r = runCLI(t, work, nil, cmd("delete", "docs")...)
	if r.code != 0 || total == 0 || !strings.Contains(r.stdout, fmt.Sprintf("Deleted 3 documents, %d chunks in total", total)) {
		t.Errorf("delete on pg:\n%s", r)
	}
	// doctor names the database, its version and the extensions.
	r = runCLI(t, work, nil, cmd("doctor")...)
	if r.code != 0 || !regexp.MustCompile(`ok +postgres +PostgreSQL \d+`).MatchString(r.stdout) || !regexp.MustCompile(`ok +vector +vector \d`).MatchString(r.stdout) {
		t.Errorf("doctor on pg:\n%s", r)
	}
	r = runCLI(t, work, nil, cmd("ask", "anything")...)
	if r.code != exitError || !strings.Contains(r.stderr, "nothing is indexed yet") {
		t.Errorf("ask on an emptied pg store:\n%s", r)
	}
}

// TestPgvecConcurrentIndexFreshDB starts two `askyourdocs index --pg` at once
// on a fresh database (no vector extension, no tables): both succeed, as the
// store's schema is created and its embedder recorded under the schema
// advisory lock, and the store holds each chunk once.
func TestPgvecConcurrentIndexFreshDB(t *testing.T) {
	dsn := cliTestFreshDB(t, cliTestDSN(t))
	bin := buildCLI(t)
	work := t.TempDir()
	for _, f := range []string{"handbook.pdf", "faq.docx", "prices.html"} {
		copyFixture(t, "../../testdata/cli/docs/"+f, filepath.Join(work, "docs", f))
	}
	name := fmt.Sprintf("cli_conc_%d", time.Now().UnixNano()%1e9)
	results := make([]cliResult, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "index", "--json", "docs", "--pg", dsn, "--name", name)
			cmd.Dir = work
			cmd.Env = cliEnv()
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			code := 0
			if err != nil {
				code = -1
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				}
			}
			results[i] = cliResult{code: code, stdout: so.String(), stderr: se.String()}
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("index %d of 2 at once on a fresh database:\n%s", i+1, r)
		}
	}
	r := runCLI(t, work, nil, "sources", "--json", "--pg", dsn, "--name", name)
	var srcs sourcesOutput
	if err := json.Unmarshal([]byte(r.stdout), &srcs); err != nil || len(srcs.Results) != 3 {
		t.Fatalf("sources after the concurrent runs: %v\n%s", err, r)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, distinct int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT (url, content)) FROM "+pgx.Identifier{"askyourdocs_" + name}.Sanitize()).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, src := range srcs.Results {
		listed += src.Chunks
	}
	if n == 0 || n != listed || distinct != n {
		t.Errorf("%d chunks (%d distinct), want the %d the sources list, once each", n, distinct, listed)
	}
}

// cliTestFreshDB creates an empty database (dropped when the test ends) and
// returns its DSN.
func cliTestFreshDB(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("this test needs ASKYOURDOCS_TEST_DSN as a postgres:// URL, got %q", dsn)
	}
	db := fmt.Sprintf("ayd_cli_fresh_%d", time.Now().UnixNano())
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop fresh database: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); err != nil {
			t.Errorf("drop fresh database: %v", err)
		}
	})
	u.Path = "/" + db
	return u.String()
}

// TestPgvecIndexFolderBatched checks that `index --pg` of a folder writes
// its files through the run's Bulk batches, not one transaction per file:
// a chunk's created_at is its transaction's start, so a folder of three
// small files gives fewer distinct values than files (one batch; two if
// the run's 10 s batch age passed between them).
func TestPgvecIndexFolderBatched(t *testing.T) {
	dsn := cliTestDSN(t)
	buildCLI(t)
	work := t.TempDir()
	files := []string{"handbook.pdf", "faq.docx", "prices.html"}
	for _, f := range files {
		copyFixture(t, "../../testdata/cli/docs/"+f, filepath.Join(work, "docs", f))
	}
	name := fmt.Sprintf("cli_batch_%d", time.Now().UnixNano()%1e9)
	r := runCLI(t, work, nil, "index", "docs", "--pg", dsn, "--name", name)
	if r.code != 0 {
		t.Fatalf("index into pg:\n%s", r)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var urls, commits int
	if err := conn.QueryRow(ctx, "SELECT count(DISTINCT url), count(DISTINCT created_at) FROM "+pgx.Identifier{"askyourdocs_" + name}.Sanitize()).Scan(&urls, &commits); err != nil {
		t.Fatal(err)
	}
	if urls != len(files) || commits >= len(files) {
		t.Errorf("the folder's %d files (of %d) were written in %d transactions, want fewer than one per file", urls, len(files), commits)
	}
}
