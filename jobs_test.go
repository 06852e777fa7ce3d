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

// blockingJob returns a job function that reports "started" on started and
// then blocks until release is closed or its context is done.
func blockingJob(started chan<- string, release <-chan struct{}) JobFunc {
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
	s := NewJobStore(&JobStoreOptions{MaxHistory: 500})
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
				id := s.Enqueue(context.Background(), "test", func(ctx context.Context, progress func(string)) (any, error) {
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
			if j.ProgressCount != msgs || len(j.Progress) != msgs {
				t.Fatalf("job %s: %d/%d progress messages, want %d", label, len(j.Progress), j.ProgressCount, msgs)
			}
			for k, m := range j.Progress {
				if want := fmt.Sprintf("%s msg %d", label, k); m != want {
					t.Fatalf("job %s progress %d = %q, want %q", label, k, m, want)
				}
			}
			if j.StartedAt.Before(j.CreatedAt) || j.FinishedAt.Before(j.StartedAt) {
				t.Fatalf("job %s: timestamps out of order: %v %v %v", label, j.CreatedAt, j.StartedAt, j.FinishedAt)
			}
		}
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d jobs started while another was running", n)
	}
	// Execution order is the enqueue order List reports...
	list := s.List()
	if len(list) != goroutines*perG {
		t.Fatalf("List has %d jobs, want %d", len(list), goroutines*perG)
	}
	var listed []string
	for _, j := range list {
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
	s := NewJobStore(nil)
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	first := s.Enqueue(context.Background(), "block", blockingJob(started, release))
	<-started
	second := s.Enqueue(context.Background(), "after", func(ctx context.Context, progress func(string)) (any, error) {
		return 42, nil
	})
	if j, _ := s.Get(first); j.Status != JobRunning || j.StartedAt.IsZero() || !j.FinishedAt.IsZero() {
		t.Fatalf("first job = %+v, want running", j)
	}
	if j, _ := s.Get(second); j.Status != JobQueued || !j.StartedAt.IsZero() {
		t.Fatalf("second job = %+v, want queued", j)
	}
	close(release)
	if j := waitJob(t, s, first); j.Status != JobDone || j.Result != "released" || !slices.Equal(j.Progress, []string{"blocking"}) {
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
	s := NewJobStore(nil)
	defer s.Close()
	failed := s.Enqueue(context.Background(), "fail", func(ctx context.Context, progress func(string)) (any, error) {
		progress("about to fail")
		return nil, errors.New("disk on fire")
	})
	panicked := s.Enqueue(context.Background(), "panic", func(ctx context.Context, progress func(string)) (any, error) {
		var m map[string]int
		m["boom"] = 1 // nil map write
		return nil, nil
	})
	valuePanic := s.Enqueue(context.Background(), "panic", func(ctx context.Context, progress func(string)) (any, error) {
		panic("custom panic value")
	})
	after := s.Enqueue(context.Background(), "ok", func(ctx context.Context, progress func(string)) (any, error) {
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
	s := NewJobStore(nil)
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	defer close(release)
	running := s.Enqueue(context.Background(), "block", blockingJob(started, release))
	<-started
	var queuedRan atomic.Bool
	queued := s.Enqueue(context.Background(), "queued", func(ctx context.Context, progress func(string)) (any, error) {
		queuedRan.Store(true)
		return nil, nil
	})
	if err := s.Cancel(queued); err != nil {
		t.Fatalf("Cancel(queued): %v", err)
	}
	if j, _ := s.Get(queued); j.Status != JobCancelled || !j.StartedAt.IsZero() {
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
	next := s.Enqueue(context.Background(), "next", func(ctx context.Context, progress func(string)) (any, error) { return 1, nil })
	if j := waitJob(t, s, next); j.Status != JobDone {
		t.Fatalf("job after cancel = %+v", j)
	}
	if queuedRan.Load() {
		t.Fatal("a job cancelled while queued ran anyway")
	}
}

func TestJobStoreEnqueueContext(t *testing.T) {
	s := NewJobStore(nil)
	defer s.Close()
	started, release := make(chan string, 1), make(chan struct{})
	blocker := s.Enqueue(context.Background(), "block", blockingJob(started, release))
	<-started
	// A job whose context ends while it waits never runs.
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	id := s.Enqueue(ctx, "short-lived", func(ctx context.Context, progress func(string)) (any, error) {
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
	id2 := s.Enqueue(ctx2, "running", blockingJob(started2, nil))
	<-started2
	cancel2()
	if j := waitJob(t, s, id2); j.Status != JobCancelled {
		t.Fatalf("job whose context ended while running = %+v, want cancelled", j)
	}
}

func TestJobStoreHistoryCap(t *testing.T) {
	s := NewJobStore(&JobStoreOptions{MaxHistory: 3})
	defer s.Close()
	var ids []string
	for i := range 5 {
		ids = append(ids, s.Enqueue(context.Background(), "quick", func(ctx context.Context, progress func(string)) (any, error) { return i, nil }))
	}
	waitJob(t, s, ids[4])
	list := s.List()
	if len(list) != 3 || list[0].ID != ids[2] || list[2].ID != ids[4] {
		t.Fatalf("history = %v, want the 3 newest jobs", jobIDs(list))
	}
	if _, ok := s.Get(ids[0]); ok {
		t.Fatal("oldest finished job still in the history")
	}
	// Running and queued jobs are never dropped, even over the cap.
	started, release := make(chan string, 1), make(chan struct{})
	running := s.Enqueue(context.Background(), "block", blockingJob(started, release))
	<-started
	var pending []string
	for range 4 {
		pending = append(pending, s.Enqueue(context.Background(), "pending", func(ctx context.Context, progress func(string)) (any, error) { return nil, nil }))
	}
	list = s.List()
	if len(list) != 5 {
		t.Fatalf("history while 5 jobs pending = %v, want exactly the 5 pending ones", jobIDs(list))
	}
	for _, j := range list {
		if j.Status.Finished() {
			t.Fatalf("finished job %s kept while over the cap", j.ID)
		}
	}
	close(release)
	// Not Wait(running): once finished it may already be dropped.
	waitJob(t, s, pending[3])
	if _, ok := s.Get(running); ok {
		t.Fatal("oldest finished job kept over the cap")
	}
	list = s.List()
	if want := pending[1:]; !slices.Equal(jobIDs(list), want) {
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
	s := NewJobStore(&JobStoreOptions{MaxProgress: 10})
	defer s.Close()
	id := s.Enqueue(context.Background(), "chatty", func(ctx context.Context, progress func(string)) (any, error) {
		for i := range 35 {
			progress(fmt.Sprint(i))
		}
		return nil, nil
	})
	j := waitJob(t, s, id)
	want := []string{"25", "26", "27", "28", "29", "30", "31", "32", "33", "34"}
	if j.ProgressCount != 35 || !slices.Equal(j.Progress, want) {
		t.Fatalf("progress = %v (count %d), want the last 10 of 35", j.Progress, j.ProgressCount)
	}
}

func TestJobStoreClose(t *testing.T) {
	s := NewJobStore(nil)
	started := make(chan string, 1)
	running := s.Enqueue(context.Background(), "block", blockingJob(started, nil))
	<-started
	queued := s.Enqueue(context.Background(), "queued", func(ctx context.Context, progress func(string)) (any, error) { return nil, nil })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get(running); j.Status != JobCancelled || !strings.Contains(j.Error, ErrJobStoreClosed.Error()) {
		t.Fatalf("running job after Close = %+v", j)
	}
	if j, _ := s.Get(queued); j.Status != JobCancelled {
		t.Fatalf("queued job after Close = %+v", j)
	}
	late := s.Enqueue(context.Background(), "late", func(ctx context.Context, progress func(string)) (any, error) { return nil, nil })
	if j, _ := s.Get(late); j.Status != JobCancelled || j.Error != ErrJobStoreClosed.Error() {
		t.Fatalf("job enqueued after Close = %+v", j)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestJobJSON(t *testing.T) {
	s := NewJobStore(nil)
	defer s.Close()
	id := s.Enqueue(context.Background(), "json", func(ctx context.Context, progress func(string)) (any, error) {
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
	if back["status"] != "done" || back["kind"] != "json" || back["id"] != id || back["startedAt"] == nil {
		t.Fatalf("JSON = %s", b)
	}
	if _, ok := back["error"]; ok {
		t.Fatalf("JSON of a successful job has an error field: %s", b)
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
	s := NewJobStore(nil)
	defer s.Close()
	ok := RunStreamingFlowAsJob(context.Background(), s, "flow", flow, flowTestInput{Steps: 50})
	bad := RunStreamingFlowAsJob(context.Background(), s, "flow", flow, flowTestInput{Steps: -1})
	j := waitJob(t, s, ok)
	if j.Status != JobDone || j.Result != (flowTestOutput{Done: 50}) || len(j.Progress) != 50 || j.Progress[49] != "step 50" {
		t.Fatalf("flow job = %+v", j)
	}
	j = waitJob(t, s, bad)
	if j.Status != JobFailed || !strings.Contains(j.Error, "negative steps") || !slices.Equal(j.Progress, []string{"refusing"}) {
		t.Fatalf("failing flow job = %+v", j)
	}
}

func TestJobStoreNilArguments(t *testing.T) {
	s := NewJobStore(nil)
	defer s.Close()
	//lint:ignore SA1012 a nil context is what this test is about
	id := s.Enqueue(nil, "nil fn", nil) //nolint:staticcheck
	if j := waitJob(t, s, id); j.Status != JobFailed || j.Error == "" {
		t.Fatalf("job with nil fn and nil ctx = %+v, want failed", j)
	}
}
