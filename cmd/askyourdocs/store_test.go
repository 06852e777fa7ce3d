package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// cliSources runs 'sources --json' and returns url -> chunks.
func cliSources(t *testing.T, work, data string) map[string]int {
	t.Helper()
	r := runCLI(t, work, nil, "sources", "--json", "--data", data)
	if r.code != 0 {
		t.Fatalf("sources:\n%s", r)
	}
	var srcs sourcesOutput
	if err := json.Unmarshal([]byte(r.stdout), &srcs); err != nil {
		t.Fatalf("sources output: %v\n%s", err, r)
	}
	out := make(map[string]int)
	for _, s := range srcs.Results {
		out[s.URL] = s.Chunks
	}
	return out
}

// TestCLIExportAndMigrateJSONIndex exports an index as a Genkit localvec
// file and opens a directory holding only such a file (an index of an
// earlier version): it is migrated once, with a message, and keeps its
// sources, also when an earlier migration was killed before it committed.
func TestCLIExportAndMigrateJSONIndex(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	os.MkdirAll(docs, 0o755)
	writeHTML(t, filepath.Join(docs, "a.html"), "Alpha", "alpha river text about boats")
	writeHTML(t, filepath.Join(docs, "b.html"), "Bravo", "bravo mountain text about snow")
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	want := cliSources(t, work, data)
	old := filepath.Join(work, "old")
	r := runCLI(t, work, nil, "export", "--data", data, "--genkit", old)
	if r.code != 0 || !strings.Contains(r.stdout, "__db_askyourdocs.json") {
		t.Fatalf("export:\n%s", r)
	}
	// An earlier version's directory: the JSON file and the manifest file
	// beside it (now the store records its embedder itself), and the empty
	// database a migration killed before its commit leaves.
	if _, err := os.Stat(filepath.Join(data, manifestFile)); err == nil {
		t.Errorf("a new index wrote the legacy manifest file %s", manifestFile)
	}
	legacy := fmt.Sprintf(`{"embedder": %q, "dim": %d, "created": "2025-06-01T10:00:00Z"}`, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim).Name(), cliLocalEmbedderDim)
	if err := os.WriteFile(filepath.Join(old, manifestFile), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	killed, err := askyourdocs.NewSQLiteStore(t.Context(), nil, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim), sqlitePath(old, storeName), nil)
	if err != nil {
		t.Fatal(err)
	}
	killed.Close()
	r = runCLI(t, work, nil, "search", "--data", old, "snow")
	if r.code != 0 || !strings.Contains(r.stderr, "migrated the JSON index") || !strings.Contains(r.stdout, "b.html") {
		t.Fatalf("first use of a JSON index:\n%s", r)
	}
	if got := cliSources(t, work, old); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sources after migration %v, want %v", got, want)
	}
	if r := runCLI(t, work, nil, "sources", "--data", old); strings.Contains(r.stderr, "migrated") {
		t.Errorf("migrated twice:\n%s", r)
	}
	// The import records no embedder: the manifest file stands for the
	// record, and is checked like one, until the store records its own.
	if _, err := os.Stat(filepath.Join(old, manifestFile)); err != nil {
		t.Errorf("the legacy manifest file went before the store had a record: %v", err)
	}
	r = runCLI(t, work, []string{"EMBEDDING_DIM=256"}, "search", "--data", old, "snow")
	if r.code != exitError || !strings.Contains(r.stderr, "index was built with another embedder") {
		t.Errorf("another embedder than the legacy manifest's:\n%s", r)
	}
	// The first write that adds chunks records the embedder in the store,
	// and the manifest file goes.
	writeHTML(t, filepath.Join(docs, "c.html"), "Charlie", "charlie forest text about trees")
	if r := runCLI(t, work, nil, "index", "--data", old, "docs"); r.code != 0 {
		t.Fatalf("index into the migrated directory:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(old, manifestFile)); err == nil {
		t.Errorf("the legacy manifest file is still there after the store recorded its embedder")
	}
	moved, err := askyourdocs.NewSQLiteStore(t.Context(), nil, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim), sqlitePath(old, storeName), nil)
	if err != nil {
		t.Fatal(err)
	}
	info, found, err := moved.IndexInfo(t.Context())
	moved.Close()
	if err != nil || !found || info.Embedder != askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim).Name() || info.Dim != cliLocalEmbedderDim {
		t.Errorf("record after the migration: %+v, found %v, %v", info, found, err)
	}
	if r := runCLI(t, work, nil, "export", "--data", data); r.code != exitUsage {
		t.Errorf("export without --genkit:\n%s", r)
	}

	// An index another program built (chunks imported, no record and no
	// manifest file): searching works, writing into it is refused before
	// anything is written, and nothing is recorded.
	foreign := filepath.Join(work, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := askyourdocs.NewSQLiteStore(t.Context(), nil, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim), sqlitePath(foreign, storeName), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := fs.ImportLocalvec(t.Context(), jsonIndexPath(old, storeName)); err != nil || n == 0 {
		t.Fatalf("import: %d, %v", n, err)
	}
	fs.Close()
	if r := runCLI(t, work, nil, "search", "--data", foreign, "snow"); r.code != 0 || !strings.Contains(r.stdout, "b.html") {
		t.Errorf("search in an unrecorded index:\n%s", r)
	}
	before := cliSources(t, work, foreign)
	r = runCLI(t, work, nil, "index", "--data", foreign, "docs")
	if r.code != exitError || !strings.Contains(r.stderr, "holds chunks but no record of the embedder") {
		t.Errorf("index into an unrecorded index:\n%s", r)
	}
	if got := cliSources(t, work, foreign); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("the refused index run changed the sources: %v, want %v", got, before)
	}
	fs, err = askyourdocs.NewSQLiteStore(t.Context(), nil, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim), sqlitePath(foreign, storeName), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, found, err = fs.IndexInfo(t.Context())
	fs.Close()
	if err != nil || found {
		t.Errorf("the refused run recorded an embedder: found %v, %v", found, err)
	}
}

