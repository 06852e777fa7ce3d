package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDistinctLabels(t *testing.T) {
	paths := []string{"/m/tutorial/venv.html", "/m/library/venv.html", "/m/library/os.html", "/x/a/b/index.html", "/y/a/b/index.html"}
	got := distinctLabels(paths, nil)
	want := map[string]string{"/m/tutorial/venv.html": "tutorial/venv.html", "/m/library/venv.html": "library/venv.html",
		"/m/library/os.html": "os.html", "/x/a/b/index.html": "x/a/b/index.html", "/y/a/b/index.html": "y/a/b/index.html"}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("label of %s: %q, want %q", p, got[p], w)
		}
	}
	up := distinctLabels([]string{"/d/uploads/3fa2c1aa/venv.html", "/d/uploads/77b0e2cc/venv.html"}, func(string) bool { return true })
	if up["/d/uploads/3fa2c1aa/venv.html"] != "venv.html (upload 3fa2c1)" {
		t.Errorf("upload labels: %v", up)
	}
}

// TestServeView: a citation of an HTML file opens the passage view, which
// shows the chunk in its section with the cited paragraphs marked and a
// link to the original; same-named files are told apart in citations and
// on the Index page; a web page's view redirects to it.
func TestServeView(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	ts.indexFixtures(t)
	out := ts.askJSON(t, askInput{Question: "How do I create a virtual environment?"})
	c := out.Citations[0]
	if !strings.HasPrefix(c.Title, "tutorial/venv.html") || !strings.HasPrefix(c.URL, "/view?url=") {
		t.Fatalf("first citation %+v", c)
	}
	resp, page := ts.request(t, nil, "GET", strings.TrimSuffix(c.URL, "#passage"), "", nil, map[string]string{"Accept": "text/html"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("view: %s\n%s", resp.Status, page)
	}
	for _, want := range []string{`<div id="passage"`, "<mark>", "tern env create ./harbor-env --prompt harbor", "Open the original file", `<h1>tutorial/venv.html</h1>`} {
		if !strings.Contains(page, want) {
			t.Errorf("view page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "no longer in this file") {
		t.Errorf("the chunk was not found again:\n%s", page)
	}
	// Unknown chunk: the file's start with a note; unindexed file: 404.
	abs := filepath.Join(webuiFixtures(t), "library", "venv.html")
	resp, page = ts.request(t, nil, "GET", "/view?url="+abs+"&chunk=0000", "", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "no longer in this file") || !strings.Contains(page, "tern.env") {
		t.Errorf("unknown chunk: %s\n%s", resp.Status, page)
	}
	if resp, _ := ts.request(t, nil, "GET", "/view?url=/etc/passwd&chunk=0", "", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unindexed file: %s", resp.Status)
	}
	resp, page = ts.request(t, nil, "GET", "/index", "", nil, nil)
	if !strings.Contains(page, ">tutorial/venv.html<") || !strings.Contains(page, ">library/venv.html<") {
		t.Errorf("index page does not tell the files apart: %s", resp.Status)
	}
	resp, page = ts.request(t, nil, "GET", "/ask", "", nil, nil)
	if !strings.Contains(page, "2 sources") || !strings.Contains(page, "Try asking") || !strings.Contains(page, "library/venv.html") {
		t.Errorf("front page:\n%s", page)
	}
	if resp, _ := ts.request(t, nil, "GET", "/favicon.ico", "", nil, nil); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("favicon: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
}

// TestServeViewChangedFile: when the file changed since it was indexed,
// the view shows the chunk as the index stored it, still marked.
func TestServeViewChangedFile(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.html")
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("<main><h1>Notes</h1><h2>Harbour</h2><p>The harbour crane lifts boats of up to four tonnes onto the slipway.</p></main>")
	if rep, err := ts.s.runIndex(context.Background(), indexInput{Paths: []string{dir}}, func(string) {}); err != nil || rep.Sources != 1 {
		t.Fatalf("index: %v %+v", err, rep)
	}
	out := ts.askJSON(t, askInput{Question: "How heavy can boats be for the harbour crane?"})
	write("<main><h1>Notes</h1><p>Rewritten.</p></main>")
	resp, page := ts.request(t, nil, "GET", strings.TrimSuffix(out.Citations[0].URL, "#passage"), "", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "<mark>The harbour crane lifts boats") || strings.Contains(page, "no longer in this file") {
		t.Errorf("changed file's view: %s\n%s", resp.Status, page)
	}
}
