package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
	"github.com/firebase/genkit/go/core"
)

// serveJobs is serve's job store: the engine's DurableJobStore on River,
// shared by every serve process on one database.
type serveJobs = askyourdocs.DurableJobStore

// jobsFile is the SQLite file of serve's jobs under --data (without --pg):
// a file of its own, since River polls it and an index write would hold
// it for the length of a batch.
const jobsFile = "jobs.sqlite"

// openServeJobs opens the job store: on the PostgreSQL database of pgDSN
// (--pg), so that every process serving that index shares one queue, or
// else on dataDir/jobs.sqlite.
func openServeJobs(ctx context.Context, opts serveOptions) (serveJobs, error) {
	jo := &askyourdocs.DurableJobStoreOptions{Namespace: opts.jobNamespace}
	if d := opts.jobDeadAfter; d > 0 {
		jo.DeadAfter, jo.Heartbeat = d, d/5
	}
	if opts.pgDSN != "" {
		s, err := askyourdocs.NewDurableJobStorePg(ctx, opts.pgDSN, jo)
		if err != nil {
			return nil, fmt.Errorf("serve: jobs: %w", err)
		}
		return s, nil
	}
	s, err := askyourdocs.NewDurableJobStoreSQLite(ctx, filepath.Join(opts.dataDir, jobsFile), jo)
	if err != nil {
		return nil, fmt.Errorf("serve: jobs: %w", err)
	}
	return s, nil
}

// handleJobKinds registers the work of serve's own job kinds: "index"
// (uploaded files, pages) and "crawl" both run the index flow on an
// indexInput. The eval kinds are registered by their routes.
func (s *server) handleJobKinds() {
	handleFlowJobs(s.jobs, "index", s.indexFlow)
	handleFlowJobs(s.jobs, "crawl", s.indexFlow)
}

// handleFlowJobs registers flow (made with DefineProgressFlow) as the work
// of jobs of kind on jobs: a job's input is decoded into an In and run
// with RunStreamingFlowAsJob, its messages becoming the job's progress.
// Enqueue such jobs with runFlowAsJob.
func handleFlowJobs[In, Out any](jobs askyourdocs.JobQueue, kind string, flow *core.Flow[In, Out, string]) {
	jobs.HandleKind(kind, func(ctx context.Context, raw json.RawMessage, progress func(string)) (any, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("decode %s job input: %w", kind, err)
		}
		return askyourdocs.RunStreamingFlowAsJob(ctx, flow, in, progress)
	})
}

// jobNamespace returns the job namespace of the index called name: its
// lower-case letters and digits, other runs of characters as '-', and a
// hash of name when that changed it or it is long, so that two names never
// share one.
func jobNamespace(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	ns := b.String()
	if len(ns) > 40 {
		ns = strings.TrimRight(ns[:40], "-")
	}
	if ns != name || ns == "" {
		sum := sha256.Sum256([]byte(name))
		if ns != "" {
			ns += "-"
		}
		ns += hex.EncodeToString(sum[:4])
	}
	return ns
}
