package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	engine "github.com/dbis-ilm/askyourdocs"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// binPath is the real command, built once by TestMain.
var binPath string

// TestMain builds the command into a temporary directory for the
// end-to-end tests and removes it afterwards.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "evalset-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "evalset")
	if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// appInput is the example app's answer-flow input.
type appInput struct {
	Question string `json:"question"`
}

// generateInput is the app's input of the generated-dataset job.
type generateInput struct {
	Dir        string `json:"dir"`
	SampleRate int    `json:"sampleRate"`
	MaxPerDoc  int    `json:"maxPerDoc"`
	OutPath    string `json:"outPath"`
}

// outInput is the input of the feedback and injection jobs.
type outInput struct {
	OutPath string `json:"outPath"`
}

// testApp is an app built from the engine's handlers, as the spec shows.
type testApp struct {
	url     string
	dataDir string
}

// newTestApp starts the app. session switches from basic auth to a session
// cookie from POST /api/login; feedback is the run of the feedback job.
func newTestApp(t *testing.T, session bool, feedback func(ctx context.Context, in outInput) (any, error)) *testApp {
	t.Helper()
	root := t.TempDir()
	dataDir := filepath.Join(root, "testdata")
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	for _, f := range []string{"birds.docx", "recipes.docx"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "docx", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(docs, f), data, 0o644)
	}
	g := genkit.Init(context.Background())
	model := genkit.DefineModel(g, "test/qa", nil, func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		n := len(req.Messages[len(req.Messages)-1].Text())
		return &ai.ModelResponse{Message: ai.NewModelTextMessage(`{"question": "Question about a passage?", "answer": "Answer ` + strings.Repeat("x", n%7) + `."}`)}, nil
	})

	ctx, stop := context.WithCancel(context.Background())
	jobs := engine.NewJobStore()
	mux := http.NewServeMux()
	const user, password, cookie = "admin", "s3cret", "session-token-1"
	admin := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if session {
				if c, err := r.Cookie("session"); err != nil || c.Value != cookie {
					http.Error(w, `{"error": "not logged in"}`, http.StatusUnauthorized)
					return
				}
			} else if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
				http.Error(w, `{"error": "wrong credentials"}`, http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("POST /api/login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Username, Password string }
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Username != user || in.Password != password {
			http.Error(w, `{"error": "invalid login"}`, http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: cookie, Path: "/"})
		w.Write([]byte(`{"ok": true}`))
	})
	mux.HandleFunc("POST /api/eval/generated", admin(engine.EvalJobHandler(jobs, ctx, "evalGenerated",
		func(ctx context.Context, in generateInput) (any, error) {
			cfg := engine.GenerateEvalSetInput{Dir: filepath.Join(root, in.Dir), SampleRate: in.SampleRate, MaxPerDoc: in.MaxPerDoc,
				OutPath: filepath.Join(dataDir, "eval_dataset_generated.json")}
			return engine.GenerateEvalSet(ctx, g, []ai.GenerateOption{ai.WithModel(model)}, 300, 0, cfg,
				func(q string) appInput { return appInput{Question: q} })
		},
		func(in *generateInput) error { return engine.RestrictEvalPaths(&in.Dir, &in.OutPath) })))
	mux.HandleFunc("POST /api/eval/injection", admin(engine.EvalJobHandler(jobs, ctx, "evalInjection",
		func(ctx context.Context, in outInput) (any, error) {
			out := filepath.Join(dataDir, "eval_dataset_injection.json")
			n, err := engine.WriteInjectionEvalSet(out, func(q string) appInput { return appInput{Question: q} })
			return map[string]any{"written": n, "outPath": out}, err
		},
		func(in *outInput) error { return engine.RestrictEvalPaths(nil, &in.OutPath) })))
	mux.HandleFunc("POST /api/eval/feedback", admin(engine.EvalJobHandler(jobs, ctx, "evalFeedback", feedback,
		func(in *outInput) error { return engine.RestrictEvalPaths(nil, &in.OutPath) })))
	mux.HandleFunc("GET /api/jobs/{id}", admin(engine.JobStatusHandler(jobs)))
	mux.HandleFunc("GET /api/eval/datasets/{name}", admin(engine.EvalDatasetHandler(dataDir)))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		stop()
		jobs.Close()
	})
	return &testApp{url: srv.URL, dataDir: dataDir}
}

