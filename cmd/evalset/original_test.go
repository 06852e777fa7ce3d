package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// originalApp is an app built on the original engine, as far as evalset
// sees it: it takes the job input only in a {"data": ...} envelope, answers
// 503 with Retry-After the first time (its queue is full), reports the job
// as pending, running (progress as a string) and done, and serves the
// dataset its result names.
type originalApp struct {
	mu      sync.Mutex
	busy    int             // 503 answers still to give
	polls   int             // status requests so far
	input   json.RawMessage // the envelope's data
	bodies  []string        // raw POST bodies
	dataset []byte
}

func (a *originalApp) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/eval/generated", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		var body json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"error": "bad body"}`, http.StatusBadRequest)
			return
		}
		a.bodies = append(a.bodies, string(body))
		if json.Unmarshal(body, &env) != nil || env.Data == nil {
			http.Error(w, `{"error": "missing data"}`, http.StatusBadRequest)
			return
		}
		if a.busy > 0 {
			a.busy--
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error": "job queue full"}`))
			return
		}
		a.input = env.Data
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"jobId": "0123abcd"}`))
	})
	mux.HandleFunc("GET /api/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if r.PathValue("id") != "0123abcd" {
			http.Error(w, `{"error": "no such job"}`, http.StatusNotFound)
			return
		}
		a.polls++
		var v map[string]any
		switch a.polls {
		case 1:
			v = map[string]any{"status": "pending", "progress": "", "error": "", "result": nil}
		case 2, 3: // the same message twice: shown once
			v = map[string]any{"status": "running", "progress": "chunk 1/2", "error": "", "result": nil}
		case 4:
			v = map[string]any{"status": "running", "progress": "chunk 2/2", "error": "", "result": nil}
		default:
			v = map[string]any{"status": "done", "progress": "chunk 2/2", "error": "",
				"result": map[string]any{"written": 2, "outPath": "/srv/app/testdata/eval_dataset_generated.json"}}
		}
		json.NewEncoder(w).Encode(v)
	})
	mux.HandleFunc("GET /api/eval/datasets/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "eval_dataset_generated.json" {
			http.Error(w, `{"error": "not found"}`, http.StatusNotFound)
			return
		}
		w.Write(a.dataset)
	})
	return mux
}

// Our evalset against an app on the original engine.
func TestEvalsetAgainstOriginalApp(t *testing.T) {
	app := &originalApp{busy: 1, dataset: []byte(`[{"testCaseId": "generated-a-0", "input": {"question": "Q?"}, "reference": "A."}]`)}
	srv := httptest.NewServer(app.handler())
	defer srv.Close()
	stdout, stderr, code, wd := runEvalset(t, nil, "-kind", "generated", "-url", srv.URL, "-poll", "10ms",
		"-data", `{"dir": "pdf-data", "sampleRate": 8}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := filepath.Join("testdata", "eval_dataset_generated.json")
	if strings.TrimSpace(stdout) != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	got, err := os.ReadFile(filepath.Join(wd, want))
	if err != nil || string(got) != string(app.dataset) {
		t.Fatalf("saved dataset %q, %v", got, err)
	}
	var in map[string]any
	if err := json.Unmarshal(app.input, &in); err != nil || in["dir"] != "pdf-data" || in["sampleRate"] != 8.0 {
		t.Errorf("input the app received: %s (%v)", app.input, err)
	}
	if len(app.bodies) != 2 || app.bodies[0] != app.bodies[1] {
		t.Errorf("bodies %q: want the refused one sent again after Retry-After", app.bodies)
	}
	if !strings.Contains(stderr, "busy") || !strings.Contains(stderr, "job queue full") {
		t.Errorf("stderr does not report the 503: %s", stderr)
	}
	for _, msg := range []string{"chunk 1/2", "chunk 2/2"} {
		if n := strings.Count(stderr, "evalset: "+msg+"\n"); n != 1 {
			t.Errorf("progress %q shown %d times, want once:\n%s", msg, n, stderr)
		}
	}
}

// The progress shapes evalset understands: the original's string, ours
// (string plus progressLog and progressCount), and an older array.
func TestProgressTracker(t *testing.T) {
	var out strings.Builder
	var p progressTracker
	for _, body := range []string{
		`{"progress": ""}`,
		`{"progress": "a"}`,
		`{"progress": "a"}`,
		`{"progress": "b"}`,
	} {
		var j job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		p.show(j, &out)
	}
	if out.String() != "evalset: a\nevalset: b\n" {
		t.Errorf("string progress: %q", out.String())
	}
	out.Reset()
	p = progressTracker{}
	for _, body := range []string{
		`{"progress": "m2", "progressLog": ["m1", "m2"], "progressCount": 2}`,
		`{"progress": "m4", "progressLog": ["m3", "m4"], "progressCount": 4}`, // cap 2: m3 not seen before
		`{"progress": "m4", "progressLog": ["m3", "m4"], "progressCount": 4}`,
		`{"progress": ["m3", "m4", "m5"], "progressCount": 5}`, // an older engine
	} {
		var j job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		p.show(j, &out)
	}
	var want strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&want, "evalset: m%d\n", i)
	}
	if out.String() != want.String() {
		t.Errorf("log progress:\n%s\nwant:\n%s", out.String(), want.String())
	}
}

func TestRetryAfter(t *testing.T) {
	for h, want := range map[string]int{"": 5, "abc": 5, "0": 1, "1": 1, "7": 7, "3600": 60, " 2 ": 2} {
		if got := retryAfter(h); got.Seconds() != float64(want) {
			t.Errorf("retryAfter(%q) = %s, want %ds", h, got, want)
		}
	}
}
