package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Outcomes a worker records in askyourdocs_job before River finalises the
// job (River only ever sees success, cancellation or a shutdown).
const (
	outcomeDone      = "done"
	outcomeFailed    = "failed"
	outcomeCancelled = "cancelled"
)

// work runs one attempt of a job.
func (s *durableJobStore) work(ctx context.Context, job *river.Job[durableArgs]) error {
	id := job.ID
	st, err := s.db.state(ctx, id, 1)
	if err != nil {
		return fmt.Errorf("job %d: read state: %w", id, err)
	}
	if st.outcome != "" {
		// Finished before its process died, which then could not tell
		// River: nothing to run again.
		return nil
	}
	s.mu.Lock()
	fn := s.kinds[job.Args.JobKind]
	s.mu.Unlock()
	if fn == nil {
		return s.finish(ctx, id, outcomeFailed, nil,
			fmt.Sprintf("no handler for job kind %q in process %s", job.Args.JobKind, s.opts.ID))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	s.local[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.local, id)
		s.mu.Unlock()
	}()

	pr := &durableProgress{s: s, id: id, n: st.count}
	if job.Attempt > 1 {
		reason := "the previous run ended"
		if n := len(job.Errors); n > 0 {
			reason = job.Errors[n-1].Error
		}
		pr.report(fmt.Sprintf("attempt %d of %d (%s)", job.Attempt, job.MaxAttempts, reason))
	}
	s.opts.Logger.Debug("job started", "id", id, "kind", job.Args.JobKind, "attempt", job.Attempt)
	result, runErr := callJobInput(ctx, fn, job.Args.Input, pr.report)
	pr.stop()

	cause := context.Cause(ctx)
	switch {
	case runErr == nil:
		raw, err := json.Marshal(result)
		if err != nil {
			return s.finish(ctx, id, outcomeFailed, nil, fmt.Sprintf("encode result: %v", err))
		}
		return s.finish(ctx, id, outcomeDone, raw, "")
	case ctx.Err() != nil && (errors.Is(cause, ErrJobCancelled) || errors.Is(cause, rivertype.ErrJobCancelledRemotely)):
		msg := runErr.Error()
		if !errors.Is(runErr, ErrJobCancelled) {
			msg = fmt.Sprintf("%v: %v", ErrJobCancelled, runErr)
		}
		if err := s.finish(ctx, id, outcomeCancelled, nil, msg); err != nil {
			return err
		}
		return river.JobCancel(runErr)
	case ctx.Err() != nil:
		// The store is closing: River puts the job back for another run.
		// Wrapping ctx.Err() makes it River's soft stop: no attempt counted.
		return fmt.Errorf("job %d interrupted (%v): %w", id, runErr, ctx.Err())
	default:
		return s.finish(ctx, id, outcomeFailed, nil, runErr.Error())
	}
}

// finish records a job's outcome. A failure to record it is returned to
// River, which runs the job again.
func (s *durableJobStore) finish(ctx context.Context, id int64, outcome string, result json.RawMessage, msg string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), durableOpTimeout)
	defer cancel()
	if err := s.db.finish(ctx, id, outcome, result, msg); err != nil {
		return fmt.Errorf("job %d: record outcome %s: %w", id, outcome, err)
	}
	s.opts.Logger.Info("job finished", "id", id, "status", outcome)
	return nil
}

// callJobInput calls fn, turning a panic into an error.
func callJobInput(ctx context.Context, fn jobInputFunc, input json.RawMessage, progress func(string)) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			result, err = nil, fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return fn(ctx, input, progress)
}

// durableProgress stores a running job's progress messages.
type durableProgress struct {
	s  *durableJobStore
	id int64

	mu      sync.Mutex
	n       int // messages stored so far, over all attempts
	stopped bool
}

// report stores one message; calls after stop are ignored, and a failed
// write is logged (progress is advisory, the job goes on).
func (p *durableProgress) report(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.n++
	ctx, cancel := context.WithTimeout(p.s.base, durableOpTimeout)
	defer cancel()
	if err := p.s.db.progress(ctx, p.id, p.n, msg, p.s.opts.MaxProgress); err != nil {
		p.s.opts.Logger.Warn("job store: progress", "id", p.id, "err", err)
	}
}

func (p *durableProgress) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

// snapshot builds the Job of a River row and the store's own state.
func (s *durableJobStore) snapshot(row *rivertype.JobRow, st jobState) Job {
	var args durableArgs
	_ = json.Unmarshal(row.EncodedArgs, &args) // a foreign row just has no kind
	j := Job{
		ID:            fmt.Sprint(row.ID),
		Kind:          args.JobKind,
		ProgressLog:   st.log,
		ProgressCount: st.count,
		CreatedAt:     row.CreatedAt,
	}
	if n := len(st.log); n > 0 {
		j.Progress = st.log[n-1]
	}
	lastErr := ""
	if n := len(row.Errors); n > 0 {
		lastErr = row.Errors[n-1].Error
	}
	switch row.State {
	case rivertype.JobStateRunning:
		j.Status = JobRunning
	case rivertype.JobStateCompleted:
		j.Status, j.Error = JobDone, st.msg
		if st.outcome == outcomeFailed {
			j.Status = JobFailed
		} else if st.outcome == outcomeCancelled {
			j.Status = JobCancelled
		}
		if j.Status == JobDone && len(st.result) > 0 {
			j.Result = json.RawMessage(st.result)
		}
	case rivertype.JobStateDiscarded:
		j.Status, j.Error = JobFailed, st.msg
		if j.Error == "" {
			j.Error = lastErr
		}
	case rivertype.JobStateCancelled:
		j.Status, j.Error = JobCancelled, st.msg
		if j.Error == "" {
			j.Error = ErrJobCancelled.Error()
		}
	default: // available, scheduled, retryable, pending
		j.Status, j.Error = JobPending, lastErr
	}
	if row.AttemptedAt != nil {
		t := *row.AttemptedAt
		j.StartedAt = &t
	}
	if row.FinalizedAt != nil {
		t := *row.FinalizedAt
		j.EndedAt = &t
	}
	if j.StartedAt != nil && j.Status == JobPending {
		j.StartedAt = nil // an earlier attempt's start
	}
	return j
}
