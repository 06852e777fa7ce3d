package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"
)

// waitJob waits (bounded) for a job to finish.
func waitJob(t *testing.T, s *JobStore, id string) Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	j, err := s.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	return j
}

// enqueueT is EnqueueContext that reports an error to t and returns the
// job's ID.
func enqueueT(t *testing.T, s *JobStore, ctx context.Context, kind string, fn jobFunc) string {
	t.Helper()
	j, err := s.EnqueueContext(ctx, kind, fn)
	if err != nil {
		t.Errorf("EnqueueContext(%s): %v", kind, err)
		return ""
	}
	if j.Status != JobPending || j.Kind != kind || len(j.ID) != randomHexIDLen {
		t.Errorf("EnqueueContext(%s) = %+v, want a pending job", kind, j)
	}
	return j.ID
}

// blockingJob returns a job function that reports "started" on started and
// then blocks until release is closed or its context is done.
func blockingJob(started chan<- string, release <-chan struct{}) jobFunc {
	return func(ctx context.Context, progress func(string)) (any, error) {
		progress("blocking")
		started <- "started"
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// 200 jobs enqueued from 20 goroutines all complete, strictly one at a time,
// in enqueue order (so in each goroutine's own order), with every progress
// message kept.
func TestJobStoreConcurrentEnqueueOrder(t *testing.T) {
	s := NewJobStoreWithOptions(&JobStoreOptions{MaxHistory: 500, MaxQueue: 500})
	defer s.Close()
	const goroutines, perG, msgs = 20, 10, 5
	var (
		running  atomic.Int32
		overlaps atomic.Int32
		mu       sync.Mutex
		ran      []string // job labels in execution order
		wg       sync.WaitGroup
	)
	ids := make([][]string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				label := fmt.Sprintf("g%02d-%02d", g, i)
				id := enqueueT(t, s, context.Background(), "test", func(ctx context.Context, progress func(string)) (any, error) {
					if running.Add(1) != 1 {
						overlaps.Add(1)
					}
					defer running.Add(-1)
					mu.Lock()
					ran = append(ran, label)
					mu.Unlock()
					for k := range msgs {
						progress(fmt.Sprintf("%s msg %d", label, k))
					}
					return label, nil
				})
				ids[g] = append(ids[g], id)
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		for i, id := range ids[g] {
			j := waitJob(t, s, id)
			label := fmt.Sprintf("g%02d-%02d", g, i)
			if j.Status != JobDone || j.Result != label {
				t.Fatalf("job %s: status %s result %v error %q", label, j.Status, j.Result, j.Error)
			}
			if j.ProgressCount != msgs || len(j.ProgressLog) != msgs || j.Progress != j.ProgressLog[msgs-1] {
				t.Fatalf("job %s: %d/%d progress messages (latest %q), want %d", label, len(j.ProgressLog), j.ProgressCount, j.Progress, msgs)
			}
			for k, m := range j.ProgressLog {
				if want := fmt.Sprintf("%s msg %d", label, k); m != want {
					t.Fatalf("job %s progress %d = %q, want %q", label, k, m, want)
				}
			}
			if j.StartedAt == nil || j.EndedAt == nil || j.StartedAt.Before(j.CreatedAt) || j.EndedAt.Before(*j.StartedAt) {
				t.Fatalf("job %s: timestamps missing or out of order: %v %v %v", label, j.CreatedAt, j.StartedAt, j.EndedAt)
			}
		}
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d jobs started while another was running", n)
	}
	// Execution order is the enqueue order List reports (newest first)...
	list := s.List(0)
	if len(list) != goroutines*perG {
		t.Fatalf("List has %d jobs, want %d", len(list), goroutines*perG)
	}
	var listed []string
	for _, j := range slices.Backward(list) {
		listed = append(listed, j.Result.(string))
	}
	if !slices.Equal(listed, ran) {
		t.Fatalf("execution order differs from enqueue order:\nran    %v\nlisted %v", ran, listed)
	}
	// ... hence each goroutine's jobs ran in the order it enqueued them.
	next := make([]int, goroutines)
	for _, label := range ran {
		var g, i int
		fmt.Sscanf(label, "g%02d-%02d", &g, &i)
		if i != next[g] {
			t.Fatalf("goroutine %d: job %d ran before job %d", g, i, next[g])
		}
		next[g]++
	}
}

func TestJobStoreLifecycle(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	first := enqueueT(t, s, context.Background(), "block", blockingJob(started, release))
	<-started
	second := enqueueT(t, s, context.Background(), "after", func(ctx context.Context, progress func(string)) (any, error) {
		return 42, nil
	})
	if j, _ := s.Get(first); j.Status != JobRunning || j.StartedAt == nil || j.EndedAt != nil || j.Progress != "blocking" {
		t.Fatalf("first job = %+v, want running", j)
	}
	if j, _ := s.Get(second); j.Status != JobPending || j.StartedAt != nil || j.Progress != "" {
		t.Fatalf("second job = %+v, want pending", j)
	}
	close(release)
	if j := waitJob(t, s, first); j.Status != JobDone || j.Result != "released" || !slices.Equal(j.ProgressLog, []string{"blocking"}) || j.EndedAt == nil {
		t.Fatalf("first job = %+v", j)
	}
	if j := waitJob(t, s, second); j.Status != JobDone || j.Result != 42 || j.Kind != "after" {
		t.Fatalf("second job = %+v", j)
	}
	if _, ok := s.Get("nope"); ok {
		t.Fatal("Get(unknown) reported ok")
	}
	if _, err := s.Wait(t.Context(), "nope"); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("Wait(unknown) = %v, want ErrJobNotFound", err)
	}
}

func TestJobStoreFailureAndPanic(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	failed := enqueueT(t, s, context.Background(), "fail", func(ctx context.Context, progress func(string)) (any, error) {
		progress("about to fail")
		return nil, errors.New("disk on fire")
	})
	panicked := enqueueT(t, s, context.Background(), "panic", func(ctx context.Context, progress func(string)) (any, error) {
		var m map[string]int
		m["boom"] = 1 // nil map write
		return nil, nil
	})
	valuePanic := enqueueT(t, s, context.Background(), "panic", func(ctx context.Context, progress func(string)) (any, error) {
		panic("custom panic value")
	})
	after := enqueueT(t, s, context.Background(), "ok", func(ctx context.Context, progress func(string)) (any, error) {
		return "still alive", nil
	})
	if j := waitJob(t, s, failed); j.Status != JobFailed || j.Error != "disk on fire" || j.Result != nil {
		t.Fatalf("failing job = %+v", j)
	}
	if j := waitJob(t, s, panicked); j.Status != JobFailed || !strings.Contains(j.Error, "panic") || !strings.Contains(j.Error, "nil map") {
		t.Fatalf("panicking job = %+v", j)
	}
	if j := waitJob(t, s, valuePanic); j.Status != JobFailed || !strings.Contains(j.Error, "custom panic value") {
		t.Fatalf("panicking job = %+v", j)
	}
	if j := waitJob(t, s, after); j.Status != JobDone || j.Result != "still alive" {
		t.Fatalf("job after panics = %+v, want done", j)
	}
}

func TestJobStoreCancel(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	defer close(release)
	running := enqueueT(t, s, context.Background(), "block", blockingJob(started, release))
	<-started
	var queuedRan atomic.Bool
	queued := enqueueT(t, s, context.Background(), "queued", func(ctx context.Context, progress func(string)) (any, error) {
		queuedRan.Store(true)
		return nil, nil
	})
	if err := s.Cancel(queued); err != nil {
		t.Fatalf("Cancel(queued): %v", err)
	}
	if j, _ := s.Get(queued); j.Status != JobCancelled || j.StartedAt != nil || j.EndedAt == nil {
		t.Fatalf("cancelled queued job = %+v", j)
	}
	if err := s.Cancel(running); err != nil {
		t.Fatalf("Cancel(running): %v", err)
	}
	j := waitJob(t, s, running)
	if j.Status != JobCancelled || !strings.Contains(j.Error, ErrJobCancelled.Error()) {
		t.Fatalf("cancelled running job = %+v", j)
	}
	if err := s.Cancel(running); !errors.Is(err, ErrJobFinished) {
		t.Fatalf("Cancel(finished) = %v, want ErrJobFinished", err)
	}
	if err := s.Cancel("unknown"); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("Cancel(unknown) = %v, want ErrJobNotFound", err)
	}
	// The worker goes on with the next job; the cancelled one never ran.
	next := enqueueT(t, s, context.Background(), "next", func(ctx context.Context, progress func(string)) (any, error) { return 1, nil })
	if j := waitJob(t, s, next); j.Status != JobDone {
		t.Fatalf("job after cancel = %+v", j)
	}
	if queuedRan.Load() {
		t.Fatal("a job cancelled while queued ran anyway")
	}
}