// runEvalset runs the binary in a fresh working directory with only the
// given EVALSET_* variables and returns stdout, stderr, the exit status and
// the working directory.
func runEvalset(t *testing.T, env map[string]string, args ...string) (string, string, int, string) {
	t.Helper()
	wd := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = wd
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EVALSET_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code, wd
}

func TestEvalsetInjectionBasicAuthFromEnv(t *testing.T) {
	app := newTestApp(t, false, nil)
	stdout, stderr, code, wd := runEvalset(t, map[string]string{
		"EVALSET_URL": app.url, "EVALSET_USER": "admin", "EVALSET_PASSWORD": "s3cret",
	}, "-kind", "injection", "-poll", "20ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := filepath.Join("testdata", "eval_dataset_injection.json")
	if strings.TrimSpace(stdout) != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	got, err := os.ReadFile(filepath.Join(wd, want))
	if err != nil {
		t.Fatal(err)
	}
	server, _ := os.ReadFile(filepath.Join(app.dataDir, "eval_dataset_injection.json"))
	if !bytes.Equal(got, server) {
		t.Error("saved dataset differs from the app's")
	}
	var cases []engine.EvalCase[appInput]
	if err := json.Unmarshal(got, &cases); err != nil || len(cases) != len(engine.InjectionAttacks()) || cases[0].Input.Question == "" {
		t.Errorf("dataset: %d cases, %v", len(cases), err)
	}
}

func TestEvalsetGeneratedSessionLogin(t *testing.T) {
	app := newTestApp(t, true, nil)
	stdout, stderr, code, wd := runEvalset(t, map[string]string{"EVALSET_PASSWORD": "s3cret"},
		"-kind", "generated", "-url", app.url+"/", "-user", "admin", "-login", "-poll", "20ms",
		"-data", `{"dir":"./docs","sampleRate":1,"maxPerDoc":2,"outPath":"/tmp/evil.json"}`, "-out", "sets/my-set.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.TrimSpace(stdout) != "sets/my-set.json" {
		t.Errorf("stdout %q", stdout)
	}
	var cases []engine.EvalCase[appInput]
	data, _ := os.ReadFile(filepath.Join(wd, "sets", "my-set.json"))
	if err := json.Unmarshal(data, &cases); err != nil || len(cases) != 4 {
		t.Fatalf("%d cases, %v: %s", len(cases), err, data)
	}
	if cases[0].TestCaseId != "birds#0" || cases[0].Reference == "" {
		t.Errorf("first case %+v", cases[0])
	}
	if _, err := os.Stat("/tmp/evil.json"); err == nil {
		t.Error("the client's outPath was used")
	}
}

func TestEvalsetErrors(t *testing.T) {
	failing := func(ctx context.Context, in outInput) (any, error) {
		return nil, errors.New("feedback log is empty")
	}
	blocking := func(ctx context.Context, in outInput) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	basic := newTestApp(t, false, failing)
	session := newTestApp(t, true, nil)
	slow := newTestApp(t, false, blocking)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	good := map[string]string{"EVALSET_PASSWORD": "s3cret"}
	bad := map[string]string{"EVALSET_PASSWORD": "wrong"}

	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		code      int
		stderrSub []string
	}{
		{"wrong password basic", bad, []string{"-kind", "injection", "-url", basic.url, "-user", "admin"},
			exitAuth, []string{"401", "wrong user or password"}},
		{"no credentials", nil, []string{"-kind", "injection", "-url", basic.url},
			exitAuth, []string{"401"}},
		{"wrong password login", bad, []string{"-kind", "injection", "-url", session.url, "-user", "admin", "-login"},
			exitAuth, []string{"log in as admin", "401", "invalid login"}},
		{"basic auth against a session app", good, []string{"-kind", "injection", "-url", session.url, "-user", "admin"},
			exitAuth, []string{"use -login"}},
		{"job fails", good, []string{"-kind", "feedback", "-url", basic.url, "-user", "admin", "-poll", "20ms"},
			exitJob, []string{"failed", "feedback log is empty"}},
		{"server down", good, []string{"-kind", "injection", "-url", downURL, "-user", "admin"},
			exitFailure, []string{"cannot reach the app"}},
		{"timeout", good, []string{"-kind", "feedback", "-url", slow.url, "-user", "admin", "-timeout", "1s", "-poll", "20ms"},
			exitTimeout, []string{"timed out after 1s"}},
		{"unsafe dir", good, []string{"-kind", "generated", "-url", basic.url, "-user", "admin", "-data", `{"dir":"../etc"}`},
			exitFailure, []string{"400", "unsafe eval path"}},
		{"unknown field", good, []string{"-kind", "generated", "-url", basic.url, "-user", "admin", "-data", `{"directory":"docs"}`},
			exitFailure, []string{"400", "unknown field"}},
		{"no kind", good, []string{"-url", basic.url}, exitUsage, []string{"-kind is required"}},
		{"bad kind", good, []string{"-kind", "all"}, exitUsage, []string{"unknown -kind"}},
		{"bad data", good, []string{"-kind", "generated", "-data", "{dir:"}, exitUsage, []string{"not valid JSON"}},
		{"bad url", good, []string{"-kind", "injection", "-url", "localhost:3400"}, exitUsage, []string{"invalid -url"}},
		{"login without user", good, []string{"-kind", "injection", "-login"}, exitUsage, []string{"-login needs -user"}},
		{"password flag", good, []string{"-kind", "injection", "-password", "x"}, exitUsage, []string{"not defined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code, wd := runEvalset(t, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			for _, sub := range tt.stderrSub {
				if !strings.Contains(stderr, sub) {
					t.Errorf("stderr does not mention %q: %s", sub, stderr)
				}
			}
			if stdout != "" {
				t.Errorf("stdout on error: %q", stdout)
			}
			if _, err := os.Stat(filepath.Join(wd, "testdata")); err == nil {
				t.Error("a dataset was saved")
			}
		})
	}
}

