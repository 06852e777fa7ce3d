package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestIndexWatch runs `index --watch --json` on a real folder: its first
// sync indexes what is there, a file written later is indexed and
// searchable, a file deleted leaves the index (each sync one JSON line),
// and Ctrl-C (the context) ends the watch with exit status 0.
func TestIndexWatch(t *testing.T) {
	dir, data := t.TempDir(), filepath.Join(t.TempDir(), "idx")
	if err := os.WriteFile(filepath.Join(dir, "first.md"), []byte("# First\n\nThe slipway is closed on Sundays.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--data", data, "--json", "index", "--watch", dir}, nil, pw, &errb)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	next := func(what string) watchSync {
		t.Helper()
		got := make(chan watchSync, 1)
		go func() {
			var ws watchSync
			if lines.Scan() {
				if err := json.Unmarshal(lines.Bytes(), &ws); err != nil {
					t.Errorf("not a sync line: %q", lines.Text())
				}
			}
			got <- ws
		}()
		select {
		case ws := <-got:
			return ws
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no sync line within 30 s; stderr:\n%s", what, errb.String())
			return watchSync{}
		}
	}
	if ws := next("the first sync"); ws.Indexed != 1 || ws.Folder != dir {
		t.Fatalf("first sync = %+v", ws)
	}
	if err := os.WriteFile(filepath.Join(dir, "later.md"), []byte("# Later\n\nThe crane is serviced in March.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for ws := next("later.md"); ws.Indexed == 0; ws = next("later.md") {
	}
	var out bytes.Buffer
	if c := run(context.Background(), []string{"--data", data, "--json", "search", "crane serviced"}, nil, &out, &errb); c != exitOK ||
		!bytes.Contains(out.Bytes(), []byte("later.md")) {
		t.Errorf("search after the watch indexed later.md: %d\n%s", c, out.String())
	}
	if err := os.Remove(filepath.Join(dir, "first.md")); err != nil {
		t.Fatal(err)
	}
	for ws := next("the delete"); !slices.Contains(ws.Removed, filepath.Join(dir, "first.md")); ws = next("the delete") {
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if c := <-code; c != exitOK {
		t.Errorf("index --watch ended with %d, want 0; stderr:\n%s", c, errb.String())
	}
}
