package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRestrictEvalPaths(t *testing.T) {
	tests := []struct {
		dir     string
		want    string
		unsafe  bool
		comment string
	}{
		{"docs", "docs", false, "plain"},
		{"./docs/", "docs", false, "cleaned"},
		{"pdf-data/2024", "pdf-data/2024", false, "nested"},
		{"a/../b", "b", false, ".. that stays inside"},
		{"%2e%2e/", "%2e%2e", false, "percent signs are literal in JSON: a local name"},
		{"", "", false, "empty stays empty"},
		{"../x", "", true, "parent"},
		{"..", "", true, "parent itself"},
		{"a/../../x", "", true, "escapes after cleaning"},
		{"/etc", "", true, "absolute"},
		{"//server/share", "", true, "UNC-like"},
		{"docs\x00/x", "", true, "NUL"},
		{`..\x`, "", true, "backslash"},
		{`C:\data`, "", true, "Windows drive"},
	}
	for _, tt := range tests {
		t.Run(tt.comment, func(t *testing.T) {
			dir, out := tt.dir, "/etc/cron.d/evil"
			err := RestrictEvalPaths(&dir, &out)
			if out != "" {
				t.Errorf("outPath kept: %q", out)
			}
			if tt.unsafe {
				if !errors.Is(err, ErrUnsafeEvalPath) {
					t.Errorf("RestrictEvalPaths(%q) = %v, want ErrUnsafeEvalPath", tt.dir, err)
				}
				return
			}
			if err != nil || dir != tt.want {
				t.Errorf("RestrictEvalPaths(%q) = %q, %v; want %q", tt.dir, dir, err, tt.want)
			}
		})
	}
	out := "x.json"
	if err := RestrictEvalPaths(nil, &out); err != nil || out != "" {
		t.Errorf("nil dir: %v %q", err, out)
	}
	if err := RestrictEvalPaths(nil, nil); err != nil {
		t.Error(err)
	}
}

// TestValidEvalDatasetName checks the name rule of EvalDatasetHandler on
// testdata/eval/dataset-names.json, the table cmd/evalset's copy of the
// rule is checked on too (TestValidDatasetNameMatchesEngine).
func TestValidEvalDatasetName(t *testing.T) {
	data, err := os.ReadFile("testdata/eval/dataset-names.json")
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
		if !validEvalDatasetName(n) {
			t.Errorf("%q rejected", n)
		}
	}
	for _, n := range names.Refuse {
		if validEvalDatasetName(n) {
			t.Errorf("%q accepted", n)
		}
	}
}

// evalHTTPFixture returns a datasets directory beside a secret file, with a
// good dataset, a non-dataset file, a symlink out of the directory, a
// symlink inside it and a directory with a dataset name.
func evalHTTPFixture(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "testdata")
	for _, p := range []string{dir, filepath.Join(dir, "eval_dataset_dir.json")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(base, "secret.json"), `"SECRET"`)
	write(filepath.Join(base, "eval_dataset_outside.json"), `"SECRET"`)
	write(filepath.Join(dir, "eval_dataset_ok.json"), `[{"testCaseId":"a","input":"q"}]`)
	write(filepath.Join(dir, "other.json"), `"SECRET"`)
	for link, target := range map[string]string{
		"eval_dataset_escape.json":   "../secret.json",
		"eval_dataset_absolute.json": filepath.Join(base, "secret.json"),
		"eval_dataset_inside.json":   "eval_dataset_ok.json",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	return dir
}