// TestCLINothingIndexedNamesDirectory checks that commands reading an index
// say which directory they looked in and create nothing, mcp included.
func TestCLINothingIndexedNamesDirectory(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "nowhere")
	for _, args := range [][]string{
		{"search", "--data", data, "anything"},
		{"sources", "--data", data},
		{"ask", "--data", data, "anything?"},
		{"mcp", "--data", data},
	} {
		r := runCLI(t, work, nil, args...)
		if r.code == 0 || !strings.Contains(r.stderr, data) || !strings.Contains(r.stderr, "nothing is indexed") {
			t.Errorf("%v:\n%s", args, r)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, data)
		}
	}
	// An existing but empty index says where it is, too.
	os.MkdirAll(filepath.Join(work, "docs"), 0o755)
	writeHTML(t, filepath.Join(work, "docs", "a.html"), "Alpha", "alpha text")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	if r := runCLI(t, work, nil, "delete", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("delete:\n%s", r)
	}
	if r := runCLI(t, work, nil, "search", "--data", data, "alpha"); r.code == 0 || !strings.Contains(r.stderr, data) {
		t.Errorf("search in an empty index:\n%s", r)
	}
}

// TestCLIConcurrentIndexRuns runs two 'index' processes into one --data
// directory at once: both succeed and every source of both is listed.
func TestCLIConcurrentIndexRuns(t *testing.T) {
	work := t.TempDir()
	for _, dir := range []string{"one", "two"} {
		os.MkdirAll(filepath.Join(work, dir), 0o755)
		for i := range 15 {
			writeHTML(t, filepath.Join(work, dir, fmt.Sprintf("p%02d.html", i)), dir+" page", fmt.Sprintf("%s page %d text about topic %d", dir, i, i%4))
		}
	}
	data := filepath.Join(work, "index")
	bin := buildCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, dir := range []string{"one", "two"} {
		cmd := exec.CommandContext(ctx, bin, "index", "--data", data, dir)
		cmd.Dir, cmd.Env = work, cliEnv()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("index run %d: %v\n%s", i, err, outs[i])
		}
	}
	if got := cliSources(t, work, data); len(got) != 30 {
		t.Errorf("%d sources after two concurrent runs, want 30: %v", len(got), got)
	}
}

// TestCLINonUTF8FileName indexes a file whose name is not valid UTF-8
// twice (one copy), and deletes it by its name.
func TestCLINonUTF8FileName(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	os.MkdirAll(docs, 0o755)
	name := filepath.Join(docs, "caf\xe9.html")
	writeHTML(t, name, "Cafe", "coffee and cake text")
	data := filepath.Join(work, "index")
	for range 2 {
		if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
			t.Fatalf("index:\n%s", r)
		}
	}
	r := runCLI(t, work, nil, "sources", "--data", data)
	if r.code != 0 || !strings.Contains(r.stdout, "1 document") {
		t.Fatalf("sources after indexing twice:\n%s", r)
	}
	if r := runCLI(t, work, nil, "delete", "--data", data, "docs/caf\xe9.html"); r.code != 0 {
		t.Fatalf("delete by the non-UTF-8 name:\n%s", r)
	}
	if r := runCLI(t, work, nil, "sources", "--data", data); !strings.Contains(r.stdout, "Nothing is indexed yet in") {
		t.Errorf("after delete:\n%s", r)
	}
}

// TestCLISourceNotSavedIsReported makes the database refuse one file's
// chunks (a trigger standing in for a full disk): the run exits 1 and
// names that file and why, the other files are indexed, and nothing of the
// refused file is half-written.
func TestCLISourceNotSavedIsReported(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	os.MkdirAll(docs, 0o755)
	writeHTML(t, filepath.Join(docs, "a.html"), "Alpha", "alpha river text about boats")
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	s, err := askyourdocs.NewSQLiteStore(t.Context(), nil, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim), sqlitePath(data, storeName), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DB().ExecContext(t.Context(), `CREATE TRIGGER refuse_b BEFORE INSERT ON chunks WHEN NEW.url LIKE '%/b.html'
		BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END`)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	writeHTML(t, filepath.Join(docs, "b.html"), "Bravo", "bravo mountain text about snow")
	writeHTML(t, filepath.Join(docs, "c.html"), "Charlie", "charlie desert text about sand")
	r := runCLI(t, work, nil, "index", "--data", data, "docs")
	out := r.stdout + r.stderr
	if r.code != 1 || !strings.Contains(out, "Failed 1:") || !strings.Contains(out, "b.html") || !strings.Contains(out, "simulated write failure") {
		t.Fatalf("a source the store refused is not a reported failure:\n%s", r)
	}
	got := cliSources(t, work, data)
	if len(got) != 2 {
		t.Errorf("sources %v, want a.html and c.html", got)
	}
	for u := range got {
		if strings.HasSuffix(u, "/b.html") {
			t.Errorf("the refused file is listed: %v", got)
		}
	}
}