func TestDatasetNameFromResult(t *testing.T) {
	tests := map[string]string{
		`{"outPath": "testdata/eval_dataset_generated.json"}`: "eval_dataset_generated.json",
		`{"path": "C:\\data\\eval_dataset_x.json"}`:           "eval_dataset_x.json",
		`{"written": 3}`: "eval_dataset_feedback.json",
		`null`:           "eval_dataset_feedback.json",
		`"text"`:         "eval_dataset_feedback.json",
	}
	for in, want := range tests {
		if got := datasetName(json.RawMessage(in), "feedback"); got != want {
			t.Errorf("datasetName(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestValidDatasetNameMatchesEngine keeps the command's copy of the name
// rule in step with the engine's: both are checked on the same table
// (the engine's TestValidEvalDatasetName reads it too).
func TestValidDatasetNameMatchesEngine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "eval", "dataset-names.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names struct{ Accept, Refuse []string }
	if err := json.Unmarshal(data, &names); err != nil {
		t.Fatal(err)
	}
	if len(names.Accept) == 0 || len(names.Refuse) == 0 {
		t.Fatalf("empty table: %+v", names)
	}
	for _, n := range names.Accept {
		if !validDatasetName(n) {
			t.Errorf("%q rejected, the engine serves it", n)
		}
	}
	for _, n := range names.Refuse {
		if validDatasetName(n) {
			t.Errorf("%q accepted, the engine refuses it", n)
		}
	}
}
