package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliBinary is the askyourdocs binary built once for the end-to-end tests.
var (
	cliBinaryOnce sync.Once
	cliBinaryPath string
	cliBinaryErr  error
)

// TestMain removes the binary built by buildCLI and the stores built by
// the benchmarks after the run.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if cliBinaryPath != "" {
		os.RemoveAll(filepath.Dir(cliBinaryPath))
	}
	benchStores.Range(func(_, v any) bool {
		be := v.(*backend)
		be.Close()
		if ss, ok := be.store.(*sqliteStore); ok && ss.manifests != nil {
			os.RemoveAll(ss.manifests.dir)
		}
		return true
	})
	os.Exit(code)
}

// buildCLI builds this command into a temporary directory (once per test
// run) and returns the binary's path.
func buildCLI(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the askyourdocs binary; skipped with -short")
	}
	cliBinaryOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := os.MkdirTemp("", "askyourdocs-bin-")
		if err != nil {
			cliBinaryErr = err
			return
		}
		cliBinaryPath = filepath.Join(dir, "askyourdocs")
		out, err := exec.Command(goTool, "build", "-o", cliBinaryPath, ".").CombinedOutput()
		if err != nil {
			cliBinaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if cliBinaryErr != nil {
		t.Fatal(cliBinaryErr)
	}
	return cliBinaryPath
}

// cliEnv is the environment of a CLI run: the test's environment without
// any model or database setting, plus env.
func cliEnv(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "LLM_MODEL", "RERANK_MODEL", "EMBEDDING_MODEL", "EMBEDDING_DIM", "ASKYOURDOCS_DSN", "OLLAMA_HOST",
			"LOG_LEVEL", "LOG_FILE", "SAVE_CRAWL_DATA":
			continue
		}
		out = append(out, kv)
	}
	return append(out, env...)
}

