package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestDemoOutsideCheckout runs the built binary's demo in an empty folder
// (as after go install): the embedded documents are indexed and answer.
func TestDemoOutsideCheckout(t *testing.T) {
	work := t.TempDir()
	r := runCLI(t, work, nil, "demo")
	if r.code != 0 || !strings.Contains(r.stdout, "48 hours") || !strings.Contains(r.stdout, "handbook.pdf") {
		t.Fatalf("demo outside a checkout:\n%s", r)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("demo left %d entries in the working directory", len(entries))
	}
}

// TestDemoDocsMatchTestdata keeps the embedded copy equal to
// testdata/cli/docs (make-docs.sh writes both).
func TestDemoDocsMatchTestdata(t *testing.T) {
	want, err := os.ReadDir("../../testdata/cli/docs")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := fs.ReadDir(demoFS, "demodocs")
	if len(got) != len(want) {
		t.Fatalf("embedded %d documents, testdata has %d", len(got), len(want))
	}
	for _, e := range want {
		a, _ := os.ReadFile(filepath.Join("../../testdata/cli/docs", e.Name()))
		b, err := demoFS.ReadFile("demodocs/" + e.Name())
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("demodocs/%s differs from testdata/cli/docs (run testdata/cli/make-docs.sh or copy it): %v", e.Name(), err)
		}
	}
}

// TestCrawlBrokenLinksAreWarnings crawls a site whose pages link to many
// missing pages: the broken links are a counted warning, the pages are
// indexed and the exit status is 0; a seed that is missing still fails.
func TestCrawlBrokenLinksAreWarnings(t *testing.T) {
	var links strings.Builder
	for i := range 14 {
		fmt.Fprintf(&links, `<a href="/site/gone-%d.html">old page %d</a> `, i, i)
	}
	pages := map[string]string{
		"/site/":           `<h1>Kayak club</h1><p>The club paddles every Sunday morning from the harbour.</p>` + links.String() + `<a href="/site/boats.html">Boats</a>`,
		"/site/boats.html": `<h1>Boats</h1><p>The club owns twelve sea kayaks and four canoes for its members.</p><a href="/site/old.html">old</a>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Club</title></head><body><main>`+p+`</main></body></html>`)
	}))
	defer srv.Close()
	work := t.TempDir()
	data := filepath.Join(work, "index")
	r := runCLI(t, work, nil, "index", "--data", data, "--allow-private", "--crawl", srv.URL+"/site/")
	if r.code != 0 {
		t.Fatalf("crawl with broken links exits %d:\n%s", r.code, r)
	}
	if !strings.Contains(r.stderr+r.stdout, "Warning: 15 broken links (HTTP 404/410) skipped:") ||
		!strings.Contains(r.stderr+r.stdout, "... and 5 more") || strings.Contains(r.stderr+r.stdout, "could not be indexed") {
		t.Errorf("no counted warning:\n%s", r)
	}
	r = runCLI(t, work, nil, "index", "--data", data, "--allow-private", "--crawl", "--json", srv.URL+"/site/")
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || len(rep.BrokenLinks) != 15 || len(rep.Failed) != 0 {
		t.Errorf("--json: code %d, %d broken, %d failed, %v\n%s", r.code, len(rep.BrokenLinks), len(rep.Failed), err, r)
	}
	if r := runCLI(t, work, nil, "search", "--data", data, "sea kayaks canoes"); r.code != 0 || !strings.Contains(r.stdout, "boats.html") {
		t.Errorf("the good pages are not indexed:\n%s", r)
	}
	// A missing seed is a real failure.
	if r := runCLI(t, work, nil, "index", "--data", data, "--allow-private", "--crawl", srv.URL+"/nothing/"); r.code != 1 {
		t.Errorf("missing seed: exit %d\n%s", r.code, r)
	}
}

