package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// testServe is a serve app on an httptest server.
type testServe struct {
	*httptest.Server
	s    *server
	data string
}

// newTestServe opens a backend in a fresh data directory with env as the
// environment (model settings) and serves it; password "" leaves the
// admin routes open.
func newTestServe(t testing.TB, env map[string]string, password string, maxUpload int64) *testServe {
	t.Helper()
	data := t.TempDir()
	return newTestServeIn(t, data, "", storeName, env, password, maxUpload)
}

// newTestServeIn is newTestServe on a given data directory (or --pg DSN)
// and store name.
func newTestServeIn(t testing.TB, data, dsn, name string, env map[string]string, password string, maxUpload int64) *testServe {
	t.Helper()
	if h, ok := env["OLLAMA_HOST"]; ok {
		t.Setenv("OLLAMA_HOST", h) // ProviderConfigFromEnv reads the process environment
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := &cliApp{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return env[k] }}
	b, err := a.open(ctx, &commonFlags{data: data, pg: dsn, name: name}, openOptions{models: true, write: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(ctx, b, serveOptions{user: "admin", password: password, maxUpload: maxUpload, dataDir: data})
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	ts := &testServe{Server: httptest.NewServer(s), s: s, data: data}
	t.Cleanup(func() {
		ts.Close()
		s.Close()
		b.Close()
	})
	return ts
}

// request sends a request; body may be nil, a string or bytes.
func (ts *testServe) request(t testing.TB, c *http.Client, method, path, ctype string, body []byte, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = ts.Client()
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// multipartBody builds an upload of the given files (name -> content).
func multipartBody(t testing.TB, files map[string][]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		fw, err := mw.CreateFormFile("files", name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "cli", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// uploadAndWait uploads files as a script would and waits for the index
// job.
func (ts *testServe) uploadAndWait(t testing.TB, hdr map[string]string, files map[string][]byte) jobView {
	t.Helper()
	ct, body := multipartBody(t, files)
	h := map[string]string{"X-Requested-With": "test"}
	for k, v := range hdr {
		h[k] = v
	}
	resp, out := ts.request(t, nil, "POST", "/index/upload", ct, body, h)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %s %s", resp.Status, out)
	}
	var started struct{ JobID string }
	json.Unmarshal([]byte(out), &started)
	return ts.wait(t, started.JobID)
}

// wait blocks until the job is finished.
func (ts *testServe) wait(t testing.TB, id string) jobView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := ts.s.jobs.Wait(ctx, id); err != nil {
		t.Fatal(err)
	}
	j, _ := getJob(ts.s.jobs, id)
	return j
}

// askJSON asks through POST /api/ask.
func (ts *testServe) askJSON(t testing.TB, in askInput) *askOutput {
	t.Helper()
	body, _ := json.Marshal(in)
	resp, out := ts.request(t, nil, "POST", "/api/ask", "application/json", body, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ask: %s %s", resp.Status, out)
	}
	var a askOutput
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	return &a
}

func TestServeAskUploadFeedback(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	job := ts.uploadAndWait(t, nil, map[string][]byte{
		"handbook.pdf": readFixture(t, "handbook.pdf"),
		"faq.docx":     readFixture(t, "faq.docx"),
		"broken.pdf":   []byte("%PDF-1.4 this is not a PDF"),
	})
	rep, ok := job.Result.(*indexReport)
	if job.Status != "done" || !ok || rep.Sources != 2 || len(rep.Failed) != 1 || rep.Failed[0].Source != "broken.pdf" {
		t.Fatalf("index job: %+v, report %+v", job, rep)
	}
	if !strings.Contains(strings.Join(job.Progress, "\n"), "handbook.pdf") {
		t.Errorf("progress does not name the file: %q", job.Progress)
	}
	// The failure is reported under the uploaded name with its reason in
	// one line, never where the server keeps the file.
	if f := rep.Failed[0]; f.URL != "" || !strings.HasPrefix(f.Reason, "unreadable PDF") || strings.Contains(f.Reason, string(filepath.Separator)) ||
		strings.Contains(strings.Join(job.Progress, "\n"), ts.s.uploadDir) {
		t.Errorf("failed upload reported as %+v, progress %q", f, job.Progress)
	}

	// JSON answer: extractive, cited with the PDF's page and an excerpt.
	a := ts.askJSON(t, askInput{Question: "How long before the start can I cancel a booking and still get a full refund?"})
	if a.Mode != answerExtractive || !strings.Contains(a.Answer, "48 hours") || a.Confidence == "" || a.ID == "" {
		t.Fatalf("answer: %+v", a)
	}
	c := a.Citations[0]
	if c.Title != "handbook.pdf" && !strings.HasPrefix(c.Title, "handbook.pdf ") || c.Page != 1 ||
		!strings.HasPrefix(c.URL, "/view?url=") || !strings.HasSuffix(c.URL, "#passage") ||
		!strings.HasPrefix(c.File, "/files?url=") || !strings.HasSuffix(c.File, "#page=1") || !strings.Contains(c.Excerpt, "48 hours") {
		t.Errorf("first citation: %+v", c)
	}
	if len(a.Sources) != len(a.Citations) || a.Sources[0].URL != c.URL {
		t.Errorf("sources %+v do not mirror the citations", a.Sources)
	}

	// The citation's file link serves the PDF inline.
	resp, body := ts.request(t, nil, "GET", strings.TrimSuffix(c.File, "#page=1"), "", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(body, "%PDF-") {
		t.Errorf("file route: %s %s", resp.Status, resp.Header)
	}
	// Only indexed files are served.
	resp, _ = ts.request(t, nil, "GET", "/files?url="+url.QueryEscape("/etc/passwd"), "", nil, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unindexed file: %s, want 404", resp.Status)
	}

	// A follow-up without an LLM retrieves with the topic's words.
	f := ts.askJSON(t, askInput{Question: "And for a wetsuit?", History: []askyourdocs.QATurn{{Question: "How much does it cost to rent?", Answer: a.Answer}}})
	if f.Standalone != "cost rent And for a wetsuit?" || !strings.Contains(f.Answer, "15 euros per day") {
		t.Errorf("follow-up: standalone %q, answer %q", f.Standalone, f.Answer)
	}

	// Server-sent events: deltas, then the whole answer.
	body2, _ := json.Marshal(askInput{Question: "How much does it cost to rent a wetsuit?"})
	resp, stream := ts.request(t, nil, "POST", "/api/ask", "application/json", body2, map[string]string{"Accept": "text/event-stream"})
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream content type %q", resp.Header.Get("Content-Type"))
	}
	events := regexp.MustCompile(`(?m)^event: (\w+)$`).FindAllStringSubmatch(stream, -1)
	if len(events) < 2 || events[0][1] != "delta" || events[len(events)-1][1] != "done" {
		t.Fatalf("events %v in\n%s", events, stream)
	}
	var done askOutput
	json.Unmarshal([]byte(stream[strings.LastIndex(stream, "data: ")+6:]), &done)
	if !strings.Contains(done.Answer, "15 euros per day") {
		t.Errorf("done event answer %q", done.Answer)
	}

	// The page renders the same answer without JavaScript.
	resp, page := ts.request(t, nil, "GET", "/ask?q="+url.QueryEscape("What is the minimum age for paddling a single kayak?"), "", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(page, "minimum age for a single kayak is 12") || !strings.Contains(page, "#page=2") {
		t.Errorf("ask page: %s\n%s", resp.Status, page)
	}

	// Thumbs up through the API lands in the log, and in the log file.
	rb, _ := json.Marshal(map[string]string{"id": a.ID, "rating": "up"})
	if resp, out := ts.request(t, nil, "POST", "/api/feedback", "application/json", rb, nil); resp.StatusCode != 200 {
		t.Fatalf("feedback: %s %s", resp.Status, out)
	}
	rb, _ = json.Marshal(map[string]string{"id": "nope", "rating": "up"})
	if resp, _ := ts.request(t, nil, "POST", "/api/feedback", "application/json", rb, nil); resp.StatusCode != 404 {
		t.Errorf("feedback for an unknown id: %s", resp.Status)
	}
	logged := readFeedbackLog(t, ts)
	if e := logged[a.ID]; e.Rating != ratingUp || e.Question != a.Question {
		t.Errorf("logged entry %+v", e)
	}

	// Delete a source: gone from the index and from disk.
	var srcs []sourceView
	_, out := ts.request(t, nil, "GET", "/api/sources", "", nil, nil)
	json.Unmarshal([]byte(out), &srcs)
	if len(srcs) != 2 {
		t.Fatalf("sources %+v", srcs)
	}
	db, _ := json.Marshal(map[string]string{"url": srcs[0].URL})
	if resp, out := ts.request(t, nil, "POST", "/index/delete", "application/json", db, nil); resp.StatusCode != 200 {
		t.Fatalf("delete: %s %s", resp.Status, out)
	}
	if _, err := os.Stat(srcs[0].URL); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted upload still on disk: %v", err)
	}
	_, out = ts.request(t, nil, "GET", "/api/sources", "", nil, nil)
	json.Unmarshal([]byte(out), &srcs)
	if len(srcs) != 1 {
		t.Errorf("after delete: %+v", srcs)
	}
}

// readFeedbackLog reads the server's feedback log (its database table)
// by entry ID.
func readFeedbackLog(t testing.TB, ts *testServe) map[string]feedbackEntry {
	t.Helper()
	entries, err := ts.s.feedback.All()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]feedbackEntry{}
	for _, e := range entries {
		m[e.ID] = e
	}
	return m
}

func TestServeSecurity(t *testing.T) {
	const password = "s3cret"
	ts := newTestServe(t, nil, password, 1<<20)
	basic := func(pw string) map[string]string {
		r, _ := http.NewRequest("GET", "/", nil)
		r.SetBasicAuth("admin", pw)
		return map[string]string{"Authorization": r.Header.Get("Authorization")}
	}

	t.Run("credentials", func(t *testing.T) {
		routes := []struct{ method, path, ctype, body string }{
			{"GET", "/index", "", ""},
			{"POST", "/index/upload", "multipart/form-data; boundary=x", "--x--"},
			{"POST", "/index/url", "application/json", `{"url":"https://example.com/"}`},
			{"POST", "/index/crawl", "application/json", `{"url":"https://example.com/"}`},
			{"POST", "/index/delete", "application/json", `{"url":"x"}`},
			{"GET", "/api/jobs", "", ""},
			{"GET", "/api/jobs/abc", "", ""},
			{"GET", "/api/feedback", "", ""},
			{"POST", "/api/eval/generated", "application/json", `{}`},
			{"POST", "/api/eval/feedback", "application/json", `{}`},
			{"POST", "/api/eval/injection", "application/json", `{}`},
			{"GET", "/api/eval/datasets/eval_dataset_injection.json", "", ""},
		}
		for _, rt := range routes {
			for _, hdr := range []map[string]string{nil, basic("wrong")} {
				resp, body := ts.request(t, nil, rt.method, rt.path, rt.ctype, []byte(rt.body), hdr)
				if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden &&
					resp.StatusCode != http.StatusTooManyRequests {
					t.Errorf("%s %s without valid credentials: %s %s", rt.method, rt.path, resp.Status, body)
				}
			}
		}
		// The wrong guesses above locked this client out for a while.
		ts.s.limiter = newLoginLimiter()
		// Nothing was started or written.
		if n := len(ts.s.jobs.List(0)); n != 0 {
			t.Errorf("%d jobs started without credentials", n)
		}
		resp, _ := ts.request(t, nil, "GET", "/api/jobs", "", nil, basic(password))
		if resp.StatusCode != 200 {
			t.Errorf("with credentials: %s", resp.Status)
		}
	})

	t.Run("login session", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		resp, _ := ts.request(t, c, "POST", "/api/login", "application/json", []byte(`{"username":"admin","password":"nope"}`), nil)
		if resp.StatusCode != 401 {
			t.Errorf("wrong login: %s", resp.Status)
		}
		resp, _ = ts.request(t, c, "POST", "/api/login", "application/json", []byte(`{"username":"admin","password":"`+password+`"}`), nil)
		if resp.StatusCode != 200 {
			t.Fatalf("login: %s", resp.Status)
		}
		if resp, _ = ts.request(t, c, "GET", "/api/jobs", "", nil, nil); resp.StatusCode != 200 {
			t.Errorf("with session cookie: %s", resp.Status)
		}
	})

	t.Run("csrf", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		// A page sets the token cookie and embeds the token.
		_, page := ts.request(t, c, "GET", "/ask", "", nil, nil)
		tok := regexp.MustCompile(`name="csrf-token" content="([0-9a-f]{32})"`).FindStringSubmatch(page)
		if tok == nil {
			t.Fatal("no CSRF token in the page")
		}
		form := func(v url.Values) []byte { return []byte(v.Encode()) }
		const ct = "application/x-www-form-urlencoded"
		for name, v := range map[string]url.Values{
			"missing": {"url": {"https://example.com/"}},
			"wrong":   {"url": {"https://example.com/"}, "csrf": {strings.Repeat("0", 32)}},
		} {
			resp, body := ts.request(t, c, "POST", "/index/url", ct, form(v), basic(password))
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
				t.Errorf("%s token: %s %s", name, resp.Status, body)
			}
		}
		// The refusal tells a script which header gets through, and that
		// header does: a multipart upload from curl, say.
		resp, body := ts.request(t, c, "POST", "/index/url", ct, form(url.Values{"url": {"nope"}}), basic(password))
		if !strings.Contains(body, "X-Requested-With") || !strings.Contains(body, csrfHeader) {
			t.Errorf("the refusal names no header a script can send: %s", body)
		}
		resp, body = ts.request(t, nil, "POST", "/index/url", ct, form(url.Values{"url": {"nope"}}),
			map[string]string{"Authorization": basic(password)["Authorization"], "X-Requested-With": "curl"})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not an http(s) URL") {
			t.Errorf("with X-Requested-With, as the refusal says: %s %s", resp.Status, body)
		}
		// The login form and the thumbs need the token too.
		for _, p := range []string{"/login", "/feedback", "/logout"} {
			if resp, _ := ts.request(t, c, "POST", p, ct, form(url.Values{"id": {"x"}}), nil); resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s without token: %s", p, resp.Status)
			}
		}
		// With the token the form gets through CSRF (and fails later on
		// the URL, here a malformed one).
		resp, body = ts.request(t, c, "POST", "/index/url", ct, form(url.Values{"url": {"nope"}, "csrf": {tok[1]}}), basic(password))
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not an http(s) URL") {
			t.Errorf("with token: %s %s", resp.Status, body)
		}
		// The login page shown with 401 still sets the token cookie.
		resp, _ = ts.request(t, nil, "GET", "/index", "", nil, map[string]string{"Accept": "text/html"})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("Set-Cookie"), csrfCookie+"=") {
			t.Errorf("login page on 401: %s, Set-Cookie %q", resp.Status, resp.Header.Get("Set-Cookie"))
		}
		// A cross-site origin is refused even for JSON.
		resp, _ = ts.request(t, c, "POST", "/api/ask", "application/json", []byte(`{"question":"x"}`), map[string]string{"Origin": "https://evil.example"})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site origin: %s", resp.Status)
		}
	})

	t.Run("upload limit", func(t *testing.T) {
		big := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("x"), 2<<20)...)
		ct, body := multipartBody(t, map[string][]byte{"big.pdf": big})
		h := basic(password)
		h["X-Requested-With"] = "test"
		resp, out := ts.request(t, nil, "POST", "/index/upload", ct, body, h)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("over-limit upload: %s %s", resp.Status, out)
		}
		// Chunked, so the limit trips while reading rather than on the
		// announced length.
		req, _ := http.NewRequest("POST", ts.URL+"/index/upload", io.MultiReader(bytes.NewReader(body)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", ct)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if resp, err := ts.Client().Do(req); err != nil {
			t.Fatal(err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("chunked over-limit upload: %s", resp.Status)
			}
		}
		entries, _ := os.ReadDir(ts.s.uploadDir)
		if len(entries) != 0 {
			t.Errorf("a refused upload left %d entries in %s", len(entries), ts.s.uploadDir)
		}
		// A wrong type and a fake PDF are refused too, and leave nothing.
		for name, content := range map[string][]byte{"x.exe": []byte("MZ"), "fake.pdf": []byte("<html>")} {
			ct, body := multipartBody(t, map[string][]byte{name: content})
			if resp, out := ts.request(t, nil, "POST", "/index/upload", ct, body, h); resp.StatusCode != http.StatusUnsupportedMediaType {
				t.Errorf("%s: %s %s", name, resp.Status, out)
			}
		}
		if entries, _ := os.ReadDir(ts.s.uploadDir); len(entries) != 0 {
			t.Errorf("refused uploads left %d entries", len(entries))
		}
		if n := len(ts.s.jobs.List(0)); n != 0 {
			t.Errorf("refused uploads started %d index jobs", n)
		}
	})

	t.Run("ssrf", func(t *testing.T) {
		for _, p := range []string{"/index/url", "/index/crawl"} {
			resp, body := ts.request(t, nil, "POST", p, "application/json", []byte(`{"url":"http://127.0.0.1:9/admin"}`), basic(password))
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, askyourdocs.ErrPrivateTarget.Error()) {
				t.Errorf("%s private URL: %s %s", p, resp.Status, body)
			}
		}
	})

	t.Run("escaping and headers", func(t *testing.T) {
		resp, page := ts.request(t, nil, "GET", "/ask?q="+url.QueryEscape(`<script>alert(1)</script>`), "", nil, nil)
		if strings.Contains(page, "<script>alert(1)") || !strings.Contains(page, "&lt;script&gt;alert(1)") {
			t.Errorf("question not escaped:\n%s", page)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("CSP %q", csp)
		}
	})

	t.Run("no stack traces", func(t *testing.T) {
		h := ts.s.secure(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom at secret/path.go:12") }))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/x", nil))
		if rec.Code != 500 || strings.Contains(rec.Body.String(), "boom") || strings.Contains(rec.Body.String(), "goroutine") {
			t.Errorf("panic answer: %d %s", rec.Code, rec.Body)
		}
	})
}

