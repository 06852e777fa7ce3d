package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// evalPost posts body to url and returns the status, the Retry-After
// header and the decoded JSON answer.
func evalPost(t *testing.T, url, body string) (int, string, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("response is not JSON: %v", err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), v
}

// The original engine's evalset wraps the flow input in {"data": ...};
// the bare object stays accepted.
func TestEvalJobHandlerEnvelope(t *testing.T) {
	jobs := NewJobStore()
	defer jobs.Close()
	got := make(chan evalJobInput, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/eval/generated", EvalJobHandler(jobs, context.Background(), "evalGenerated",
		func(ctx context.Context, in evalJobInput) (any, error) { got <- in; return nil, nil },
		func(in *evalJobInput) error { return RestrictEvalPaths(&in.Dir, &in.OutPath) }))
	type withData struct {
		Data string `json:"data"`
	}
	gotData := make(chan withData, 1)
	mux.HandleFunc("POST /api/eval/own", EvalJobHandler(jobs, context.Background(), "own",
		func(ctx context.Context, in withData) (any, error) { gotData <- in; return nil, nil }, nil))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, tc := range []struct {
		body string
		want evalJobInput
	}{
		{`{"data": {"dir": "./docs/", "sampleRate": 8, "outPath": "/etc/x"}}`, evalJobInput{Dir: "docs", SampleRate: 8}},
		{`{"dir": "docs", "sampleRate": 3}`, evalJobInput{Dir: "docs", SampleRate: 3}},
		{`{"data": {}}`, evalJobInput{}},
		{`{"data": null}`, evalJobInput{}},
		{` {"data" : {"sampleRate": 2}} `, evalJobInput{SampleRate: 2}},
	} {
		status, _, v := evalPost(t, srv.URL+"/api/eval/generated", tc.body)
		if status != http.StatusAccepted {
			t.Errorf("%s: %d %v", tc.body, status, v)
			continue
		}
		if in := <-got; in != tc.want {
			t.Errorf("%s: job input %+v, want %+v", tc.body, in, tc.want)
		}
	}
	for _, tc := range []struct{ body, errSub string }{
		{`{"data": {"dri": "docs"}}`, "unknown field"},
		{`{"data": {"dir": "../x"}}`, "leaves"},
		{`{"data": {"dir": "docs"}, "extra": 1}`, "unknown field"},
		{`{"data": [1]}`, "malformed"},
		{`{"data": "docs"}`, "malformed"},
	} {
		status, _, v := evalPost(t, srv.URL+"/api/eval/generated", tc.body)
		if status != http.StatusBadRequest || !strings.Contains(v["error"].(string), tc.errSub) {
			t.Errorf("%s: %d %v, want 400 with %q", tc.body, status, v, tc.errSub)
		}
	}
	// An input with a "data" field of its own is decoded bare.
	if status, _, v := evalPost(t, srv.URL+"/api/eval/own", `{"data": "mine"}`); status != http.StatusAccepted {
		t.Fatalf("own data field: %d %v", status, v)
	}
	if in := <-gotData; in.Data != "mine" {
		t.Errorf("own data field decoded as %+v", in)
	}
	select {
	case in := <-got:
		t.Fatalf("a rejected request ran a job: %+v", in)
	default:
	}
}

// Past the queue bound the handler answers 503 with Retry-After and starts
// nothing; bodies over 64 KiB get 413 before anything is queued.
func TestEvalJobHandlerQueueFull(t *testing.T) {
	const maxQueue = 3
	jobs := NewJobStoreWithOptions(&JobStoreOptions{MaxQueue: maxQueue})
	defer jobs.Close()
	release, started := make(chan struct{}), make(chan struct{}, 1+maxQueue)
	var runs sync.WaitGroup
	h := EvalJobHandler(jobs, context.Background(), "evalGenerated",
		func(ctx context.Context, in evalJobInput) (any, error) {
			defer runs.Done()
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		}, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()

	// The first job runs (and blocks); wait until it has left the queue.
	runs.Add(1)
	status, _, v := evalPost(t, srv.URL, `{"data": {"dir": "docs"}}`)
	if status != http.StatusAccepted {
		t.Fatalf("first: %d %v", status, v)
	}
	<-started

	// 50 concurrent requests: exactly maxQueue are accepted.
	var (
		mu       sync.Mutex
		accepted int
		refused  int
		wg       sync.WaitGroup
	)
	runs.Add(maxQueue)
	for range 50 {
		wg.Go(func() {
			status, retry, v := evalPost(t, srv.URL, `{"data": {"dir": "docs"}}`)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status == http.StatusAccepted:
				accepted++
			case status == http.StatusServiceUnavailable && retry != "" && strings.Contains(v["error"].(string), "queue full"):
				refused++
			default:
				t.Errorf("concurrent POST: %d Retry-After %q %v", status, retry, v)
			}
		})
	}
	wg.Wait()
	if accepted != maxQueue || refused != 50-maxQueue {
		t.Fatalf("accepted %d, refused %d; want %d and %d", accepted, refused, maxQueue, 50-maxQueue)
	}
	if n := len(jobs.List(0)); n != 1+maxQueue {
		t.Fatalf("%d jobs recorded, want %d", n, 1+maxQueue)
	}

	// A 1 MiB body is refused as too large, whatever the queue.
	big := `{"data": {"dir": "` + strings.Repeat("x", 1<<20) + `"}}`
	if status, _, v := evalPost(t, srv.URL, big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("1 MiB body: %d %v", status, v)
	}
	close(release)
	runs.Wait()
}

// originalJob is the job status as the original engine's evalset decodes
// it: progress is a string.
type originalJob struct {
	Status   string          `json:"status"`
	Progress string          `json:"progress"`
	Error    string          `json:"error"`
	Result   json.RawMessage `json:"result"`
}

