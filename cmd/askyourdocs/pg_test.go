package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliTestDSN returns the DSN of the pgvector test database
// (ASKYOURDOCS_TEST_DSN, which scripts/test sets after starting PGlite). The
// test skips without one, or fails when ASKYOURDOCS_REQUIRE_DB=1.
func cliTestDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("ASKYOURDOCS_TEST_DSN")
	if dsn == "" {
		if os.Getenv("ASKYOURDOCS_REQUIRE_DB") == "1" {
			t.Fatal("ASKYOURDOCS_REQUIRE_DB=1 but ASKYOURDOCS_TEST_DSN is unset")
		}
		t.Skip("no test database: set ASKYOURDOCS_TEST_DSN or run scripts/test (starts PGlite)")
	}
	return dsn
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
	var hits []searchResult
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) == 0 || !strings.HasSuffix(hits[0].URL, "faq.docx") {
		t.Errorf("keyword search on pg: %v\n%s", err, r)
	}

	// Another embedder dimension: refused, and the table keeps its chunks.
	r = runCLI(t, work, []string{"EMBEDDING_DIM=256"}, cmd("sources")...)
	if r.code != exitError || !strings.Contains(r.stderr, "index was built with another embedder") {
		t.Errorf("embedder mismatch on pg:\n%s", r)
	}
	r = runCLI(t, work, nil, cmd("sources", "--json")...)
	var srcs []mcpSource
	if err := json.Unmarshal([]byte(r.stdout), &srcs); err != nil || len(srcs) != 3 {
		t.Fatalf("sources on pg after the refused run: %v\n%s", err, r)
	}

	r = runCLI(t, work, nil, cmd("delete", "docs")...)
	if r.code != 0 || !strings.Contains(r.stdout, "Deleted docs: 13 chunks") {
		t.Errorf("delete on pg:\n%s", r)
	}
	r = runCLI(t, work, nil, cmd("ask", "anything")...)
	if r.code != exitError || !strings.Contains(r.stderr, "nothing is indexed yet") {
		t.Errorf("ask on an emptied pg store:\n%s", r)
	}
}
