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