func TestServeWithoutCredentialsIsLoopbackOnly(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	// DNS rebinding: another host name is refused.
	req, _ := http.NewRequest("GET", ts.URL+"/api/jobs", nil)
	req.Host = "evil.example"
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %s", resp.Status)
	}
	if resp, _ := ts.request(t, nil, "GET", "/api/jobs", "", nil, nil); resp.StatusCode != 200 {
		t.Errorf("loopback without credentials: %s", resp.Status)
	}
	// The command refuses a public address without a password.
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--data", t.TempDir(), "--addr", "0.0.0.0:0"}, nil, io.Discard, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), envServePassword) {
		t.Errorf("serve on 0.0.0.0 without password: exit %d, %s", code, stderr.String())
	}
	for addr, want := range map[string]bool{"127.0.0.1:3400": true, "[::1]:1": true, "localhost:80": true, ":3400": false, "0.0.0.0:1": false, "10.0.0.1:1": false} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v", addr, got)
		}
	}
}

func TestUploadName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf": "report.pdf", `C:\Users\x\doc.docx`: "doc.docx", "../../etc/passwd": "passwd",
		".hidden.pdf": "hidden.pdf", "..": "", "a\x00b.pdf": "ab.pdf", "": "",
	} {
		if got := uploadName(in); got != want {
			t.Errorf("uploadName(%q) = %q, want %q", in, got, want)
		}
	}
}