// A client speaking the original engine's protocol (envelope, progress as
// a string, statuses pending/running/done/failed) against our handlers.
func TestOriginalClientAgainstOurHandlers(t *testing.T) {
	dataDir := t.TempDir()
	jobs := NewJobStore()
	defer jobs.Close()
	type injectionInput struct {
		OutPath string `json:"outPath"`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/eval/injection", EvalJobHandler(jobs, context.Background(), "evalInjection",
		func(ctx context.Context, in injectionInput) (any, error) {
			out := filepath.Join(dataDir, "eval_dataset_injection.json")
			n, err := WriteInjectionEvalSet[string](out, nil)
			return map[string]any{"written": n, "outPath": out}, err
		},
		func(in *injectionInput) error { return RestrictEvalPaths(nil, &in.OutPath) }))
	mux.HandleFunc("GET /api/jobs/{id}", JobStatusHandler(jobs))
	mux.HandleFunc("GET /api/eval/datasets/{name}", EvalDatasetHandler(dataDir))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	poll := func(id string) originalJob {
		t.Helper()
		for {
			resp, err := http.Get(srv.URL + "/api/jobs/" + id)
			if err != nil {
				t.Fatal(err)
			}
			var j originalJob
			err = json.NewDecoder(resp.Body).Decode(&j)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("job status does not decode the original's way: %v", err)
			}
			switch j.Status {
			case "done", "failed":
				return j
			case "pending", "running":
			default:
				t.Fatalf("status %q is not one of the original's", j.Status)
			}
			waitCtx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			jobs.Wait(waitCtx, id)
			cancel()
		}
	}

	body, _ := json.Marshal(map[string]any{"data": map[string]any{}})
	status, _, v := evalPost(t, srv.URL+"/api/eval/injection", string(body))
	if status != http.StatusAccepted {
		t.Fatalf("start: %d %v", status, v)
	}
	j := poll(v["jobId"].(string))
	var result struct {
		OutPath string `json:"outPath"`
		Written int    `json:"written"`
	}
	if j.Status != "done" || json.Unmarshal(j.Result, &result) != nil || result.Written == 0 || j.Error != "" {
		t.Fatalf("job = %+v", j)
	}
	resp, err := http.Get(srv.URL + "/api/eval/datasets/" + filepath.Base(result.OutPath))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, _ := os.ReadFile(result.OutPath)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(data, want) {
		t.Fatalf("dataset: %d, %d bytes, want %d", resp.StatusCode, len(data), len(want))
	}
	// An unknown dataset name (the original answers 404 for invalid ones).
	if resp, err := http.Get(srv.URL + "/api/eval/datasets/other.json"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("invalid name: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// Progress is the latest message, as a string; a failed job has the
	// original's status and its error.
	reported, step := make(chan struct{}), make(chan struct{})
	withProgress, err := jobs.Enqueue("reindex", func(progress func(string)) (any, error) {
		progress("1/2 files")
		progress("2/2 files")
		close(reported)
		<-step
		return nil, errorString("index broken")
	})
	if err != nil {
		t.Fatal(err)
	}
	<-reported
	resp, err = http.Get(srv.URL + "/api/jobs/" + withProgress.ID)
	if err != nil {
		t.Fatal(err)
	}
	var running originalJob
	err = json.NewDecoder(resp.Body).Decode(&running)
	resp.Body.Close()
	if err != nil || running.Status != "running" || running.Progress != "2/2 files" {
		t.Fatalf("running job = %+v, %v", running, err)
	}
	close(step)
	if j := poll(withProgress.ID); j.Status != "failed" || j.Error != "index broken" || j.Progress != "2/2 files" {
		t.Fatalf("failed job = %+v", j)
	}
}

// errorString is a plain error value for test jobs.
type errorString string

func (e errorString) Error() string { return string(e) }

// BenchmarkEvalJobHandlerFlood is the flood: 1,000 concurrent
// POST /api/eval/… while the worker is busy, with 1 MiB bodies (the
// original engine accepted them all and its heap grew from 3 MB to 960 MB)
// and with small valid ones. It reports how many were accepted (202),
// refused (413 or 503, or the connection closed after a 413) and the heap
// held once all were answered (heap-MB, after a GC, jobs still pending).
//
//	go test -run '^$' -bench EvalJobHandlerFlood -benchtime 1x -count 1 .
func BenchmarkEvalJobHandlerFlood(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"1MiB", []byte(`{"data": {"dir": "` + strings.Repeat("x", 1<<20) + `"}}`)},
		{"small", []byte(`{"data": {"dir": "docs"}}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				accepted, refused, heapMB := evalFlood(b, bc.body, 1000)
				if accepted > 1+64 {
					b.Fatalf("%d accepted, more than the default queue of 64 plus the running job", accepted)
				}
				b.ReportMetric(float64(accepted), "accepted")
				b.ReportMetric(float64(refused), "refused")
				b.ReportMetric(heapMB, "heap-MB")
			}
		})
	}
}

// evalFlood posts body n times concurrently to an EvalJobHandler whose
// jobs block until the flood is over, and returns the counts and the heap
// growth in MB while the accepted jobs wait.
func evalFlood(b *testing.B, body []byte, n int) (accepted, refused int, heapMB float64) {
	jobs := NewJobStore()
	defer jobs.Close()
	release := make(chan struct{})
	h := EvalJobHandler(jobs, context.Background(), "evalGenerated",
		func(ctx context.Context, in evalJobInput) (any, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		}, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(release)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			status := 0
			resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case http.StatusAccepted:
				accepted++
			case http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable, 0:
				refused++
			default:
				b.Errorf("status %d", status)
			}
		})
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	return accepted, refused, (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / (1 << 20)
}
