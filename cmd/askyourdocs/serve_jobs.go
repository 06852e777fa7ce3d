package main

import (
	"context"
	"fmt"
	"path/filepath"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// serveJobs is serve's job store: the engine's DurableJobStore on River,
// shared by every serve process on one database.
type serveJobs interface {
	askyourdocs.JobQueue
	Start() error
	Close() error
}

// jobsFile is the SQLite file of serve's jobs under --data (without --pg):
// a file of its own, since River polls it and an index write would hold
// it for the length of a batch.
const jobsFile = "jobs.sqlite"

// openServeJobs opens the job store: on the PostgreSQL database of pgDSN
// (--pg), so that every process serving that index shares one queue, or
// else on dataDir/jobs.sqlite.
func openServeJobs(ctx context.Context, opts serveOptions) (serveJobs, error) {
	var jo *askyourdocs.DurableJobStoreOptions
	if d := opts.jobDeadAfter; d > 0 {
		jo = &askyourdocs.DurableJobStoreOptions{DeadAfter: d, Heartbeat: d / 5}
	}
	if opts.pgDSN != "" {
		s, err := askyourdocs.OpenDurableJobStorePG(ctx, opts.pgDSN, jo)
		if err != nil {
			return nil, fmt.Errorf("serve: jobs: %w", err)
		}
		return s, nil
	}
	s, err := askyourdocs.OpenDurableJobStoreSQLite(ctx, filepath.Join(opts.dataDir, jobsFile), jo)
	if err != nil {
		return nil, fmt.Errorf("serve: jobs: %w", err)
	}
	return s, nil
}

// handleJobKinds registers the work of serve's own job kinds: "index"
// (uploaded files, pages) and "crawl" both run the index flow on an
// indexInput. The eval kinds are registered by their routes.
func (s *server) handleJobKinds() {
	askyourdocs.HandleFlowJobs(s.jobs, "index", s.indexFlow)
	askyourdocs.HandleFlowJobs(s.jobs, "crawl", s.indexFlow)
}