func TestJobStoreEnqueueContext(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	blocker := enqueueT(t, s, context.Background(), "block", blockingJob(started, release))
	<-started
	// A job whose context ends while it waits never runs.
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	id := enqueueT(t, s, ctx, "short-lived", func(ctx context.Context, progress func(string)) (any, error) {
		ran.Store(true)
		return nil, nil
	})
	cancel()
	close(release)
	waitJob(t, s, blocker)
	if j := waitJob(t, s, id); j.Status != JobCancelled || ran.Load() {
		t.Fatalf("job with cancelled context = %+v (ran=%v)", j, ran.Load())
	}
	// A running job sees its enqueue context's cancellation.
	ctx2, cancel2 := context.WithCancel(context.Background())
	started2 := make(chan string, 1)
	id2 := enqueueT(t, s, ctx2, "running", blockingJob(started2, nil))
	<-started2
	cancel2()
	if j := waitJob(t, s, id2); j.Status != JobCancelled {
		t.Fatalf("job whose context ended while running = %+v, want cancelled", j)
	}
}

func TestJobStoreHistoryCap(t *testing.T) {
	s := NewJobStoreWithOptions(&JobStoreOptions{MaxHistory: 3})
	defer s.Close()
	var ids []string
	for i := range 5 {
		ids = append(ids, enqueueT(t, s, context.Background(), "quick", func(ctx context.Context, progress func(string)) (any, error) { return i, nil }))
	}
	waitJob(t, s, ids[4])
	list := s.List(0)
	if len(list) != 3 || list[0].ID != ids[4] || list[2].ID != ids[2] {
		t.Fatalf("history = %v, want the 3 newest jobs, newest first", jobIDs(list))
	}
	if _, ok := s.Get(ids[0]); ok {
		t.Fatal("oldest finished job still in the history")
	}
	// Running and queued jobs are never dropped, even over the cap.
	started, release := make(chan string, 1), make(chan struct{})
	running := enqueueT(t, s, context.Background(), "block", blockingJob(started, release))
	<-started
	var pending []string
	for range 4 {
		pending = append(pending, enqueueT(t, s, context.Background(), "pending", func(ctx context.Context, progress func(string)) (any, error) { return nil, nil }))
	}
	list = s.List(0)
	if len(list) != 5 {
		t.Fatalf("history while 5 jobs pending = %v, want exactly the 5 pending ones", jobIDs(list))
	}
	for _, j := range list {
		if j.Status.final() || j.EndedAt != nil {
			t.Fatalf("finished job %s kept while over the cap", j.ID)
		}
	}
	close(release)
	// Not Wait(running): once finished it may already be dropped.
	waitJob(t, s, pending[3])
	if _, ok := s.Get(running); ok {
		t.Fatal("oldest finished job kept over the cap")
	}
	list = s.List(-1)
	want := slices.Clone(pending[1:])
	slices.Reverse(want) // newest first
	if !slices.Equal(jobIDs(list), want) {
		t.Fatalf("history after all finished = %v, want %v", jobIDs(list), want)
	}
}