// serveFakeModel is a fake Ollama for serve: the grounded chat replies of
// fakeReply, streamed word by word when the client streams, plus replies
// to the eval-generation and condense prompts.
type serveFakeModel struct {
	*httptest.Server
	mu      sync.Mutex
	streams int
	// gate, when set, holds a streamed answer after its first words until
	// it is closed, so a test can see the answer while it streams.
	gate chan struct{}
}

func newServeFakeModel(t testing.TB) *serveFakeModel {
	f := &serveFakeModel{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *serveFakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/chat" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Stream bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var c fakeChat
	for _, m := range body.Messages {
		if m.Role == "system" {
			c.system += m.Content
		} else {
			c.user += m.Content
		}
	}
	var reply string
	switch {
	case strings.Contains(c.user, "You write one test question"):
		reply = `{"question": "What does the document say about cancellations?", "answer": "They are free up to 48 hours before the tour."}`
	case strings.Contains(c.user, "Follow-up question:"):
		prev := regexp.MustCompile(`(?m)^\w+: (.*)$`).FindStringSubmatch(c.user)
		follow := strings.TrimSpace(c.user[strings.LastIndex(c.user, "Follow-up question:")+len("Follow-up question:") : strings.LastIndex(c.user, "Standalone question:")])
		reply = follow
		if prev != nil {
			reply = prev[1] + " " + follow
		}
	default:
		reply = fakeReply(c)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	if body.Stream {
		f.mu.Lock()
		f.streams++
		f.mu.Unlock()
		for i, word := range strings.SplitAfter(reply, " ") {
			if i == 3 && f.gate != nil && strings.Contains(c.user, "<context>") {
				select {
				case <-f.gate:
				case <-r.Context().Done():
					return
				}
			}
			enc.Encode(map[string]any{"model": body.Model, "message": map[string]any{"role": "assistant", "content": word}, "done": false})
			w.(http.Flusher).Flush()
		}
		reply = ""
	}
	enc.Encode(map[string]any{"model": body.Model, "message": map[string]any{"role": "assistant", "content": reply}, "done": true, "done_reason": "stop"})
}

func TestServeWithLLMStreamsAndSanitises(t *testing.T) {
	model := newServeFakeModel(t)
	ts := newTestServe(t, map[string]string{"LLM_MODEL": "ollama/fake-llm", "OLLAMA_HOST": model.URL}, "", 0)
	ts.uploadAndWait(t, nil, map[string][]byte{"handbook.pdf": readFixture(t, "handbook.pdf"), "faq.docx": readFixture(t, "faq.docx")})
	body, _ := json.Marshal(askInput{Question: "How much does it cost to rent a wetsuit?"})
	_, stream := ts.request(t, nil, "POST", "/api/ask", "application/json", body, map[string]string{"Accept": "text/event-stream"})
	deltas := strings.Count(stream, "event: delta")
	if deltas < 5 {
		t.Errorf("only %d delta events:\n%s", deltas, stream)
	}
	var done askOutput
	json.Unmarshal([]byte(stream[strings.LastIndex(stream, "data: ")+6:]), &done)
	if done.Mode != answerLLM || !strings.Contains(done.Answer, "15 euros per day") || strings.Contains(done.Answer, "evil.example") {
		t.Errorf("answer %+v", done)
	}
	// The stream is sanitised as it goes (the CLI's streaming sanitiser):
	// the link the final answer drops never reaches the browser either.
	if strings.Contains(stream, "evil.example") {
		t.Errorf("the link the final answer drops was streamed")
	}
	// A follow-up is condensed by the model.
	f := ts.askJSON(t, askInput{Question: "And how long before the start can I cancel?",
		History: []askyourdocs.QATurn{{Question: "How much does it cost to rent a wetsuit?", Answer: done.Answer}}})
	if !strings.HasPrefix(f.Standalone, "How much does it cost to rent a wetsuit? And how long") || f.Mode != answerLLM {
		t.Errorf("follow-up: %q -> %q", f.Standalone, f.Answer)
	}
}

// Example-style check of the job view: the JSON the Index page polls.
// TestSupportedUploadExts: the upload form offers every format the
// engine's ExtractParagraphs documents, and only formats it reads.
func TestSupportedUploadExts(t *testing.T) {
	got := supportedUploadExts()
	for _, e := range []string{".pdf", ".docx", ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".epub", ".md", ".markdown",
		".txt", ".text", ".html", ".htm", ".xhtml"} {
		if !slices.Contains(got, e) {
			t.Errorf("upload form lacks %s: %v", e, got)
		}
	}
	for _, e := range got {
		if fileKind("x"+e) == "" {
			t.Errorf("upload form offers %s, which the indexer does not read", e)
		}
	}
}

func TestToJobJSON(t *testing.T) {
	j := toJobJSON(jobView{ID: "1", Kind: "index", Status: "done", Finished: true,
		Result: &indexReport{Sources: 1, Chunks: 3, Failed: []failedSource{{Source: "a.pdf", Reason: "encrypted"}}}})
	if j.Summary != "1 source indexed, 3 chunks, 1 failed" || len(j.Failed) != 1 || j.ProgressLog == nil {
		t.Errorf("%+v", j)
	}
}

// TestServeJobsAPIShape: GET /api/jobs and GET /api/jobs/{id} give the
// keys they share the same type (progress the latest message as a string,
// error a string, present when empty), and a job whose only upload failed
// ends failed, its error naming the file and why, not done with error "".
func TestServeJobsAPIShape(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	good := ts.uploadAndWait(t, nil, map[string][]byte{"faq.docx": readFixture(t, "faq.docx")})
	bad := ts.uploadAndWait(t, nil, map[string][]byte{"broken.pdf": []byte("%PDF-1.4 this is not a PDF")})
	if good.Status != "done" || good.Error != "" {
		t.Errorf("good upload: %+v", good)
	}
	if bad.Status != "failed" || !strings.Contains(bad.Error, "nothing indexed: broken.pdf: unreadable PDF") {
		t.Errorf("an upload whose only file failed: status %q, error %q", bad.Status, bad.Error)
	}
	// The Index page renders the same jobs (its template reads the
	// progress log), and the failed job's reason.
	resp, page := ts.request(t, nil, "GET", "/index", "", nil, map[string]string{"Accept": "text/html"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `data-status="failed"`) ||
		!strings.Contains(page, "nothing indexed: broken.pdf") || !strings.Contains(page, "faq.docx") {
		t.Errorf("GET /index: %s\n%s", resp.Status, page)
	}
	_, list := ts.request(t, nil, "GET", "/api/jobs", "", nil, nil)
	var jobs []map[string]any
	if err := json.Unmarshal([]byte(list), &jobs); err != nil || len(jobs) != 2 {
		t.Fatalf("GET /api/jobs: %v\n%s", err, list)
	}
	for _, lj := range jobs {
		_, one := ts.request(t, nil, "GET", "/api/jobs/"+lj["id"].(string), "", nil, nil)
		var oj map[string]any
		if err := json.Unmarshal([]byte(one), &oj); err != nil {
			t.Fatalf("GET /api/jobs/{id}: %v\n%s", err, one)
		}
		for _, k := range []string{"id", "kind", "status", "progress", "progressLog", "error"} {
			lv, lok := lj[k]
			ov, ook := oj[k]
			if !lok || !ook {
				t.Errorf("key %q: in the list %v, in the job %v", k, lok, ook)
				continue
			}
			if fmt.Sprintf("%T", lv) != fmt.Sprintf("%T", ov) {
				t.Errorf("key %q: %T in the list, %T in the job", k, lv, ov)
			}
			if k != "progressLog" && lv != ov {
				t.Errorf("key %q: %v in the list, %v in the job", k, lv, ov)
			}
		}
	}
}

// TestServeGenkitFlows runs the registered ask and index flows as the
// Genkit CLI would (flow:run): index the fixture folder, then ask.
func TestServeGenkitFlows(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	names := map[string]bool{}
	for _, f := range genkit.ListFlows(ts.s.b.g) {
		names[f.Name()] = true
	}
	if !names["ask"] || !names["index"] {
		t.Fatalf("registered flows %v, want ask and index", names)
	}
	ctx := context.Background()
	rep, err := ts.s.indexFlow.Run(ctx, indexInput{Paths: []string{filepath.Join("..", "..", "testdata", "cli", "docs")}})
	if err != nil || rep.Sources != 3 || len(rep.Failed) != 0 {
		t.Fatalf("index flow: %+v, %v", rep, err)
	}
	var progress []string
	for v, err := range ts.s.askFlow.Stream(ctx, askInput{Question: "How much does it cost to rent a wetsuit?"}) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Done {
			if !strings.Contains(v.Output.Answer, "15 euros per day") || !strings.HasSuffix(v.Output.Citations[0].Source, "faq.docx") {
				t.Errorf("ask flow: %+v", v.Output)
			}
			break
		}
		progress = append(progress, v.Stream)
	}
	if len(progress) == 0 {
		t.Error("the ask flow streamed nothing")
	}
}

// TestServeWebPagesAndCrawl indexes a page and crawls a site served on
// loopback (private targets allowed for this test only), then asks about
// it: the citation is the page's URL.
func TestServeWebPagesAndCrawl(t *testing.T) {
	askyourdocs.SetAllowPrivateTargets(true)
	t.Cleanup(func() { askyourdocs.SetAllowPrivateTargets(false) })
	site := siteServer(t)
	ts := newTestServe(t, nil, "", 0)
	ts.s.pages = newPageFetcher(true) // as serve --allow-private
	start := func(path, body string) jobView {
		t.Helper()
		resp, out := ts.request(t, nil, "POST", path, "application/json", []byte(body), nil)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: %s %s", path, resp.Status, out)
		}
		var started struct{ JobID string }
		json.Unmarshal([]byte(out), &started)
		return ts.wait(t, started.JobID)
	}
	j := start("/index/url", `{"url":"`+site.URL+`/site/contact.html"}`)
	if rep, ok := j.Result.(*indexReport); j.Status != "done" || !ok || rep.Sources != 1 {
		t.Fatalf("page job %+v", j)
	}
	j = start("/index/crawl", `{"url":"`+site.URL+`/site/","maxPages":10,"maxDepth":2}`)
	if rep, ok := j.Result.(*indexReport); j.Status != "done" || j.Kind != "crawl" || !ok || rep.Sources < 3 {
		t.Fatalf("crawl job %+v", j)
	}
	a := ts.askJSON(t, askInput{Question: "When is the boathouse open between May and September?"})
	if !strings.Contains(a.Answer, "9:00 to 18:00") || a.Citations[0].File != site.URL+"/site/hours.html" || a.Sources[0].URL != site.URL+"/site/hours.html" {
		t.Errorf("answer %q cites %+v", a.Answer, a.Citations[0])
	}
	// The page's passage view comes from the index: the chunk marked.
	resp, view := ts.request(t, nil, "GET", strings.TrimSuffix(a.Citations[0].URL, "#passage"), "", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(view, "<mark>") || !strings.Contains(view, "9:00 to 18:00") ||
		!strings.Contains(view, `href="`+site.URL+`/site/hours.html"`) {
		t.Errorf("page view: %s\n%s", resp.Status, view)
	}
	// A page that cannot be fetched is refused before a job starts.
	resp, out := ts.request(t, nil, "POST", "/index/url", "application/json", []byte(`{"url":"`+site.URL+`/missing"}`), nil)
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("missing page: %s %s", resp.Status, out)
	}
}

// TestServeFeedbackForm rates an answer without JavaScript: the page's
// form with its CSRF token.
func TestServeFeedbackForm(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	ts.uploadAndWait(t, nil, map[string][]byte{"faq.docx": readFixture(t, "faq.docx")})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	_, page := ts.request(t, c, "GET", "/ask?q="+url.QueryEscape("How much does it cost to rent a wetsuit?"), "", nil, nil)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{32})"><input type="hidden" name="id" value="([0-9a-f]{32})"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no rating form in the page:\n%s", page)
	}
	form := url.Values{"csrf": {m[1]}, "id": {m[2]}, "rating": {"down"}}
	resp, body := ts.request(t, c, "POST", "/feedback", "application/x-www-form-urlencoded", []byte(form.Encode()), map[string]string{"Accept": "text/html"})
	if resp.StatusCode != 200 || !strings.Contains(body, "Your rating is recorded") {
		t.Fatalf("rating form: %s %s", resp.Status, body)
	}
	if e := readFeedbackLog(t, ts)[m[2]]; e.Rating != ratingDown {
		t.Errorf("logged entry %+v", e)
	}
}

