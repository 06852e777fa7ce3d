package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runPTY runs the binary with stdout and stderr on a terminal of 80
// columns and returns what the terminal showed.
func runPTY(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildCLI(t), args...)
	cmd.Dir = dir
	cmd.Env = cliEnv(append([]string{"TERM=xterm-256color"}, env...)...)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = tty, tty
	cmd.Stdin = strings.NewReader(stdin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, ptmx) // ends with EIO when the child exits
		close(done)
	}()
	cmd.Wait()
	<-done
	return out.String()
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]|\x1b\]8;;[^\x1b]*\x1b\\`)

// TestTerminalOutput: on a terminal answers are streamed (stream=true on
// the wire), coloured unless NO_COLOR, with hyperlinks; the progress bar
// fits 80 columns.
func TestTerminalOutput(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "index")
	long := filepath.Join(work, "docs", strings.Repeat("a-very-long-folder-name/", 4), "handbook-with-a-long-file-name-that-would-wrap.pdf")
	copyFixture(t, "../../testdata/cli/docs/handbook.pdf", long)
	copyFixture(t, "../../testdata/cli/docs/faq.docx", filepath.Join(work, "docs", "faq.docx"))
	out := runPTY(t, work, nil, "", "index", "--data", data, "docs")
	var nameEnd bool
	for _, seg := range regexp.MustCompile(`[\r\n]`).Split(out, -1) {
		if !strings.Contains(seg, "ETA") {
			continue // only the bar is redrawn in place
		}
		plain := ansiRE.ReplaceAllString(seg, "")
		if n := len([]rune(plain)); n > 79 {
			t.Errorf("progress line of %d columns on an 80-column terminal: %q", n, seg)
		}
		// A long path is shortened in the middle: the file name stays.
		nameEnd = nameEnd || strings.Contains(plain, "…") && strings.HasSuffix(plain, "-would-wrap.pdf")
	}
	if !nameEnd {
		t.Errorf("no bar line ends with the long file's name:\n%q", out)
	}
	if !strings.Contains(out, "Indexed 2 sources") || !strings.Contains(out, "files") {
		t.Fatalf("index on a terminal:\n%s", out)
	}

	model := newFakeOllama(t)
	env := []string{"LLM_MODEL=ollama/fake-llm", "OLLAMA_HOST=" + model.URL}
	out = runPTY(t, work, env, "", "ask", "--data", data, "How long before the tour can I cancel a booking?")
	model.mu.Lock()
	streamed := model.streamed
	model.mu.Unlock()
	if strings.Contains(out, "evil.example") || strings.Contains(out, "![") {
		t.Errorf("streamed answer leaks the image or foreign link:\n%q", out)
	}
	if !strings.Contains(out, "searching the documents") {
		t.Errorf("no spinner while retrieving:\n%q", out)
	}
	if streamed != 1 || !strings.Contains(out, "48 hours") {
		t.Errorf("answer not streamed (stream=true requests: %d):\n%q", streamed, out)
	}
	if !strings.Contains(out, "\x1b[1mSources:") || !strings.Contains(out, "\x1b]8;;file://") {
		t.Errorf("no colours or hyperlinks on a terminal:\n%q", out)
	}
	out = runPTY(t, work, append(env, "NO_COLOR=1"), "", "ask", "--data", data, "--no-stream", "How long before the tour can I cancel a booking?")
	model.mu.Lock()
	streamed = model.streamed
	model.mu.Unlock()
	if streamed != 1 || !strings.Contains(out, "48 hours") {
		t.Errorf("--no-stream streamed (requests: %d):\n%q", streamed, out)
	}
	if regexp.MustCompile(`\x1b\[[0-9;]*m|\x1b\]8;;`).MatchString(out) {
		t.Errorf("colours despite NO_COLOR:\n%q", out)
	}
}

// TestDataDirResolution: the nearest .askyourdocs upwards, ASKYOURDOCS_DATA,
// and mcp refusing to start without an index.
func TestDataDirResolution(t *testing.T) {
	work := t.TempDir()
	abs, _ := filepath.Abs("../../testdata/cli/docs/prices.html")
	if r := runCLI(t, work, nil, "index", abs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	sub := filepath.Join(work, "a", "b")
	os.MkdirAll(sub, 0o755)
	r := runCLI(t, sub, nil, "sources")
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(work, ".askyourdocs")) {
		t.Errorf("sources from a subfolder does not find ../../.askyourdocs:\n%s", r)
	}
	other := t.TempDir()
	r = runCLI(t, other, []string{"ASKYOURDOCS_DATA=" + filepath.Join(work, ".askyourdocs")}, "sources", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "prices.html") {
		t.Errorf("ASKYOURDOCS_DATA:\n%s", r)
	}
	r = runCLI(t, other, nil, "mcp")
	if r.code != exitError || !strings.Contains(r.stderr, "nothing is indexed") {
		t.Errorf("mcp without an index:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(other, ".askyourdocs")); err == nil {
		t.Error("mcp created an empty .askyourdocs")
	}
}

// TestDoctor: the index, the model server with its models, next steps.
func TestDoctor(t *testing.T) {
	work := t.TempDir()
	r := runCLI(t, work, nil, "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "no index at") || !strings.Contains(r.stdout, "askyourdocs index ./docs") {
		t.Errorf("doctor without an index:\n%s", r)
	}
	abs, _ := filepath.Abs("../../testdata/cli/docs")
	if r := runCLI(t, work, nil, "index", abs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	model := newFakeOllama(t)
	r = runCLI(t, work, []string{"LLM_MODEL=ollama/fake-llm", "OLLAMA_HOST=" + model.URL}, "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("doctor --json: %v\n%s", err, r)
	}
	text := fmt.Sprint(rep.Checks)
	for _, want := range []string{"3 documents, 8 chunks", "askyourdocs/local-hash-1024, dimension 1024", "Ollama at " + model.URL + " answers; models: fake-llm:latest"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor lacks %q: %s", want, text)
		}
	}
	r = runCLI(t, work, []string{"LLM_MODEL=ollama/llama3.2", "OLLAMA_HOST=http://127.0.0.1:1"}, "doctor")
	if r.code != exitError || !strings.Contains(r.stdout, "FAIL  ollama     Ollama at http://127.0.0.1:1 not reachable: connection refused") {
		t.Errorf("doctor with Ollama down:\n%s", r)
	}
}

// TestChat: follow-up questions without an LLM use the previous question.
func TestChat(t *testing.T) {
	work := t.TempDir()
	abs, _ := filepath.Abs("../../testdata/cli/docs")
	if r := runCLI(t, work, nil, "index", abs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	cmd := exec.Command(buildCLI(t), "chat")
	cmd.Dir = work
	cmd.Env = cliEnv()
	cmd.Stdin = strings.NewReader("What is the minimum age for a single kayak?\nand for a double kayak?\n")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\n%s\n%s", err, so.String(), se.String())
	}
	if strings.Count(so.String(), "Confidence:") != 2 || !strings.Contains(so.String(), "12 years") {
		t.Errorf("chat answers:\n%s", so.String())
	}
	if !strings.Contains(se.String(), "(searching for: minimum age single and for a double kayak?)") {
		t.Errorf("follow-up not made standalone:\n%s", se.String())
	}
}

// TestCrawlProgress: on a terminal a crawl counts pages while it fetches
// and then shows the bar over the pages it indexes.
func TestCrawlProgress(t *testing.T) {
	work := t.TempDir()
	site := siteServer(t)
	out := runPTY(t, work, nil, "", "index", "--data", filepath.Join(work, "index"), "--crawl", "--allow-private", "--delay", "0", site.URL+"/site/")
	if !regexp.MustCompile(`fetching: \d pages? \(at most 100\)`).MatchString(out) || !regexp.MustCompile(`\] \d/\d pages`).MatchString(out) ||
		!strings.Contains(out, "Indexed 3 sources") {
		t.Errorf("crawl progress on a terminal:\n%q", out)
	}
	if strings.Contains(out, "files") {
		t.Errorf("a crawl counts pages, not files:\n%q", out)
	}
}

// TestChatInterruptAtPrompt: Ctrl-C (SIGINT) while chat waits at its
// prompt on a terminal ends it with exit status 130 at once; it used to
// wait for the next line and then fail with "sqlite sources: context
// canceled", exit 1.
func TestChatInterruptAtPrompt(t *testing.T) {
	work := t.TempDir()
	abs, _ := filepath.Abs("../../testdata/cli/docs")
	if r := runCLI(t, work, nil, "index", abs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildCLI(t), "chat")
	cmd.Dir = work
	cmd.Env = cliEnv("TERM=xterm-256color")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	prompt := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		seen := false
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if !seen && strings.Contains(ansiRE.ReplaceAllString(out.String(), ""), "> ") {
				seen = true
				close(prompt)
			}
			if err != nil {
				if !seen {
					close(prompt)
				}
				return
			}
		}
	}()
	<-prompt // the chat waits for a question
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("chat after Ctrl-C at the prompt: %v (want exit status 130)", err)
	}
	if ctx.Err() != nil {
		t.Error("chat kept waiting for a line after Ctrl-C")
	}
}