func jobIDs(jobs []Job) []string {
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func TestJobStoreProgressCap(t *testing.T) {
	s := NewJobStoreWithOptions(&JobStoreOptions{MaxProgress: 10})
	defer s.Close()
	id := enqueueT(t, s, context.Background(), "chatty", func(ctx context.Context, progress func(string)) (any, error) {
		for i := range 35 {
			progress(fmt.Sprint(i))
		}
		return nil, nil
	})
	j := waitJob(t, s, id)
	want := []string{"25", "26", "27", "28", "29", "30", "31", "32", "33", "34"}
	if j.ProgressCount != 35 || !slices.Equal(j.ProgressLog, want) || j.Progress != "34" {
		t.Fatalf("progress = %q %v (count %d), want the last 10 of 35", j.Progress, j.ProgressLog, j.ProgressCount)
	}
}

func TestJobStoreClose(t *testing.T) {
	s := NewJobStore()
	started := make(chan string, 1)
	running := enqueueT(t, s, context.Background(), "block", blockingJob(started, nil))
	<-started
	queued := enqueueT(t, s, context.Background(), "queued", func(ctx context.Context, progress func(string)) (any, error) { return nil, nil })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get(running); j.Status != JobCancelled || !strings.Contains(j.Error, ErrJobStoreClosed.Error()) {
		t.Fatalf("running job after Close = %+v", j)
	}
	if j, _ := s.Get(queued); j.Status != JobCancelled {
		t.Fatalf("queued job after Close = %+v", j)
	}
	late, err := s.EnqueueContext(context.Background(), "late", func(ctx context.Context, progress func(string)) (any, error) { return nil, nil })
	if !errors.Is(err, ErrJobStoreClosed) || late != nil {
		t.Fatalf("EnqueueContext after Close = %+v, %v; want ErrJobStoreClosed", late, err)
	}
	if _, err := s.Enqueue("late", func(func(string)) (any, error) { return nil, nil }); !errors.Is(err, ErrJobStoreClosed) {
		t.Fatalf("Enqueue after Close = %v; want ErrJobStoreClosed", err)
	}
	if n := len(s.List(0)); n != 2 {
		t.Fatalf("jobs refused after Close were recorded: %d jobs", n)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestJobJSON(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	id := enqueueT(t, s, context.Background(), "json", func(ctx context.Context, progress func(string)) (any, error) {
		progress("half")
		return map[string]int{"pages": 3}, nil
	})
	j := waitJob(t, s, id)
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// The original engine's shape: status, progress as the latest message,
	// error and result always present; the whole log on the side.
	if back["status"] != "done" || back["kind"] != "json" || back["id"] != id || back["startedAt"] == nil || back["endedAt"] == nil ||
		back["progress"] != "half" || back["error"] != "" || back["result"].(map[string]any)["pages"] != 3.0 {
		t.Fatalf("JSON = %s", b)
	}
	if log, ok := back["progressLog"].([]any); !ok || len(log) != 1 || log[0] != "half" {
		t.Fatalf("JSON progressLog = %s", b)
	}
	pending, err := json.Marshal(Job{ID: "x", Status: JobPending})
	if err != nil {
		t.Fatal(err)
	}
	var pback map[string]any
	if err := json.Unmarshal(pending, &pback); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"status", "progress", "error", "result"} {
		if _, ok := pback[key]; !ok {
			t.Errorf("JSON of a pending job lacks %q: %s", key, pending)
		}
	}
	if pback["status"] != "pending" {
		t.Errorf("pending status = %v", pback["status"])
	}
}

func TestRunStreamingFlowAsJob(t *testing.T) {
	g := genkit.Init(t.Context())
	flow := DefineProgressFlow(g, "jobFlow", func(ctx context.Context, in flowTestInput, progress func(string)) (flowTestOutput, error) {
		if in.Steps < 0 {
			progress("refusing")
			return flowTestOutput{}, errors.New("negative steps")
		}
		for i := range in.Steps {
			progress(fmt.Sprintf("step %d", i+1))
		}
		return flowTestOutput{Done: in.Steps}, nil
	})
	s := NewJobStore()
	defer s.Close()
	// Directly: every streamed message reaches progress, then the output.
	var got []string
	out, err := RunStreamingFlowAsJob(t.Context(), flow, flowTestInput{Steps: 3}, func(m string) { got = append(got, m) })
	if err != nil || out != (flowTestOutput{Done: 3}) || !slices.Equal(got, []string{"step 1", "step 2", "step 3"}) {
		t.Fatalf("RunStreamingFlowAsJob = %v, %v, progress %v", out, err, got)
	}
	if out, err := RunStreamingFlowAsJob(t.Context(), flow, flowTestInput{Steps: 2}, nil); err != nil || out != (flowTestOutput{Done: 2}) {
		t.Fatalf("nil progress: %v, %v", out, err)
	}
	// As a job's work, the original engine's way.
	run := func(in flowTestInput) string {
		j, err := s.Enqueue("flow", func(progress func(string)) (any, error) {
			return RunStreamingFlowAsJob(context.Background(), flow, in, progress)
		})
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		return j.ID
	}
	ok, bad := run(flowTestInput{Steps: 50}), run(flowTestInput{Steps: -1})
	j := waitJob(t, s, ok)
	if j.Status != JobDone || j.Result != (flowTestOutput{Done: 50}) || len(j.ProgressLog) != 50 || j.Progress != "step 50" {
		t.Fatalf("flow job = %+v", j)
	}
	j = waitJob(t, s, bad)
	if j.Status != JobFailed || !strings.Contains(j.Error, "negative steps") || !strings.Contains(j.Error, "jobFlow") ||
		!slices.Equal(j.ProgressLog, []string{"refusing"}) {
		t.Fatalf("failing flow job = %+v", j)
	}
}

func TestJobStoreNilArguments(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	//lint:ignore SA1012 a nil context is what this test is about
	id := enqueueT(t, s, nil, "nil fn", nil) //nolint:staticcheck
	if j := waitJob(t, s, id); j.Status != JobFailed || j.Error == "" {
		t.Fatalf("job with nil fn and nil ctx = %+v, want failed", j)
	}
	j, err := s.Enqueue("nil work", nil)
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, s, j.ID); j.Status != JobFailed || j.Error == "" {
		t.Fatalf("job with nil work = %+v, want failed", j)
	}
}

// The original engine's Enqueue: work without a context, a *Job back;
// the job still stops on Cancel.
func TestJobStoreEnqueueOriginal(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	j, err := s.Enqueue("reindex", func(progress func(string)) (any, error) {
		progress("1/2")
		progress("2/2")
		return "ok", nil
	})
	if err != nil || j == nil || j.Status != JobPending || j.Kind != "reindex" || j.StartedAt != nil {
		t.Fatalf("Enqueue = %+v, %v", j, err)
	}
	done := waitJob(t, s, j.ID)
	if done.Status != JobDone || done.Result != "ok" || done.Progress != "2/2" || !slices.Equal(done.ProgressLog, []string{"1/2", "2/2"}) {
		t.Fatalf("job = %+v", done)
	}
	if j.Status != JobPending {
		t.Fatal("the returned *Job is not a snapshot")
	}
}

// Past MaxQueue pending jobs Enqueue fails with ErrJobQueueFull and records
// nothing; once the worker takes a job, there is room again.
func TestJobStoreQueueFull(t *testing.T) {
	s := NewJobStoreWithOptions(&JobStoreOptions{MaxQueue: 3})
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	enqueueT(t, s, context.Background(), "block", blockingJob(started, release))
	<-started // running: does not count
	noop := func(context.Context, func(string)) (any, error) { return nil, nil }
	var pending []string
	for range 3 {
		pending = append(pending, enqueueT(t, s, context.Background(), "pending", noop))
	}
	j, err := s.EnqueueContext(context.Background(), "one too many", noop)
	if !errors.Is(err, ErrJobQueueFull) || j != nil {
		t.Fatalf("EnqueueContext past MaxQueue = %+v, %v; want ErrJobQueueFull", j, err)
	}
	if _, err := s.Enqueue("one too many", func(func(string)) (any, error) { return nil, nil }); !errors.Is(err, ErrJobQueueFull) {
		t.Fatalf("Enqueue past MaxQueue = %v; want ErrJobQueueFull", err)
	}
	if n := len(s.List(0)); n != 4 {
		t.Fatalf("refused jobs recorded: %d jobs", n)
	}
	close(release)
	waitJob(t, s, pending[2])
	if _, err := s.EnqueueContext(context.Background(), "room again", noop); err != nil {
		t.Fatalf("EnqueueContext once the queue drained: %v", err)
	}
	// The default bound.
	d := NewJobStore()
	defer d.Close()
	if d.opts.MaxQueue != defaultJobMaxQueue || defaultJobMaxQueue <= 0 {
		t.Fatalf("default MaxQueue = %d", d.opts.MaxQueue)
	}
}

func TestJobStoreListLimit(t *testing.T) {
	s := NewJobStore()
	defer s.Close()
	var ids []string
	for i := range 5 {
		ids = append(ids, enqueueT(t, s, context.Background(), "quick", func(context.Context, func(string)) (any, error) { return i, nil }))
	}
	waitJob(t, s, ids[4])
	for _, tc := range []struct {
		limit int
		want  []string
	}{
		{0, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{-1, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{2, []string{ids[4], ids[3]}},
		{1, []string{ids[4]}},
		{9, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
	} {
		if got := jobIDs(s.List(tc.limit)); !slices.Equal(got, tc.want) {
			t.Errorf("List(%d) = %v, want %v", tc.limit, got, tc.want)
		}
	}
}