// TestIndexHostHints: a missing path that names a host with a port or
// localhost gets the "give its URL" hint, as example.com/x.html does.
func TestIndexHostHints(t *testing.T) {
	work := t.TempDir()
	for arg, want := range map[string]string{
		"example.com/x.html":           "askyourdocs index https://example.com/x.html",
		"localhost:8765/x.html":        "askyourdocs index --allow-private http://localhost:8765/x.html",
		"127.0.0.1:8000/docs/":         "askyourdocs index --allow-private http://127.0.0.1:8000/docs/",
		"localhost/guide.html":         "askyourdocs index --allow-private http://localhost/guide.html",
		"docs.example.org:8080/a.html": "askyourdocs index https://docs.example.org:8080/a.html",
	} {
		r := runCLI(t, work, nil, "index", "--data", filepath.Join(work, "d"), arg)
		if r.code == 0 || !strings.Contains(r.stderr, "give its URL") || !strings.Contains(r.stderr, want) {
			t.Errorf("index %s:\n%s", arg, r)
		}
	}
	if r := runCLI(t, work, nil, "index", "--data", filepath.Join(work, "d"), "missing-folder/x.html"); strings.Contains(r.stderr, "give its URL") {
		t.Errorf("a plain missing path got the URL hint:\n%s", r)
	}
}

// TestServeEvalDatasetShortName fetches a dataset through the built
// binary's serve by its short names.
func TestServeEvalDatasetShortName(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "d")
	writeFile(t, filepath.Join(data, "eval", "eval_dataset_feedback.json"), `[{"input":{"question":"q"}}]`)
	base, _ := startServe(t, work, nil, "--data", data)
	for _, name := range []string{"feedback", "eval_dataset_feedback", "eval_dataset_feedback.json"} {
		resp, err := http.Get(base + "/api/eval/datasets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"question":"q"`) {
			t.Errorf("GET /api/eval/datasets/%s: %s %s", name, resp.Status, b)
		}
	}
	if resp, err := http.Get(base + "/api/eval/datasets/nothing"); err != nil || resp.StatusCode != 404 {
		t.Errorf("missing dataset: %v %v", resp.Status, err)
	}
}

// hostileBytes are the terminal controls a document or file name must not
// bring to the terminal: ESC, BEL, the 8-bit CSI, a C1 control in UTF-8
// and a bidirectional override.
var hostileBytes = []string{"\x1b", "\x07", "\x9b", "\u009b", "\u202e", "\x08"}

// TestCLIStripsControlCharacters indexes files whose names and contents
// carry terminal escapes (a title-setting OSC, a screen clear, a malformed
// PDF named with an escape) and asks and searches: nothing the binary
// prints, in text or --json mode, carries a control character.
func TestCLIStripsControlCharacters(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	writeFile(t, filepath.Join(docs, "notes\x1b]0;pwned\x07.txt"), "Kayak notes.\n\nThe \x1b[2J\x1b[Hkayak harbour opens at \x1b[31mnine\x1b[0m "+
		"o'clock\u202e every \x08morning\x07 \u009b6n.\n")
	writeFile(t, filepath.Join(docs, "broken\x1b[1m.pdf"), "%PDF-1.4\n\x1b]52;c;ZXZpbA==\x07 not a pdf")
	data := filepath.Join(work, "index")
	check := func(what string, r cliResult) {
		t.Helper()
		for _, b := range hostileBytes {
			if strings.Contains(r.stdout, b) || strings.Contains(r.stderr, b) {
				t.Errorf("%s prints %q:\n%q\n%q", what, b, r.stdout, r.stderr)
			}
		}
	}
	r := runCLI(t, work, nil, "index", "--data", data, "docs")
	check("index", r)
	// The name prints escaped (printable), the ESC as the four characters \x1b.
	if !strings.Contains(r.stderr+r.stdout, `broken\x1b[1m.pdf`) {
		t.Errorf("the malformed PDF is not reported:\n%s", r)
	}
	check("index --json", runCLI(t, work, nil, "index", "--data", data, "--json", "docs"))
	r = runCLI(t, work, nil, "ask", "--data", data, "When does the kayak harbour open?")
	check("ask", r)
	if !strings.Contains(r.stdout, "kayak harbour opens at") {
		t.Errorf("ask:\n%s", r)
	}
	check("search", runCLI(t, work, nil, "search", "--data", data, "kayak harbour"))
	check("sources", runCLI(t, work, nil, "sources", "--data", data))
}

