package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// slowMarker in a text makes the fake embedder hang until the request is
// cancelled, so the test can interrupt the CLI while it embeds that source.
const slowMarker = "SLOW-MARKER"

// hashVector is the fake embedder's 8-dimensional vector of a text.
func hashVector(s string) []float32 {
	v := make([]float32, 8)
	for _, w := range strings.Fields(strings.ToLower(s)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%8]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func writeHTML(t *testing.T, path, title, text string) {
	t.Helper()
	page := "<html><head><title>" + title + "</title></head><body><h1>" + title + "</h1><p>" + text + "</p></body></html>"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptRollsBackCurrentSource sends SIGINT to the built binary while
// it embeds the third of four files: the files finished before are kept in
// their new version, the interrupted one keeps its previous version, the
// last is untouched, and the index file stays valid.
func TestInterruptRollsBackCurrentSource(t *testing.T) {
	bin := buildCLI(t)
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan struct{}, 1)
	model := newFakeOllama(t)
	model.embed = func(w http.ResponseWriter, r *http.Request, inputs []string) {
		var embs [][]float32
		for _, in := range inputs {
			if strings.Contains(in, slowMarker) {
				select {
				case blocked <- struct{}{}:
				default:
				}
				select { // until the client gives up
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
				return
			}
			embs = append(embs, hashVector(in))
		}
		json.NewEncoder(w).Encode(map[string]any{"model": "fake-embed", "embeddings": embs})
	}
	env := []string{"EMBEDDING_MODEL=ollama/fake-embed", "OLLAMA_HOST=" + model.URL}
	data := filepath.Join(work, "index")

	writeHTML(t, filepath.Join(docs, "a.html"), "Alpha", "alpha river text")
	writeHTML(t, filepath.Join(docs, "b.html"), "Bravo", "bravo old mountain text")
	writeHTML(t, filepath.Join(docs, "c.html"), "Charlie", "charlie old forest text")
	writeHTML(t, filepath.Join(docs, "d.html"), "Delta", "delta old desert text")
	if r := runCLI(t, work, env, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("first index:\n%s", r)
	}

	// New versions: b changes, c changes and hangs in the embedder, d changes.
	writeHTML(t, filepath.Join(docs, "b.html"), "Bravo", "bravo new glacier text")
	writeHTML(t, filepath.Join(docs, "c.html"), "Charlie", "charlie new "+slowMarker+" text")
	writeHTML(t, filepath.Join(docs, "d.html"), "Delta", "delta new canyon text")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "index", "--data", data, "docs")
	cmd.Dir = work
	cmd.Env = cliEnv(env...)
	var so, se lockedBuffer // read while the CLI runs
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-blocked:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the CLI never reached c.html\nstdout:\n%s\nstderr:\n%s", so.String(), se.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want code %d\nstdout:\n%s\nstderr:\n%s", err, exitInterrupted, so.String(), se.String())
	}
	if !strings.Contains(so.String(), "Interrupted while indexing docs/c.html: rolled back") ||
		!strings.Contains(se.String(), "interrupted: finished sources are kept") {
		t.Errorf("interruption not reported:\nstdout:\n%s\nstderr:\n%s", so.String(), se.String())
	}

	// The index is valid and holds b's new text, c's and d's old text
	// (read through 'export --genkit', which also checks the export).
	exported := t.TempDir()
	if r := runCLI(t, work, env, "export", "--data", data, "--genkit", exported); r.code != 0 {
		t.Fatalf("export:\n%s", r)
	}
	var db map[string]struct {
		Doc struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"doc"`
	}
	raw, err := os.ReadFile(filepath.Join(exported, "__db_askyourdocs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &db); err != nil {
		t.Fatalf("index file is not valid JSON after the interrupt: %v", err)
	}
	var texts []string
	for _, e := range db {
		for _, p := range e.Doc.Content {
			texts = append(texts, p.Text)
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"alpha river", "bravo new glacier", "charlie old forest", "delta old desert"} {
		if !strings.Contains(all, want) {
			t.Errorf("index lacks %q after the interrupt; texts: %q", want, texts)
		}
	}
	for _, gone := range []string{"bravo old", slowMarker, "delta new"} {
		if strings.Contains(all, gone) {
			t.Errorf("index holds %q after the interrupt; texts: %q", gone, texts)
		}
	}
	if len(texts) != 4 {
		t.Errorf("%d chunks, want 4: %q", len(texts), texts)
	}
}

// TestMCPServer drives 'askyourdocs mcp' over a real stdio pipe with the
// MCP Go SDK client: tools/list and tools/call of every tool, a call with
// arguments that do not match the schema and a failing call.
func TestMCPServer(t *testing.T) {
	bin := buildCLI(t)
	work := t.TempDir()
	copyFixture(t, "../../testdata/cli/docs/faq.docx", filepath.Join(work, "docs", "faq.docx"))
	copyFixture(t, "../../testdata/cli/docs/handbook.pdf", filepath.Join(work, "docs", "handbook.pdf"))
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--data", data)
	cmd.Dir = work
	cmd.Env = cliEnv()
	var stderr lockedBuffer // read while the server runs
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "askyourdocs-cli-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("initialize: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	if info := cs.InitializeResult().ServerInfo; info.Name != "askyourdocs" || info.Version != mcpVersion() {
		t.Errorf("server info %+v", info)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "ask_docs,list_sources,search_docs" {
		t.Errorf("tools = %v", names)
	}
	call := func(name string, args any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\nstderr: %s", name, err, stderr.String())
		}
		var sb strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				sb.WriteString(tc.Text)
			}
		}
		return res, sb.String()
	}

	// structured decodes a result's structuredContent into v.
	structured := func(res *mcp.CallToolResult, v any) error {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, v)
	}
	// Readable text with citations, plus the same as structured content.
	res, text := call("search_docs", map[string]any{"query": "wetsuit rental", "k": 3})
	var hits searchOutput
	if err := structured(res, &hits); err != nil || res.IsError || len(hits.Results) != 3 || !strings.HasSuffix(hits.Results[0].URL, "faq.docx") {
		t.Errorf("search_docs structured: %v %+v", err, res.StructuredContent)
	}
	if !strings.HasPrefix(text, "3 passages for \"wetsuit rental\":") || !strings.Contains(text, "[1] docs/faq.docx, p. 1") ||
		!strings.Contains(text, "15 euros per day") || strings.HasPrefix(text, "{") {
		t.Errorf("search_docs text is not readable text with citations:\n%s", text)
	}
	res, text = call("ask_docs", map[string]any{"question": "How long before the tour can I cancel for a full refund?"})
	var ans answerResult
	if err := structured(res, &ans); err != nil || res.IsError || ans.Mode != answerExtractive ||
		!strings.Contains(ans.Answer, "48 hours") || !strings.HasSuffix(ans.Citations[0].URL, "handbook.pdf") {
		t.Errorf("ask_docs: %v %+v", err, res.StructuredContent)
	}
	if strings.Contains(text, "No LLM") || strings.Contains(text, "no LLM") || !strings.HasPrefix(text, "[1] ") ||
		!strings.Contains(text, "Sources:\n[1] docs/handbook.pdf, p. 1") || !strings.Contains(text, "handbook.pdf#page=1") {
		t.Errorf("ask_docs text: want the passages first, then sources with links:\n%s", text)
	}
	res, text = call("list_sources", map[string]any{})
	var srcs mcpSources
	if err := structured(res, &srcs); err != nil || res.IsError || len(srcs.Sources) != 2 || !strings.Contains(text, "- docs/faq.docx (2 passages)") {
		t.Errorf("list_sources: %v %q", err, text)
	}
	// Full field descriptions (a comma in a description used to cut it).
	for _, tool := range list.Tools {
		if tool.Name != "search_docs" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(b), "combines semantic vector search and keyword search") || !strings.Contains(string(b), `"enum"`) {
			t.Errorf("search_docs schema lacks the full mode description or its enum: %s", b)
		}
	}
	if !strings.Contains(stderr.String(), "serving "+data) {
		t.Errorf("mcp does not say which index it serves: %q", stderr.String())
	}
	// A tool error is a result with isError; the server keeps serving.
	if res, text := call("search_docs", map[string]any{"query": "  "}); !res.IsError || !strings.Contains(text, "query is empty") {
		t.Errorf("empty query: isError %v %q", res.IsError, text)
	}
	// Arguments that do not match the schema: invalid params.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_docs", Arguments: map[string]any{"query": 7}}); err == nil {
		t.Error("a number as query was accepted")
	}
	if _, text := call("list_sources", map[string]any{}); !strings.Contains(text, "faq.docx") {
		t.Errorf("server stopped serving after errors: %q", text)
	}
}

// lockedBuffer collects a child process's output: the copier goroutine of
// os/exec writes while the test reads what arrived so far.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMCPServerStopsOnSignal: 'askyourdocs mcp' ends on SIGTERM while its
// client keeps stdin open (main's signal handler takes the signal, so the
// server must watch the command's context), with the interrupted exit code.
func TestMCPServerStopsOnSignal(t *testing.T) {
	bin := buildCLI(t)
	work := t.TempDir()
	copyFixture(t, "../../testdata/cli/docs/faq.docx", filepath.Join(work, "docs", "faq.docx"))
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	cmd := exec.Command(bin, "mcp", "--data", data)
	cmd.Dir = work
	cmd.Env = cliEnv()
	stdin, err := cmd.StdinPipe() // held open: the client never disconnects
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	serving := make(chan string, 1)
	go func() {
		var seen strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			seen.Write(buf[:n])
			if strings.Contains(seen.String(), "on stdio\n") {
				serving <- seen.String()
				io.Copy(io.Discard, stderr)
				return
			}
			if err != nil {
				serving <- seen.String()
				return
			}
		}
	}()
	select {
	case s := <-serving:
		if !strings.Contains(s, "on stdio\n") {
			t.Fatalf("the server did not start:\n%s", s)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("no serving line within a minute")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("exit after SIGTERM: %v, want code %d", err, exitInterrupted)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the server kept running a minute after SIGTERM")
	}
}