// TestServeCommand runs the serve command itself: it listens on a free
// loopback port, says where and that the admin routes are open, answers,
// and stops cleanly when its context ends.
func TestServeCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, nil, io.Discard, pw)
		pw.Close()
	}()
	var lines []string
	buf := make([]byte, 4096)
	var acc string
	for !strings.Contains(acc, "loopback only") {
		n, err := pr.Read(buf)
		if err != nil {
			t.Fatalf("serve ended early: %v\n%s", err, acc)
		}
		acc += string(buf[:n])
	}
	lines = strings.Split(acc, "\n")
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(lines[0])
	if m == nil || !strings.Contains(acc, envServePassword+" is not set") {
		t.Fatalf("startup lines:\n%s", acc)
	}
	resp, err := http.Get("http://" + m[1] + "/ask")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /ask: %s", resp.Status)
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit code %d", code)
	}
}

// FuzzUploadName checks that a client's file name never becomes a path:
// the result is empty or one local name without separators or a leading
// dot.
func FuzzUploadName(f *testing.F) {
	for _, s := range []string{"report.pdf", `C:\x\y.docx`, "../../etc/passwd", ".hidden", "a/b/c.html", "..", "\x00", "x\ny.pdf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := uploadName(in)
		if out == "" {
			return
		}
		if strings.ContainsAny(out, `/\`) || strings.HasPrefix(out, ".") || !filepath.IsLocal(out) || len(out) > 200 ||
			strings.ContainsFunc(out, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("uploadName(%q) = %q", in, out)
		}
	})
}
