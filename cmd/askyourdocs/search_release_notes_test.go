package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchReleaseNotes: on a folder with a how-to page and a changelog
// whose entry holds every word of the question, search ranks the how-to
// first for the question, marks the changelog hit in --json and -v, and
// keeps the changelog first for a question about changes.
func TestSearchReleaseNotes(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"purging.md": "# Purging queues\n\nThe purge command discards every message of the queues the worker " +
			"consumes from. Use it to start from an empty queue: messages are lost for good, so stop the " +
			"producers first, then run the command and confirm. Tasks already received by a worker are not " +
			"affected; revoke them instead.\n",
		"changelog.md": "# Changelog\n\n## Purging waiting tasks\n\nPurge waiting tasks: the purge command now " +
			"purges all waiting tasks.\n",
		"routing.md": "# Routing\n\nThe routing guide explains routing for workers and tasks, with examples.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, docs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	search := func(q string) []searchResult {
		t.Helper()
		r := runCLI(t, work, nil, "search", "--data", data, "--json", q)
		if r.code != 0 {
			t.Fatalf("search %q:\n%s", q, r)
		}
		var out searchOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("search %q: %v\n%s", q, err, r.stdout)
		}
		if len(out.Results) == 0 {
			t.Fatalf("search %q: no results", q)
		}
		return out.Results
	}
	res := search("How do I purge all waiting tasks?")
	if !strings.HasSuffix(res[0].URL, "purging.md") || res[0].ReleaseNotes {
		t.Errorf("question: first %s (releaseNotes %v), want purging.md", res[0].URL, res[0].ReleaseNotes)
	}
	found := false
	for _, r := range res {
		if strings.HasSuffix(r.URL, "changelog.md") {
			found = true
			if !r.ReleaseNotes {
				t.Errorf("the changelog hit is not marked releaseNotes")
			}
		}
	}
	if !found {
		t.Errorf("the changelog is not among the results: %+v", res)
	}
	if res := search("What changed in purge for waiting tasks?"); !strings.HasSuffix(res[0].URL, "changelog.md") {
		t.Errorf("question about changes: first %s, want changelog.md", res[0].URL)
	}
	r := runCLI(t, work, nil, "search", "--data", data, "-v", "How do I purge all waiting tasks?")
	if !strings.Contains(r.stdout, "release notes, ranked lower") {
		t.Errorf("search -v does not say the changelog was ranked lower:\n%s", r.stdout)
	}
}
