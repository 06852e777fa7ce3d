package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/firebase/genkit/go/core"
)

// JobStatus is the state of a job in a JobStore.
type JobStatus string

// The states of a job (their names are a wire contract, docs/compat.md). A
// job starts pending, becomes running when the worker picks it up and ends
// in exactly one of done, failed or cancelled (Cancel, Close, or the
// enqueue context ending).
const (
	JobPending   JobStatus = "pending"
	JobRunning   JobStatus = "running"
	JobDone      JobStatus = "done"
	JobFailed    JobStatus = "failed"
	JobCancelled JobStatus = "cancelled"
)

// Finished reports whether s is a final state (done, failed or cancelled).
//
// Deprecated: A job is finished when its EndedAt is set (Job.EndedAt !=
// nil), which every job store fills as the job reaches one of the three
// final states.
func (s JobStatus) Finished() bool { return s.final() }

// final reports whether s is a final state (done, failed or cancelled).
func (s JobStatus) final() bool {
	return s == JobDone || s == JobFailed || s == JobCancelled
}

// Errors returned by JobStore methods.
var (
	// ErrJobNotFound is returned for an ID the store does not know (never
	// enqueued, or already dropped from the history).
	ErrJobNotFound = errors.New("job not found")
	// ErrJobFinished is returned by Cancel for a job that has already
	// finished.
	ErrJobFinished = errors.New("job already finished")
	// ErrJobCancelled is the cancellation cause a job's context carries
	// after Cancel.
	ErrJobCancelled = errors.New("job cancelled")
	// ErrJobStoreClosed is the cancellation cause after Close, and the error
	// Enqueue returns after Close.
	ErrJobStoreClosed = errors.New("job store closed")
	// ErrJobQueueFull is returned by Enqueue when JobStoreOptions.MaxQueue
	// jobs are already pending; the job is not recorded. Retry later (an
	// HTTP handler answers 503 with Retry-After).
	ErrJobQueueFull = errors.New("job queue full")
	// ErrJobKindUnknown is returned by EnqueueInput for a kind no handler was
	// registered for with HandleKind.
	ErrJobKindUnknown = errors.New("no handler for this job kind")
)

// jobFunc is the work of one job, as EnqueueContext takes it.
type jobFunc = func(ctx context.Context, progress func(string)) (any, error)