func TestEvalDatasetHandler(t *testing.T) {
	dir := evalHTTPFixture(t)
	h := EvalDatasetHandler(dir)
	tests := []struct {
		name   string
		status int
	}{
		{"eval_dataset_ok.json", 200},
		{"ok", 200},              // the short name of the error text
		{"eval_dataset_ok", 200}, // without .json
		{"ok.json", 200},
		{"inside", 404},
		{"eval_dataset_inside.json", 404}, // a symbolic link is not a regular file
		{"eval_dataset_missing.json", 404},
		{"eval_dataset_escape.json", 404},
		{"eval_dataset_absolute.json", 404},
		{"eval_dataset_dir.json", 404},
		{"other.json", 404},
		{"../secret.json", 404},
		{"../eval_dataset_outside.json", 404},
		{"eval_dataset_../../secret.json", 404},
		{"eval_dataset_../../etc/passwd.json", 404},
		{"%2e%2e/secret.json", 404},
		{"eval_dataset_ok.json\x00", 404},
		{"/etc/passwd", 404},
		{"", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/api/eval/datasets/x", nil)
			req.SetPathValue("name", tt.name)
			rec := httptest.NewRecorder()
			h(rec, req)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if strings.Contains(rec.Body.String(), "SECRET") {
				t.Errorf("secret served: %s", rec.Body)
			}
			if tt.status == 200 && (rec.Header().Get("Content-Type") != "application/json" || !strings.HasPrefix(rec.Body.String(), "[")) {
				t.Errorf("headers %v body %s", rec.Header(), rec.Body)
			}
		})
	}
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest("POST", "/api/eval/datasets/eval_dataset_ok.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

// A FIFO named like a dataset is refused without being opened: the request
// does not hang, and neither does the server's Close.
func TestEvalDatasetHandlerFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "eval_dataset_x.json")
	if err := evalMkfifo(fifo); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "eval_dataset_ok.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/eval/datasets/{name}", EvalDatasetHandler(dir))
	srv := httptest.NewServer(mux)
	closed := make(chan struct{})
	defer func() {
		go func() { srv.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Error("server Close hangs")
		}
	}()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(srv.URL + "/api/eval/datasets/eval_dataset_x.json")
	if err != nil {
		t.Fatalf("GET the FIFO: %v (the handler blocked on it)", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("FIFO: %d %s, want 404", resp.StatusCode, body)
	}
	resp, err = client.Get(srv.URL + "/api/eval/datasets/eval_dataset_ok.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("regular file beside the FIFO: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestEvalDatasetHandlerOverHTTP sends hostile raw paths through a real
// server and ServeMux with the route of the spec.
func TestEvalDatasetHandlerOverHTTP(t *testing.T) {
	dir := evalHTTPFixture(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/eval/datasets/{name}", EvalDatasetHandler(dir))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	paths := []string{
		"/api/eval/datasets/..%2fsecret.json",
		"/api/eval/datasets/%2e%2e%2fsecret.json",
		"/api/eval/datasets/%2e%2e/secret.json",
		"/api/eval/datasets/../secret.json",
		"/api/eval/datasets/eval_dataset_..%2f..%2fsecret.json",
		"/api/eval/datasets/eval_dataset_..%2F..%2Fetc%2Fpasswd.json",
		"/api/eval/datasets/eval_dataset_escape.json",
		"/api/eval/datasets/other.json",
		"/api/eval/datasets/eval_dataset_ok.json%00",
		"/api/eval/datasets/%2fetc%2fpasswd",
	}
	for _, p := range paths {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "SECRET") {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(srv.URL + "/api/eval/datasets/eval_dataset_ok.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("good name: %v %v", resp, err)
	}
	resp.Body.Close()
}

// evalJobInput mirrors an app's generateEvalSetInput.
type evalJobInput struct {
	Dir        string `json:"dir"`
	SampleRate int    `json:"sampleRate"`
	OutPath    string `json:"outPath"`
}

func TestEvalJobHandler(t *testing.T) {
	jobs := NewJobStore()
	defer jobs.Close()
	appCtx, stopApp := context.WithCancel(context.Background())
	defer stopApp()
	got := make(chan evalJobInput, 10)
	// responded gets a value once the client has the 202 of a started job.
	responded := make(chan struct{}, 10)
	h := EvalJobHandler(jobs, appCtx, "evalGenerated",
		func(ctx context.Context, in evalJobInput) (any, error) {
			// The job outlives the request that started it: it goes on
			// once the request is answered, and its context still holds.
			select {
			case <-responded:
			case <-ctx.Done():
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			got <- in
			if in.Dir == "fail" {
				return nil, errors.New("no documents")
			}
			return GenerateEvalSetResult{Written: 3, OutPath: "testdata/eval_dataset_generated.json"}, nil
		},
		func(in *evalJobInput) error { return RestrictEvalPaths(&in.Dir, &in.OutPath) })
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/eval/generated", h)
	mux.HandleFunc("GET /api/jobs/{id}", JobStatusHandler(jobs))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/eval/generated", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatalf("response is not JSON: %v", err)
		}
		if resp.StatusCode == http.StatusAccepted {
			responded <- struct{}{}
		}
		return resp.StatusCode, v
	}
	for _, tt := range []struct {
		body   string
		status int
		errSub string
	}{
		{`{"dir": "docs", "sampleRate": 8`, 400, "malformed"},
		{`{"dir": 5}`, 400, "malformed"},
		{`{"dri": "docs"}`, 400, "unknown field"},
		{`{"dir": "docs"} {"dir": "x"}`, 400, "after the JSON"},
		{`[1,2]`, 400, "malformed"},
		{`{"dir": "/etc"}`, 400, "absolute"},
		{`{"dir": "../secrets"}`, 400, "leaves"},
		{`{"dir": "docs\u0000"}`, 400, "NUL"},
		{`{"dir": "` + strings.Repeat("x", evalMaxBody) + `"}`, 413, "over"},
	} {
		status, v := post(tt.body)
		if status != tt.status || !strings.Contains(v["error"].(string), tt.errSub) {
			t.Errorf("%.40s: %d %v", tt.body, status, v)
		}
	}
	select {
	case in := <-got:
		t.Fatalf("a rejected request ran a job: %+v", in)
	default:
	}

	status, v := post(`{"dir": "./docs/", "sampleRate": 8, "outPath": "/etc/passwd"}`)
	id, _ := v["jobId"].(string)
	if status != http.StatusAccepted || id == "" {
		t.Fatalf("start: %d %v", status, v)
	}
	job, err := jobs.Wait(context.Background(), id)
	if err != nil || job.Status != JobDone || job.Kind != "evalGenerated" {
		t.Fatalf("job %+v %v", job, err)
	}
	if in := <-got; in != (evalJobInput{Dir: "docs", SampleRate: 8}) {
		t.Errorf("job input %+v: outPath must be cleared, dir cleaned", in)
	}
	// The status route shows the result, with the outPath the client needs.
	resp, err := http.Get(srv.URL + "/api/jobs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Status JobStatus
		Result map[string]any
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Status != JobDone || st.Result["outPath"] != "testdata/eval_dataset_generated.json" {
		t.Errorf("status %+v", st)
	}

	// An empty body is the zero input; a failing run is a failed job.
	if status, v := post(""); status != http.StatusAccepted {
		t.Errorf("empty body: %d %v", status, v)
	} else if job, _ := jobs.Wait(context.Background(), v["jobId"].(string)); job.Status != JobDone {
		t.Errorf("empty body job %+v", job)
	}
	<-got
	_, v = post(`{"dir": "fail"}`)
	if job, _ := jobs.Wait(context.Background(), v["jobId"].(string)); job.Status != JobFailed || job.Error != "no documents" {
		t.Errorf("failing job %+v", job)
	}
	<-got

	// Unknown job, wrong methods.
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/api/jobs/nope", 404},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d", c.method, c.path, resp.StatusCode)
		}
	}
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest("GET", "/api/eval/generated", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET on the job route: %d", rec.Code)
	}
}

func TestJobStatusHandlerUnencodableResult(t *testing.T) {
	jobs := NewJobStore()
	defer jobs.Close()
	j, err := jobs.Enqueue("x", func(progress func(string)) (any, error) {
		return map[string]any{"f": func() {}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	id := j.ID
	jobs.Wait(context.Background(), id)
	req := httptest.NewRequest("GET", "/api/jobs/"+id, nil)
	req.SetPathValue("id", id)
	rec := httptest.NewRecorder()
	JobStatusHandler(jobs)(rec, req)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "encode") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}
