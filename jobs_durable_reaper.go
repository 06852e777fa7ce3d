package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// durableSweepEvery is how many heartbeats pass between sweeps of the
// rows of jobs River deleted.
const durableSweepEvery = 150

// beatLoop records this process's heartbeat and hands the running jobs of
// silent processes back to the queue, every Heartbeat, until Close.
func (s *durableJobStore) beatLoop() {
	defer close(s.beatDone)
	t := time.NewTicker(s.opts.Heartbeat)
	defer t.Stop()
	for i := 1; ; i++ {
		ctx, cancel := context.WithTimeout(s.base, durableOpTimeout)
		if err := s.db.beat(ctx, s.opts.ID); err != nil && s.base.Err() == nil {
			s.opts.Logger.Warn("job store: heartbeat", "err", err)
		}
		if err := s.reap(ctx); err != nil && s.base.Err() == nil {
			s.opts.Logger.Warn("job store: rescue abandoned jobs", "err", err)
		}
		if i%durableSweepEvery == 0 {
			if err := s.db.sweep(ctx); err != nil && s.base.Err() == nil {
				s.opts.Logger.Warn("job store: sweep", "err", err)
			}
		}
		cancel()
		select {
		case <-s.base.Done():
			return
		case <-t.C:
		}
	}
}

// reap finds the store's running jobs whose process has not beaten its
// heart for DeadAfter and, as River's rescuer does, makes each available
// again (with the reason in its errors) or, after its last attempt,
// discards it: it is then failed with that reason.
func (s *durableJobStore) reap(ctx context.Context) error {
	horizon := time.Now()
	running, err := s.exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{Max: 1000, StuckHorizon: horizon})
	if err != nil {
		return fmt.Errorf("list running jobs: %w", err)
	}
	if len(running) == 0 {
		return nil
	}
	alive, err := s.db.alive(ctx, s.opts.DeadAfter.Milliseconds())
	if err != nil {
		return fmt.Errorf("read heartbeats: %w", err)
	}
	p := &riverdriver.JobRescueManyParams{StuckHorizon: horizon}
	var failed []int64
	var reasons []string
	for _, job := range running {
		if job.Kind != durableRiverKind || len(job.AttemptedBy) == 0 {
			continue
		}
		owner := job.AttemptedBy[len(job.AttemptedBy)-1]
		if alive[owner] {
			continue
		}
		now := time.Now()
		reason := fmt.Sprintf("process %s running attempt %d stopped (no heartbeat for %s)", owner, job.Attempt, s.opts.DeadAfter)
		state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
		if job.Attempt >= job.MaxAttempts {
			reason += fmt.Sprintf("; no attempts left of %d", job.MaxAttempts)
			state, finalized = rivertype.JobStateDiscarded, &now
			failed = append(failed, job.ID)
			reasons = append(reasons, reason)
		}
		e, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: job.Attempt, Error: reason})
		if err != nil {
			return err
		}
		p.ID = append(p.ID, job.ID)
		p.Error = append(p.Error, e)
		p.FinalizedAt = append(p.FinalizedAt, finalized)
		p.ScheduledAt = append(p.ScheduledAt, now)
		p.State = append(p.State, string(state))
		s.opts.Logger.Warn("job store: job abandoned by its process", "id", job.ID, "owner", owner, "state", state)
	}
	if len(p.ID) == 0 {
		return nil
	}
	if _, err := s.exec.JobRescueMany(ctx, p); err != nil {
		return fmt.Errorf("rescue %d jobs: %w", len(p.ID), err)
	}
	for i, id := range failed {
		if err := s.db.finish(ctx, id, outcomeFailed, nil, reasons[i]); err != nil {
			return fmt.Errorf("record job %d failed: %w", id, err)
		}
	}
	return nil
}
