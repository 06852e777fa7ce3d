package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildEvalset builds cmd/evalset into a temporary directory.
func buildEvalset(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the evalset binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "evalset")
	if out, err := exec.Command("go", "build", "-o", bin, "../evalset").CombinedOutput(); err != nil {
		t.Fatalf("go build evalset: %v\n%s", err, out)
	}
	return bin
}

// TestServeEvalset runs the evalset binary against a running serve (with
// credentials and a fake model speaking Ollama's protocol) for the three
// dataset kinds, over basic auth and over -login.
func TestServeEvalset(t *testing.T) {
	bin := buildEvalset(t)
	model := newServeFakeModel(t)
	const password = "evalset-pw"
	ts := newTestServe(t, map[string]string{"LLM_MODEL": "ollama/fake-llm", "OLLAMA_HOST": model.URL}, password, 0)
	ts.uploadAndWait(t, map[string]string{"Authorization": basicAuth("admin", password)},
		map[string][]byte{"handbook.pdf": readFixture(t, "handbook.pdf"), "faq.docx": readFixture(t, "faq.docx")})
	a := ts.askJSON(t, askInput{Question: "How much does it cost to rent a wetsuit?"})
	b := ts.askJSON(t, askInput{Question: "What is the minimum age for a single kayak?"})
	for id, rating := range map[string]string{a.ID: "up", b.ID: "down"} {
		if err := rateFeedback(ts.s.feedback, id, rating); err != nil {
			t.Fatal(err)
		}
	}

	work := t.TempDir()
	run := func(args ...string) (string, []map[string]any) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-url", ts.URL, "-user", "admin", "-poll", "20ms"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "EVALSET_PASSWORD="+password)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("evalset %v: %v\n%s", args, err, se.String())
		}
		path := strings.TrimSpace(so.String())
		if !filepath.IsAbs(path) {
			path = filepath.Join(work, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cases []map[string]any
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return path, cases
	}

	path, cases := run("-kind", "injection")
	if filepath.Base(path) != injectionDataset || len(cases) < 5 {
		t.Errorf("injection: %s with %d cases", path, len(cases))
	}
	if in, _ := cases[0]["input"].(map[string]any); in == nil || in["question"] == "" {
		t.Errorf("injection case input %v is not the ask flow's input", cases[0]["input"])
	}

	path, cases = run("-kind", "feedback", "-login")
	if filepath.Base(path) != feedbackDataset || len(cases) != 2 {
		t.Fatalf("feedback: %s with %d cases", path, len(cases))
	}
	refs := map[string]string{}
	for _, c := range cases {
		in, _ := c["input"].(map[string]any)
		ref, _ := c["reference"].(string)
		refs[in["question"].(string)] = ref
	}
	if refs[a.Question] != a.Answer || refs[b.Question] != "" {
		t.Errorf("feedback references: %v (thumbs-up answer is the reference, thumbs-down has none)", refs)
	}

	path, cases = run("-kind", "generated", "-data", `{"sampleRate": 2, "maxPerDoc": 2}`, "-out", filepath.Join(work, "gen.json"))
	if len(cases) == 0 {
		t.Fatalf("generated: no cases in %s", path)
	}
	if in, _ := cases[0]["input"].(map[string]any); in["question"] != "What does the document say about cancellations?" || cases[0]["reference"] == "" {
		t.Errorf("generated case %v", cases[0])
	}

	// A client cannot name a directory outside the server's working
	// directory.
	cmd := exec.Command(bin, "-url", ts.URL, "-user", "admin", "-kind", "generated", "-data", `{"dir":"/etc"}`)
	cmd.Env = append(os.Environ(), "EVALSET_PASSWORD="+password)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unsafe eval path") {
		t.Errorf("dir /etc: %v %s", err, out)
	}
	// Wrong password: evalset's auth exit status.
	cmd = exec.Command(bin, "-url", ts.URL, "-user", "admin", "-kind", "injection")
	cmd.Env = append(os.Environ(), "EVALSET_PASSWORD=wrong")
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("wrong password: %v", err)
	}
}

// basicAuth returns an Authorization header value.
func basicAuth(user, password string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}