// Job is a snapshot of one job, as returned by JobStore.Get, List and
// Enqueue. It is a copy: later changes to the job do not show in it. Its
// JSON form always has the keys "status", "progress" (a string), "error"
// and "result", the shape clients poll for (docs/compat.md).
type Job struct {
	ID     string    `json:"id"`
	Kind   string    `json:"kind"`
	Status JobStatus `json:"status"`
	// Progress is the latest progress message ("" before the first).
	Progress string `json:"progress"`
	// ProgressLog holds the job's progress messages in the order reported;
	// at most JobStoreOptions.MaxProgress of them, the oldest dropped first.
	ProgressLog []string `json:"progressLog,omitempty"`
	// ProgressCount counts all progress messages reported, including
	// dropped ones.
	ProgressCount int `json:"progressCount"`
	// Result is the value the job's function returned (nil unless done).
	Result any `json:"result"`
	// Error is the job's error message (failed or cancelled jobs).
	Error string `json:"error"`
	// CreatedAt, StartedAt and EndedAt are the enqueue, start and end
	// times; StartedAt and EndedAt are nil until they happen (a job
	// cancelled while pending never starts).
	CreatedAt time.Time  `json:"createdAt"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
}

// JobStoreOptions configures a JobStore. The zero value (or nil) means the
// defaults.
type JobStoreOptions struct {
	// MaxHistory caps the number of jobs the store remembers (default 100).
	// When it is exceeded, the oldest finished jobs are dropped first; queued
	// and running jobs are never dropped, so the store may hold more than
	// MaxHistory jobs while that many are pending.
	MaxHistory int
	// MaxProgress caps the progress messages kept per job in
	// Job.ProgressLog (default 1000); older messages are dropped first.
	MaxProgress int
	// MaxQueue caps the number of pending jobs (default 64): Enqueue
	// returns ErrJobQueueFull while that many wait for the worker. The
	// running job does not count.
	MaxQueue int
}

const (
	defaultJobMaxHistory  = 100
	defaultJobMaxProgress = 1000
	defaultJobMaxQueue    = 64
)

// JobStore runs jobs one at a time, in enqueue order, on a single background
// worker (so an index run and a crawl never compete for the same embedding
// backend) and keeps their status, progress and result in memory. All its
// methods are safe for concurrent use.
type JobStore struct {
	opts JobStoreOptions

	mu     sync.Mutex
	wake   *sync.Cond   // signalled when queue grows or the store closes
	jobs   []*jobRecord // enqueue order: the history
	byID   map[string]*jobRecord
	queue  []*jobRecord // pending jobs, enqueue order
	closed bool
	// kinds are the handlers HandleKind registered, by job kind.
	kinds map[string]jobInputFunc
	// base is the context of jobs enqueued without one (Enqueue); it is
	// never cancelled, Close cancels each running job itself.
	base context.Context

	closeOnce  sync.Once
	workerDone chan struct{}
}

// jobRecord is a job's mutable state, guarded by JobStore.mu.
type jobRecord struct {
	Job                // Progress, ProgressLog, StartedAt and EndedAt unused: see below
	startedAt, endedAt time.Time
	progress           []string        // the log, up to 2*MaxProgress
	ctx                context.Context // the enqueue context
	fn                 jobFunc
	cancel             context.CancelCauseFunc // set while running
	done               chan struct{}           // closed when the job finishes
}

// NewJobStore returns a JobStore with the default options and starts its
// worker. Call Close to stop the worker.
//
// Deprecated: Use NewJobStoreWithOptions(nil), the same function
// (JobStoreOptions sets the history, progress and queue limits).
func NewJobStore() *JobStore {
	return NewJobStoreWithOptions(nil)
}

// NewJobStoreWithOptions returns a JobStore and starts its worker. opts may
// be nil for the defaults; it is copied. Call Close to stop the worker.
func NewJobStoreWithOptions(opts *JobStoreOptions) *JobStore {
	s := &JobStore{
		byID:       make(map[string]*jobRecord),
		workerDone: make(chan struct{}),
		base:       context.Background(),
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxHistory <= 0 {
		s.opts.MaxHistory = defaultJobMaxHistory
	}
	if s.opts.MaxProgress <= 0 {
		s.opts.MaxProgress = defaultJobMaxProgress
	}
	if s.opts.MaxQueue <= 0 {
		s.opts.MaxQueue = defaultJobMaxQueue
	}
	s.wake = sync.NewCond(&s.mu)
	go s.work()
	return s
}

// Enqueue adds a job of the given kind that runs work, a function without
// a context: EnqueueContext with the store's own context, which only Cancel
// and Close end.
//
// Deprecated: Use EnqueueContext(ctx, kind, fn), the same queue, with the
// app's long-lived context (context.Background() for a job only Cancel and
// Close stop) and an fn that takes the job's context.
func (s *JobStore) Enqueue(kind string, work func(progress func(string)) (any, error)) (*Job, error) {
	var fn jobFunc
	if work != nil {
		fn = func(_ context.Context, progress func(string)) (any, error) { return work(progress) }
	}
	return s.EnqueueContext(s.base, kind, fn)
}

// EnqueueContext adds a job of the given kind (a free-form label such as
// "crawl" or "evalGenerated") that runs fn, the work of the job, and
// returns a snapshot of the pending job (its ID from NewRandomHexID(16)).
// It never blocks on other jobs. fn should return promptly once its ctx is
// done; its progress records a human-readable progress message, is safe
// for concurrent use, and ignores calls after fn returned. Its result
// should be JSON-encodable if the app serves Job values over HTTP.
//
// The job runs with a context derived from ctx, which Cancel and Close end
// too: pass the app's long-lived context, not an HTTP request's, which
// ends as soon as the response is written. If ctx is done before the job's
// turn comes, the job is cancelled without running. A nil ctx means
// context.Background(). It returns an error wrapping ErrJobQueueFull when
// JobStoreOptions.MaxQueue jobs are pending, and ErrJobStoreClosed after
// Close; the job is then not recorded. A nil fn makes the job fail.
func (s *JobStore) EnqueueContext(ctx context.Context, kind string, fn func(ctx context.Context, progress func(string)) (any, error)) (*Job, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("enqueue %s job: %w", kind, ErrJobStoreClosed)
	}
	if len(s.queue) >= s.opts.MaxQueue {
		return nil, fmt.Errorf("enqueue %s job: %w (%d pending)", kind, ErrJobQueueFull, len(s.queue))
	}
	r := &jobRecord{
		Job:  Job{ID: NewRandomHexID(defaultIDBytes), Kind: kind, Status: JobPending, CreatedAt: time.Now()},
		ctx:  ctx,
		fn:   fn,
		done: make(chan struct{}),
	}
	s.jobs = append(s.jobs, r)
	s.byID[r.ID] = r
	s.queue = append(s.queue, r)
	s.trimLocked()
	s.wake.Signal()
	j := r.snapshot(s.opts.MaxProgress)
	return &j, nil
}

// Get returns a snapshot of the job with the given ID, and false if the store
// does not know it.
func (s *JobStore) Get(id string) (Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return Job{}, false
	}
	return r.snapshot(s.opts.MaxProgress), true
}

// List returns snapshots of the limit most recent jobs the store
// remembers, newest first (reverse enqueue order); limit <= 0 means all.
func (s *JobStore) List(limit int) []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.jobs)
	if limit > 0 && limit < n {
		n = limit
	}
	out := make([]Job, n)
	for i := range out {
		out[i] = s.jobs[len(s.jobs)-1-i].snapshot(s.opts.MaxProgress)
	}
	return out
}

// Wait blocks until the job with the given ID has finished or ctx is done,
// and returns its final snapshot. It returns an error wrapping ErrJobNotFound
// for an unknown ID (including a job that finished and was dropped from the
// history before Wait was called), or ctx's error.
func (s *JobStore) Wait(ctx context.Context, id string) (Job, error) {
	s.mu.Lock()
	r, ok := s.byID[id]
	s.mu.Unlock()
	if !ok {
		return Job{}, fmt.Errorf("wait for job %s: %w", id, ErrJobNotFound)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return Job{}, fmt.Errorf("wait for job %s: %w", id, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.snapshot(s.opts.MaxProgress), nil
}

// Cancel cancels the job with the given ID. A pending job is marked cancelled
// at once and never runs. A running job's context is cancelled with cause
// ErrJobCancelled; it is marked cancelled when its function returns an error,
// or done if it completes anyway. Cancel returns an error wrapping
// ErrJobNotFound for an unknown ID and ErrJobFinished for a finished job.
func (s *JobStore) Cancel(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return fmt.Errorf("cancel job %s: %w", id, ErrJobNotFound)
	}
	switch r.Status {
	case JobPending:
		s.removeQueuedLocked(r)
		s.finishLocked(r, JobCancelled, nil, ErrJobCancelled.Error())
		s.trimLocked()
	case JobRunning:
		r.cancel(ErrJobCancelled)
	default:
		return fmt.Errorf("cancel job %s (%s): %w", id, r.Status, ErrJobFinished)
	}
	return nil
}

// Close stops the worker: pending jobs are marked cancelled, the running job's
// context is cancelled with cause ErrJobStoreClosed, and Close blocks until
// that job's function has returned (a function that ignores its context
// keeps Close waiting). The history stays readable. Close is idempotent and
// always returns nil.
func (s *JobStore) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		for _, r := range s.queue {
			s.finishLocked(r, JobCancelled, nil, ErrJobStoreClosed.Error())
		}
		s.queue = nil
		for _, r := range s.jobs {
			if r.Status == JobRunning {
				r.cancel(ErrJobStoreClosed)
			}
		}
		s.wake.Broadcast()
		s.mu.Unlock()
	})
	<-s.workerDone
	return nil
}

// work is the single worker goroutine.
func (s *JobStore) work() {
	defer close(s.workerDone)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.wake.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		r := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		if err := r.ctx.Err(); err != nil {
			s.finishLocked(r, JobCancelled, nil, fmt.Sprintf("context done before start: %v", context.Cause(r.ctx)))
			s.trimLocked()
			s.mu.Unlock()
			continue
		}
		ctx, cancel := context.WithCancelCause(r.ctx)
		r.Status = JobRunning
		r.startedAt = time.Now()
		r.cancel = cancel
		s.mu.Unlock()

		slog.Debug("job started", "id", r.ID, "kind", r.Kind)
		result, err := s.runJob(ctx, r)

		s.mu.Lock()
		switch {
		case err == nil:
			s.finishLocked(r, JobDone, result, "")
		case ctx.Err() != nil:
			msg := err.Error()
			if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
				msg = fmt.Sprintf("%v: %v", cause, err)
			}
			s.finishLocked(r, JobCancelled, nil, msg)
		default:
			s.finishLocked(r, JobFailed, nil, err.Error())
		}
		s.trimLocked()
		status := r.Status
		s.mu.Unlock()
		cancel(nil)
		slog.Info("job finished", "id", r.ID, "kind", r.Kind, "status", status)
	}
}

// runJob calls the job's function, turning a panic into an error.
func (s *JobStore) runJob(ctx context.Context, r *jobRecord) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("job panicked", "id", r.ID, "kind", r.Kind, "panic", v, "stack", string(debug.Stack()))
			result, err = nil, fmt.Errorf("panic: %v", v)
		}
	}()
	var finished bool // guarded by s.mu
	progress := func(msg string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if finished {
			return
		}
		r.progress = append(r.progress, msg)
		r.ProgressCount++
		// Compact only when twice over the cap: amortised O(1) per message.
		if len(r.progress) > 2*s.opts.MaxProgress {
			r.progress = append(r.progress[:0:0], r.progress[len(r.progress)-s.opts.MaxProgress:]...)
		}
	}
	defer func() {
		s.mu.Lock()
		finished = true
		s.mu.Unlock()
	}()
	if r.fn == nil {
		return nil, errors.New("job has no function")
	}
	return r.fn(ctx, progress)
}

// finishLocked puts r in a final state and wakes its waiters.
func (s *JobStore) finishLocked(r *jobRecord, status JobStatus, result any, errMsg string) {
	r.Status = status
	r.Result = result
	r.Error = errMsg
	r.endedAt = time.Now()
	r.cancel = nil
	r.fn = nil
	close(r.done)
}

// removeQueuedLocked removes r from the queue.
func (s *JobStore) removeQueuedLocked(r *jobRecord) {
	for i, q := range s.queue {
		if q == r {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return
		}
	}
}

// trimLocked drops the oldest finished jobs while the history is over its
// cap. Pending and running jobs are never dropped.
func (s *JobStore) trimLocked() {
	over := len(s.jobs) - s.opts.MaxHistory
	if over <= 0 {
		return
	}
	kept := s.jobs[:0]
	for _, r := range s.jobs {
		if over > 0 && r.Status.final() {
			delete(s.byID, r.ID)
			over--
			continue
		}
		kept = append(kept, r)
	}
	clear(s.jobs[len(kept):])
	s.jobs = kept
}

// snapshot returns a copy of the job's public state.
func (r *jobRecord) snapshot(maxProgress int) Job {
	j := r.Job
	p := r.progress
	if len(p) > maxProgress {
		p = p[len(p)-maxProgress:]
	}
	j.ProgressLog = append([]string(nil), p...)
	if len(p) > 0 {
		j.Progress = p[len(p)-1]
	}
	if !r.startedAt.IsZero() {
		t := r.startedAt
		j.StartedAt = &t
	}
	if !r.endedAt.IsZero() {
		t := r.endedAt
		j.EndedAt = &t
	}
	return j
}

// RunStreamingFlowAsJob runs flow (made with DefineProgressFlow) on input,
// forwards each streamed message to progress (nil: dropped) and returns
// the flow's output. It blocks until the flow ends; it is the work of a
// job, as in
//
//	jobs.EnqueueContext(appCtx, "crawl", func(ctx context.Context, progress func(string)) (any, error) {
//		return engine.RunStreamingFlowAsJob(ctx, crawlFlow, input, progress)
//	})
//
// A flow error is returned wrapped, naming the flow.
func RunStreamingFlowAsJob[In, Out any](ctx context.Context, flow *core.Flow[In, Out, string], input In, progress func(string)) (any, error) {
	for v, err := range flow.Stream(ctx, input) {
		if err != nil {
			return nil, fmt.Errorf("flow %s: %w", flow.Name(), err)
		}
		if v.Done {
			return v.Output, nil
		}
		if progress != nil {
			progress(v.Stream)
		}
	}
	return nil, fmt.Errorf("flow %s: stream ended without a result", flow.Name())
}