// cliResult is the outcome of one CLI run.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the binary with args and env (see cliEnv) in dir.
func runCLI(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildCLI(t), args...)
	cmd.Dir = dir
	cmd.Env = cliEnv(env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return cliResult{code: code, stdout: so.String(), stderr: se.String()}
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// copyFixture copies a file from the repository into dst.
func copyFixture(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mixedFolder builds the folder the end-to-end tests index: the demo PDF,
// .docx and HTML, an encrypted PDF, a truncated PDF and unsupported files.
func mixedFolder(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "docs")
	copyFixture(t, "../../testdata/cli/docs/handbook.pdf", filepath.Join(dir, "handbook.pdf"))
	copyFixture(t, "../../testdata/cli/docs/faq.docx", filepath.Join(dir, "guides", "faq.docx"))
	copyFixture(t, "../../testdata/cli/docs/prices.html", filepath.Join(dir, "guides", "prices.html"))
	copyFixture(t, "../../testdata/pdf/encrypted.pdf", filepath.Join(dir, "locked.pdf"))
	copyFixture(t, "../../testdata/pdf/truncated.pdf", filepath.Join(dir, "broken", "truncated.pdf"))
	for name, text := range map[string]string{"notes.rtf": `{\rtf1 rich text is not indexed}`, "logo.gif": "GIF89a"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// siteServer serves a small multi-page site under /site/ on 127.0.0.1.
func siteServer(t *testing.T) *httptest.Server {
	t.Helper()
	layout := func(title, body string) string {
		return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>` + title + `</title></head><body>` +
			`<nav><a href="/site/">Home</a> <a href="/site/hours.html">Opening hours</a> <a href="/site/contact.html">Contact</a></nav>` +
			`<main>` + body + `</main><footer><p>Fjordline Kayak Tours, Harbour Street 4</p></footer></body></html>`
	}
	pages := map[string]string{
		"/site/": layout("Fjordline", `<h1>Fjordline Kayak Tours</h1><p>Guided kayak tours on the fjord since 2009.</p>`),
		"/site/hours.html": layout("Opening hours", `<h1>Opening hours</h1><p>The boathouse is open daily from 9:00 to 18:00 between May and September.`+
			` In October it opens on weekends only.</p>`),
		"/site/contact.html": layout("Contact", `<h1>Contact</h1><p>Call the boathouse on +47 555 01 234 or write to tours@fjordline.example.</p>`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, p)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeOllama is an httptest server speaking Ollama's /api/chat (and
// /api/embed when embed is set). As a chat model it behaves like a
// grounded model: HyDE prompts get a passage, rerank prompts get scores
// by word overlap, and answer prompts get the sentence of the context that
// shares most words with the question, cited by its passage number, plus
// an image and a foreign link that SanitizeAnswer must remove.
type fakeOllama struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []fakeChat
	embed   func(w http.ResponseWriter, r *http.Request, inputs []string)
	// streamed counts answer requests sent with "stream": true.
	streamed int
}

// fakeChat is one /api/chat request: its system and user text.
type fakeChat struct{ system, user string }

func newFakeOllama(t *testing.T) *fakeOllama {
	t.Helper()
	f := &fakeOllama{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOllama) chats() []fakeChat {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeChat(nil), f.prompts...)
}

func (f *fakeOllama) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/tags" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"models":[{"name":"fake-llm:latest"}]}`)
		return
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Input  []string `json:"input"`
		Stream bool     `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/api/embed":
		if f.embed == nil {
			http.NotFound(w, r)
			return
		}
		f.embed(w, r, body.Input)
		return
	case "/api/chat":
	default:
		http.NotFound(w, r)
		return
	}
	var c fakeChat
	for _, m := range body.Messages {
		switch m.Role {
		case "system":
			c.system += m.Content
		case "user":
			c.user += m.Content
		}
	}
	f.mu.Lock()
	f.prompts = append(f.prompts, c)
	f.mu.Unlock()
	reply := fakeReply(c)
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	if body.Stream && strings.Contains(c.user, "<context>") {
		// Streamed: one NDJSON line per word, then the final line.
		f.mu.Lock()
		f.streamed++
		f.mu.Unlock()
		for _, word := range strings.SplitAfter(reply, " ") {
			enc.Encode(map[string]any{"model": body.Model, "message": map[string]any{"role": "assistant", "content": word}, "done": false})
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
		}
		enc.Encode(map[string]any{"model": body.Model, "message": map[string]any{"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"})
		return
	}
	msg := map[string]any{"role": "assistant", "content": reply}
	enc.Encode(map[string]any{"model": body.Model, "message": msg, "done": true, "done_reason": "stop"})
}

var fakeWordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// fakeWords returns the lower-case words of s of 3 letters or more.
func fakeWords(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range fakeWordRE.FindAllString(strings.ToLower(s), -1) {
		if len(w) >= 3 && !cliStopWords[w] {
			m[w] = true
		}
	}
	return m
}

// fakeOverlap counts the question words found in s; words match by their
// first 5 letters (or the whole shorter word), so "rent" finds "rented".
func fakeOverlap(q map[string]bool, s string) int {
	n := 0
	words := fakeWords(s)
	for qw := range q {
		p := qw[:min(len(qw), 5)]
		for w := range words {
			if strings.HasPrefix(w, p) {
				n++
				break
			}
		}
	}
	return n
}

// fakeReply answers one chat request as described at fakeOllama.
func fakeReply(c fakeChat) string {
	switch {
	case strings.Contains(c.user, "Write a short passage"):
		q := c.user[strings.LastIndex(c.user, "Question:")+len("Question:"):]
		return "A passage about " + strings.TrimSpace(q)
	case strings.Contains(c.user, "Rate how well each passage"):
		q := c.user[strings.Index(c.user, "Question:")+len("Question:") : strings.Index(c.user, "Passages:")]
		qw := fakeWords(q)
		parts := regexp.MustCompile(`(?m)^\[\d+\] `).Split(c.user[strings.Index(c.user, "Passages:"):], -1)[1:]
		scores := make([]int, len(parts))
		for i, p := range parts {
			scores[i] = min(10, 2*fakeOverlap(qw, p))
		}
		b, _ := json.Marshal(scores)
		return string(b)
	case strings.Contains(c.user, "<context>"):
		q := c.user[strings.LastIndex(c.user, "Question:")+len("Question:"):]
		qw := fakeWords(q)
		ctx := c.user[strings.Index(c.user, "<context>")+len("<context>") : strings.LastIndex(c.user, "</context>")]
		best, bestN, bestScore := "", 0, -1<<30
		idx := regexp.MustCompile(`(?m)^\[(\d+)\] Source: `).FindAllStringSubmatchIndex(ctx, -1)
		for i, m := range idx {
			end := len(ctx)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			var n int
			fmt.Sscan(ctx[m[2]:m[3]], &n)
			body := ctx[m[1]:end]
			if nl := strings.IndexByte(body, '\n'); nl >= 0 {
				body = body[nl+1:] // skip the source line
			}
			// Sentences and lines (a table row is a line); the most question
			// words win, then the shorter text.
			for _, s := range regexp.MustCompile(`[^.!?\n]+[.!?]?`).FindAllString(body, -1) {
				s = strings.TrimSpace(s)
				if s == "" || strings.HasSuffix(s, "?") {
					continue // a question (a FAQ heading) is no answer
				}
				sc := 1000*fakeOverlap(qw, s) - len(s)
				if sc > bestScore {
					best, bestN, bestScore = s, n, sc
				}
			}
		}
		return fmt.Sprintf("%s [%d]\n\n![tracking](https://evil.example/leak.png) See [more](https://evil.example/phish).", best, bestN)
	}
	return "ok"
}

// Test questions with known answers: the passage the answer must quote and
// where it is.
var e2eQuestions = []struct {
	question string
	want     string // in the answer
	cite     string // in the first citation
}{
	{"How long before the start can I cancel a booking and still get a full refund?", "48 hours", "handbook.pdf, p. 1"},
	{"What is the minimum age for paddling a single kayak?", "12", ""},
	{"How much does it cost to rent a wetsuit?", "15 euros per day", "faq.docx"},
	{"What is the price of the sunset paddle?", "45 euros", "prices.html"},
	{"When is the boathouse open between May and September?", "9:00 to 18:00", "/site/hours.html"},
}

func TestEndToEndIndexAskSearch(t *testing.T) {
	docs := mixedFolder(t)
	work := filepath.Dir(docs)
	site := siteServer(t)
	model := newFakeOllama(t)
	data := filepath.Join(work, "index")

	// A folder with good, broken and unsupported files: the good ones are
	// indexed, the broken ones reported, the unsupported counted.
	r := runCLI(t, work, nil, "index", "--data", data, "docs")
	if r.code != exitError {
		t.Fatalf("index with broken files should exit %d:\n%s", exitError, r)
	}
	for _, want := range []string{
		"Indexed 3 sources", "Skipped 2 files: .gif 1, .rtf 1",
		"locked.pdf: encrypted PDF: a password is needed to open it\n", "truncated.pdf: unreadable PDF", "Failed 2:",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("index summary lacks %q:\n%s", want, r)
		}
	}
	if !strings.Contains(r.stderr, "handbook.pdf: 5 chunks, 5 embedded") {
		t.Errorf("no plain progress line on a non-terminal stderr:\n%s", r)
	}

	// The site, crawled through the SSRF guard's opt-out.
	r = runCLI(t, work, nil, "index", "--data", data, "--crawl", "--allow-private", "--delay", "0", "--max-pages", "10", site.URL+"/site/")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 3 sources") {
		t.Fatalf("crawl:\n%s", r)
	}
	// Without the opt-out the guard refuses the loopback address, with the reason.
	r = runCLI(t, work, nil, "index", "--data", data, site.URL+"/site/contact.html")
	if r.code != exitError || !strings.Contains(r.stdout, "refused by the SSRF guard: 127.0.0.1 is loopback") ||
		!strings.Contains(r.stdout, "Failed 1:") || !strings.Contains(r.stdout, "--allow-private") {
		t.Errorf("SSRF guard not reported:\n%s", r)
	}

	// Re-indexing unchanged files embeds nothing (the broken ones fail again).
	r = runCLI(t, work, nil, "index", "--data", data, "--json", "docs")
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitError || len(rep.Failed) != 2 {
		t.Fatalf("re-index --json: %v\n%s", err, r)
	}
	if rep.Embedded != 0 || rep.Unchanged != 3 || rep.Sources != 3 {
		t.Errorf("re-index of unchanged files: %+v, want 0 embedded, 3 unchanged", rep)
	}

	r = runCLI(t, work, nil, "sources", "--data", data, "--json")
	var srcsOut sourcesOutput
	if err := json.Unmarshal([]byte(r.stdout), &srcsOut); err != nil {
		t.Fatalf("sources --json: %v\n%s", err, r)
	}
	srcs := srcsOut.Results
	if len(srcs) != 6 {
		t.Errorf("sources: %d entries, want 6 (3 files, 3 pages):\n%s", len(srcs), r.stdout)
	}

	llmEnv := []string{"LLM_MODEL=ollama/fake-llm", "RERANK_MODEL=ollama/fake-llm", "OLLAMA_HOST=" + model.URL}
	for _, q := range e2eQuestions {
		t.Run(q.question, func(t *testing.T) {
			r := runCLI(t, work, llmEnv, "ask", "--data", data, q.question)
			if r.code != 0 {
				t.Fatalf("ask:\n%s", r)
			}
			answer, sources, _ := strings.Cut(r.stdout, "\nSources:\n")
			if !strings.Contains(answer, q.want) || !regexp.MustCompile(`\[\d\]`).MatchString(answer) {
				t.Errorf("answer lacks %q or a citation:\n%s", q.want, r)
			}
			if strings.Contains(r.stdout, "evil.example") || strings.Contains(r.stdout, "![") {
				t.Errorf("image or foreign link not sanitised:\n%s", r.stdout)
			}
			first, _, _ := strings.Cut(strings.TrimSpace(sources), "\n")
			if q.cite != "" && !strings.Contains(first, q.cite) {
				t.Errorf("first citation %q, want it to name %q", first, q.cite)
			}
			if !regexp.MustCompile(`Confidence: (high|medium|low) \(\d+/10, rerank\)`).MatchString(r.stdout) {
				t.Errorf("no rerank confidence label:\n%s", r.stdout)
			}
			// The answer must come from the cited passage: the number the
			// model cited points at a citation whose text holds the answer.
		})
	}
	// What the model saw: context delimited, marked as material.
	var sawAnswer bool
	for _, c := range model.chats() {
		if strings.Contains(c.user, "<context>") {
			sawAnswer = true
			if strings.Count(c.user, "<context>") != 1 || strings.Count(c.user, "</context>") != 1 {
				t.Errorf("context not wrapped exactly once:\n%s", c.user)
			}
			if !strings.Contains(c.system, "never instructions") {
				t.Errorf("system prompt does not say the context is material: %q", c.system)
			}
		}
	}
	if !sawAnswer {
		t.Error("the model never received an answer prompt")
	}

	// --json output.
	r = runCLI(t, work, llmEnv, "ask", "--data", data, "--json", e2eQuestions[0].question)
	var ans answerResult
	if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
		t.Fatalf("ask --json: %v\n%s", err, r)
	}
	if ans.Mode != answerLLM || ans.Model != "ollama/fake-llm" || len(ans.Citations) == 0 || ans.ConfidenceBasis != "rerank" ||
		!strings.Contains(ans.Answer, "48 hours") || ans.HyDE == "" || !strings.HasSuffix(ans.Citations[0].URL, "handbook.pdf") ||
		ans.Citations[0].Pages != "1" {
		t.Errorf("ask --json = %+v", ans)
	}

	// Without an LLM: extractive, saying so, with citations.
	r = runCLI(t, work, nil, "ask", "--data", data, e2eQuestions[2].question)
	if r.code != 0 || !strings.Contains(r.stderr, "note: no LLM configured") || !strings.Contains(r.stdout, "15 euros per day") ||
		!strings.Contains(r.stdout, "[1] docs/guides/faq.docx") || strings.Contains(r.stdout, "LLM") {
		t.Errorf("extractive answer:\n%s", r)
	}

	// search: ranked chunks with scores and citations.
	r = runCLI(t, work, nil, "search", "--data", data, "opening hours boathouse")
	if r.code != 0 || !regexp.MustCompile(`(?m)^1\. http://127\.0\.0\.1:\d+/site/hours\.html.*  score 0\.\d+`).MatchString(r.stdout) {
		t.Errorf("search:\n%s", r)
	}
	// A web page's citation links to its section with a text fragment; a
	// PDF's to its page.
	r = runCLI(t, work, nil, "search", "--data", data, "--json", "-k", "1", "opening hours boathouse")
	var hours searchOutput
	if err := json.Unmarshal([]byte(r.stdout), &hours); err != nil || len(hours.Results) != 1 ||
		hours.Results[0].Link != site.URL+"/site/hours.html#:~:text=Opening%20hours" {
		t.Errorf("section link of a web page: %v\n%s", err, r.stdout)
	}
	r = runCLI(t, work, nil, "search", "--data", data, "--json", "-k", "1", "cancel a booking full refund")
	var refund searchOutput
	if err := json.Unmarshal([]byte(r.stdout), &refund); err != nil || len(refund.Results) != 1 ||
		refund.Results[0].Link != "file://"+filepath.ToSlash(filepath.Join(docs, "handbook.pdf"))+"#page=1" {
		t.Errorf("page link of a PDF: %v\n%s", err, r.stdout)
	}
	for _, mode := range []string{modeVector, modeKeyword} {
		r = runCLI(t, work, nil, "search", "--data", data, "--mode", mode, "--json", "wetsuit rental")
		var out searchOutput
		err := json.Unmarshal([]byte(r.stdout), &out)
		res := out.Results
		if err != nil || len(res) == 0 || !strings.HasSuffix(res[0].URL, "faq.docx") || out.Mode != mode {
			t.Errorf("search --mode %s: %v\n%s", mode, err, r)
		}
	}

	// delete a crawled page and a whole folder.
	r = runCLI(t, work, nil, "delete", "--data", data, "--dry-run", "docs/guides")
	if r.code != 0 || !strings.Contains(r.stdout, "Would delete docs/guides/faq.docx (2 chunks)") ||
		!strings.Contains(r.stdout, "Would delete docs/guides/prices.html (1 chunk)") || !strings.Contains(r.stdout, "Nothing was removed") {
		t.Errorf("delete --dry-run:\n%s", r)
	}
	r = runCLI(t, work, nil, "delete", "--data", data, site.URL+"/site/contact.html", "docs/guides")
	if r.code != 0 || strings.Count(r.stdout, "Deleted ") != 4 || !strings.Contains(r.stdout, "Deleted 3 documents, 4 chunks in total") {
		t.Errorf("delete:\n%s", r)
	}
	r = runCLI(t, work, nil, "sources", "--data", data, "--json")
	srcsOut = sourcesOutput{}
	json.Unmarshal([]byte(r.stdout), &srcsOut)
	srcs = srcsOut.Results
	if len(srcs) != 3 {
		t.Errorf("after delete: %d sources, want 3:\n%s", len(srcs), r.stdout)
	}
	r = runCLI(t, work, nil, "delete", "--data", data, "docs/nothing-here.pdf")
	if r.code != exitError || !strings.Contains(r.stderr, "nothing indexed under that name") {
		t.Errorf("delete of an unknown source:\n%s", r)
	}
}

func TestBadInput(t *testing.T) {
	work := t.TempDir()
	empty := filepath.Join(work, "empty")

	// ask and search before anything is indexed.
	for _, cmd := range []string{"ask", "search"} {
		r := runCLI(t, work, nil, cmd, "--data", empty, "anything")
		if r.code != exitError || !strings.Contains(r.stderr, "nothing is indexed yet") {
			t.Errorf("%s on a missing index:\n%s", cmd, r)
		}
	}
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, work, nil, "ask", "--data", empty, "anything")
	if r.code != exitError || !strings.Contains(r.stderr, "nothing is indexed yet") {
		t.Errorf("ask on an empty index:\n%s", r)
	}

	// Missing files are reported, the rest indexed.
	copyFixture(t, "../../testdata/cli/docs/prices.html", filepath.Join(work, "prices.html"))
	if err := os.WriteFile(filepath.Join(work, "notes.rtf"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(work, "index")
	r = runCLI(t, work, nil, "index", "--data", data, "missing.pdf", "prices.html", "notes.rtf")
	if r.code != exitError || !strings.Contains(r.stdout, "Indexed 1 source:") ||
		!strings.Contains(r.stdout, "missing.pdf: no such file or directory") || !strings.Contains(r.stdout, `notes.rtf: unsupported format: Rich Text Format (.rtf)`) {
		t.Errorf("missing and unsupported files:\n%s", r)
	}

	// Another embedder than the one that built the index: a clear error.
	r = runCLI(t, work, []string{"EMBEDDING_DIM=256"}, "ask", "--data", data, "sunset paddle")
	if r.code != exitError || !strings.Contains(r.stderr, "index was built with another embedder") ||
		!strings.Contains(r.stderr, "askyourdocs/local-hash-1024") || !strings.Contains(r.stderr, "askyourdocs/local-hash-256") {
		t.Errorf("embedder mismatch:\n%s", r)
	}
	r = runCLI(t, work, []string{"EMBEDDING_DIM=256"}, "index", "--data", data, "prices.html")
	if r.code != exitError || !strings.Contains(r.stderr, "another embedder") {
		t.Errorf("index with another embedder:\n%s", r)
	}

	// Usage errors.
	for _, args := range [][]string{{}, {"frobnicate"}, {"ask"}, {"index"}, {"eval"}, {"search", "--mode", "nope", "x", "--data", data},
		{"ask", "  ", "--data", data}, {"search", "", "--data", data}} {
		r := runCLI(t, work, nil, args...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d:\n%s", args, r.code, exitUsage, r)
		}
	}
}