// TestTermClean checks the filter on a terminal: the CLI's own colours,
// links and line clearing pass, everything else is removed.
func TestTermClean(t *testing.T) {
	st := style{color: true, links: true}
	own := "\r\033[K" + st.bold("Answer") + " " + st.link("https://example.com/a", st.cyan("[1]")) + "\n"
	if got := string(termClean([]byte(own), true)); got != own {
		t.Errorf("own sequences changed:\n%q\n%q", own, got)
	}
	for in, want := range map[string]string{
		"a\x1b]0;title\x07b":                "ab",
		"a\x1b]52;c;ZXZpbA==\x1b\\b":        "ab",
		"a\x1b[2J\x1b[1;1Hb":                "ab",
		"x\r\033[Ky":                        "xy", // line clearing only at the start of a write
		"a\x1b[8mhidden\x1b[0m":             "ahidden\x1b[0m",
		"a\x1bPdcs\x1b\\b":                  "ab",
		"tab\tnew\nline\r\n":                "tab\tnew\nline\n",
		"bidi\u202eevil\u2066x\u2069":       "bidievilx",
		"c1\u0085\u009bx":                   "c1x",
		"raw\x9b31mx":                       "raw31mx",
		"üñí©ødé":                           "üñí©ødé",
		"a\x1b]8;;https://e\x07vil/\x1b\\b": "avil/b", // a control in a link target: not the CLI's
	} {
		if got := string(termClean([]byte(in), true)); got != want {
			t.Errorf("termClean(%q) = %q, want %q", in, got, want)
		}
	}
	// Not a terminal: no escape at all survives.
	if got := string(termClean([]byte(own), false)); strings.ContainsAny(got, "\x1b\r") || !strings.Contains(got, "Answer") {
		t.Errorf("off a terminal: %q", got)
	}
}

// TestRecrawlRemovesGonePages: a page indexed by an earlier crawl that now
// answers 404 (or 410, re-indexed alone) leaves the index and is listed as
// removed; a page answering 500 is a transient failure and keeps its
// chunks.
func TestRecrawlRemovesGonePages(t *testing.T) {
	status := map[string]int{}
	pages := map[string]string{
		"/site/":           `<h1>Kayak club</h1><p>The club paddles every Sunday.</p><a href="/site/fees.html">Fees</a> <a href="/site/boats.html">Boats</a>`,
		"/site/fees.html":  `<h1>Fees</h1><p>Membership costs ninety euros a year, paddles included.</p>`,
		"/site/boats.html": `<h1>Boats</h1><p>The club owns twelve sea kayaks and four canoes.</p>`,
	}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := status[r.URL.Path]
		mu.Unlock()
		p, ok := pages[r.URL.Path]
		if !ok || code != 0 {
			http.Error(w, "gone", max(code, http.StatusNotFound))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Club</title></head><body><main>`+p+`</main></body></html>`)
	}))
	defer srv.Close()
	work := t.TempDir()
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "--allow-private", "--crawl", "--delay", "0", srv.URL+"/site/"); r.code != 0 {
		t.Fatalf("first crawl: %s", r)
	}
	mu.Lock()
	status["/site/fees.html"], status["/site/boats.html"] = http.StatusNotFound, http.StatusInternalServerError
	mu.Unlock()
	r := runCLI(t, work, nil, "index", "--data", data, "--allow-private", "--crawl", "--delay", "0", "--json", srv.URL+"/site/")
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(rep.Removed) != 1 || rep.Removed[0].URL != srv.URL+"/site/fees.html" {
		t.Errorf("removed = %+v, want fees.html only", rep.Removed)
	}
	if r := runCLI(t, work, nil, "search", "--data", data, "membership ninety euros"); strings.Contains(r.stdout, "fees.html") {
		t.Errorf("the 404 page is still searchable:\n%s", r)
	}
	if r := runCLI(t, work, nil, "search", "--data", data, "sea kayaks canoes"); !strings.Contains(r.stdout, "boats.html") {
		t.Errorf("the page answering 500 lost its chunks:\n%s", r)
	}
	// A page indexed alone that now answers 410.
	mu.Lock()
	status["/site/boats.html"] = 0
	mu.Unlock()
	if r := runCLI(t, work, nil, "index", "--data", data, "--allow-private", srv.URL+"/site/boats.html"); r.code != 0 {
		t.Fatalf("index boats.html: %s", r)
	}
	mu.Lock()
	status["/site/boats.html"] = http.StatusGone
	mu.Unlock()
	r = runCLI(t, work, nil, "index", "--data", data, "--allow-private", srv.URL+"/site/boats.html")
	if !strings.Contains(r.stdout, "Removed 1 page gone from the web (HTTP 404/410)") {
		t.Errorf("a 410 page indexed alone:\n%s", r)
	}
	if r := runCLI(t, work, nil, "search", "--data", data, "sea kayaks canoes"); strings.Contains(r.stdout, "boats.html") {
		t.Errorf("the 410 page is still searchable:\n%s", r)
	}
}
