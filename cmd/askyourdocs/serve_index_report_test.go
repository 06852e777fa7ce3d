package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeIndexCopyNotUnchanged: a new file whose text is already indexed
// under another name is reported as new (its chunks, none embedded), not
// "unchanged"; indexing the same folder again is unchanged, as the CLI's
// index command reports it.
func TestServeIndexCopyNotUnchanged(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	page := "<main><h1>Notes</h1><h2>Harbour</h2><p>The harbour crane lifts boats of up to four tonnes onto the slipway.</p></main>"
	first, second := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(first, "notes.html"), filepath.Join(second, "copy.html")} {
		if err := os.WriteFile(p, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := func(dir string) (*indexReport, string) {
		t.Helper()
		var lines []string
		rep, err := ts.s.runIndex(context.Background(), indexInput{Paths: []string{dir}}, func(l string) { lines = append(lines, l) })
		if err != nil || rep.Sources != 1 {
			t.Fatalf("index %s: %v %+v", dir, err, rep)
		}
		return rep, strings.Join(lines, "\n")
	}
	if rep, _ := index(first); rep.Unchanged != 0 {
		t.Errorf("first index: %+v, want none unchanged", rep)
	}
	if rep, out := index(second); rep.Unchanged != 0 || strings.Contains(out, "unchanged") {
		t.Errorf("a copy under a new name: %+v, want none unchanged\n%s", rep, out)
	}
	if rep, out := index(first); rep.Unchanged != 1 || !strings.Contains(out, "unchanged") {
		t.Errorf("the same folder again: %+v, want 1 unchanged\n%s", rep, out)
	}
}

// TestServeIndexFolderSync: a folder indexed through serve is synced as
// the CLI syncs it (IndexFolder): a file deleted from it leaves the index
// and the report lists it as removed.
func TestServeIndexFolderSync(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"crane.md": "# Crane\n\nThe harbour crane lifts boats of up to four tonnes.\n",
		"fuel.md":  "# Fuel\n\nThe fuel dock sells diesel until six in the evening.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := func() *indexReport {
		t.Helper()
		rep, err := ts.s.runIndex(context.Background(), indexInput{Paths: []string{dir}}, func(string) {})
		if err != nil {
			t.Fatalf("index %s: %v %+v", dir, err, rep)
		}
		return rep
	}
	if rep := index(); rep.Sources != 2 {
		t.Fatalf("first index: %+v", rep)
	}
	if err := os.Remove(filepath.Join(dir, "fuel.md")); err != nil {
		t.Fatal(err)
	}
	rep := index()
	if rep.Sources != 1 || len(rep.Removed) != 1 || filepath.Base(rep.Removed[0].URL) != "fuel.md" {
		t.Errorf("after deleting fuel.md: %+v", rep)
	}
	srcs, err := ts.s.b.store.Sources(context.Background())
	if err != nil || len(srcs) != 1 || filepath.Base(srcs[0].URL) != "crane.md" {
		t.Errorf("sources = %+v, %v", srcs, err)
	}
}
