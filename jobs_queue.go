package engine

import (
	"context"
	"encoding/json"
	"fmt"
)

// jobInputFunc is the work of one job kind, as HandleKind takes it.
type jobInputFunc = func(ctx context.Context, input json.RawMessage, progress func(string)) (any, error)

// JobQueue is what the in-memory JobStore and the durable DurableJobStore
// both offer, and what JobStatusHandler and EvalJobHandler accept: jobs of
// a registered kind enqueued with a JSON-encodable input, their status,
// progress and result, the history and cancellation.
//
// HandleKind registers (or replaces) the function jobs of kind run, the
// work of one job kind: fn runs on the input the job was enqueued with, as
// JSON, and reports progress as EnqueueContext's fn does. A durable store may run it
// in another process than the one that enqueued the job, and again after
// a crash, so it should be idempotent. EnqueueInput records a pending job of kind with input (encoded as JSON
// at once); it fails with ErrJobKindUnknown for an unregistered kind,
// ErrJobQueueFull when too many jobs wait and ErrJobStoreClosed after
// Close. For a JobStore, ctx is the job's context, as in EnqueueContext;
// for a DurableJobStore it only bounds the insert. Get, List, Wait and
// Cancel behave as JobStore's. All methods are safe for concurrent use.
type JobQueue interface {
	HandleKind(kind string, fn func(ctx context.Context, input json.RawMessage, progress func(string)) (any, error))
	EnqueueInput(ctx context.Context, kind string, input any) (*Job, error)
	Get(id string) (Job, bool)
	List(limit int) []Job
	Wait(ctx context.Context, id string) (Job, error)
	Cancel(id string) error
}

var (
	_ JobQueue = (*JobStore)(nil)
	_ JobQueue = (*durableJobStore)(nil)
)

// HandleKind registers fn as the work of jobs of kind enqueued with
// EnqueueInput, replacing an earlier registration (JobQueue says what fn
// does).
func (s *JobStore) HandleKind(kind string, fn func(ctx context.Context, input json.RawMessage, progress func(string)) (any, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds == nil {
		s.kinds = make(map[string]jobInputFunc)
	}
	s.kinds[kind] = fn
}

// EnqueueInput enqueues a job of kind that runs the function HandleKind
// registered for it on input, encoded as JSON now (so later changes to
// input do not reach the job). The job runs with a context derived from
// ctx, as EnqueueContext's; the errors are EnqueueContext's, plus
// ErrJobKindUnknown and a failed encoding.
func (s *JobStore) EnqueueInput(ctx context.Context, kind string, input any) (*Job, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("enqueue %s job: encode input: %w", kind, err)
	}
	s.mu.Lock()
	fn := s.kinds[kind]
	s.mu.Unlock()
	if fn == nil {
		return nil, fmt.Errorf("enqueue %s job: %w", kind, ErrJobKindUnknown)
	}
	return s.EnqueueContext(ctx, kind, func(ctx context.Context, progress func(string)) (any, error) {
		return fn(ctx, raw, progress)
	})
}
