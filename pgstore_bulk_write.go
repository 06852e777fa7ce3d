package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgvecBulkMaxSources is the largest number of source replacements a Bulk
// run holds before it commits them, however few rows they write.
const pgvecBulkMaxSources = 500

// addBulkSource hands a source replacement, its new rows embedded, to run:
// it is committed with the next batch. A batch is handed to the
// committing goroutine first when it holds a chunk ID src writes too (one
// statement cannot write a row twice); then src is added and the batch
// handed over once it holds pgvecBulkFlushRows rows or
// pgvecBulkMaxSources sources, or its first source is pgvecBulkFlushAge
// old. The error is that of a batch commit no replacement has returned
// yet, or of dropping the indexes.
func (s *PgvecStore) addBulkSource(ctx context.Context, run *pgvecBulkRun, src *pgvecBulkSource) error {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, p := range run.pending {
		if pgvecBulkShareIDs(p, src) {
			if err := s.startBulkCommit(ctx, run); err != nil {
				return err
			}
			break
		}
	}
	if len(run.pending) == 0 {
		run.since = time.Now()
	}
	run.pending = append(run.pending, src)
	run.rows += len(src.todo)
	run.added += len(src.todo)
	if run.rows >= pgvecBulkFlushRows || len(run.pending) >= pgvecBulkMaxSources || time.Since(run.since) >= pgvecBulkFlushAge {
		if err := s.startBulkCommit(ctx, run); err != nil {
			return err
		}
	}
	return run.commits.takeFresh()
}

// pgvecBulkShareIDs reports whether two source replacements keep a chunk ID
// in common.
func pgvecBulkShareIDs(a, b *pgvecBulkSource) bool {
	if len(a.keep) > len(b.keep) {
		a, b = b, a
	}
	if len(a.keep) == 0 {
		return false
	}
	ids := make(map[string]bool, len(a.keep))
	for _, id := range a.keep {
		ids[id] = true
	}
	for _, id := range b.keep {
		if ids[id] {
			return true
		}
	}
	return false
}

// flushBulk commits run's buffered source replacements and waits for
// that commit and the one before it; run.mu is held (and released while
// waiting). It returns the failed commits no replacement has returned.
func (s *PgvecStore) flushBulk(ctx context.Context, run *pgvecBulkRun) error {
	err := s.startBulkCommit(ctx, run)
	run.commits.wait(&run.mu)
	return errors.Join(err, run.commits.takeFresh())
}

// startBulkCommit hands run's buffered source replacements to a goroutine
// that commits them in one transaction, after the batch before has
// committed (one at a time: commits.done closed when it ends), taking the
// bulk path first when the rows added have crossed the threshold; run.mu
// is held (and released while waiting). The commit runs without the
// caller's cancellation, as the run's last batch does. A failed commit is
// remembered as fresh (returned by the next replacement) and as the
// run's error; its sources keep their previous version.
func (s *PgvecStore) startBulkCommit(ctx context.Context, run *pgvecBulkRun) error {
	run.commits.wait(&run.mu)
	if len(run.pending) == 0 {
		return nil
	}
	pending, rows := run.pending, run.rows
	run.pending, run.rows = nil, 0
	if err := s.enterBulkPath(ctx, run, 0); err != nil {
		err = fmt.Errorf("commit %d sources (%d chunks): %w", len(pending), rows, err)
		run.commits.err = errors.Join(run.commits.err, err)
		return err
	}
	done := make(chan struct{})
	run.commits.done = done
	bulk, wctx := run.dropped, context.WithoutCancel(ctx)
	go func() {
		err := s.commitBulkSources(wctx, pending, bulk)
		run.mu.Lock()
		defer run.mu.Unlock()
		defer close(done)
		run.commits.done = nil
		if err != nil {
			err = fmt.Errorf("commit %d sources (%d chunks) from %s: %w", len(pending), rows, pending[0].name(), err)
			run.commits.failed(err)
			return
		}
		run.stats.Commits++
		run.stats.Sources += len(pending)
		for _, p := range pending {
			run.stats.Rows += len(p.todo)
			run.noteTerms(p.todo)
		}
		s.bulkEvent("committed")
	}()
	return nil
}

// name names a source replacement in errors: its first URL or source.
func (src *pgvecBulkSource) name() string {
	switch {
	case len(src.urls) > 0:
		return src.urls[0]
	case len(src.sources) > 0:
		return "source " + src.sources[0]
	}
	return "an Index call"
}

// commitBulkSources writes sources in one transaction, with the effect of
// replacing them one after the other (pgvecReplaceSource's semantics):
// under the advisory locks of all their scopes, the new rows of all are
// written with one COPY, then each source's stale chunks are deleted, in
// order, sparing the chunks a later source of the batch writes or keeps
// (one DELETE of the union of what each source's delete would delete, so
// that the postings' trigger runs once). bulk says the indexes are dropped
// (writeRows).
// Chunks meant to stay unchanged that a concurrent writer removed are
// embedded and written (the transaction is retried).
func (s *PgvecStore) commitBulkSources(ctx context.Context, sources []*pgvecBulkSource, bulk bool) error {
	t := pgvecIdent(s.names.table)
	var locks []int64
	for _, src := range sources {
		locks = append(locks, src.locks...)
	}
	slices.Sort(locks)
	locks = slices.Compact(locks)
	spare := pgvecBulkSpare(sources)
	for attempt := 1; ; attempt++ {
		var todo, kept []*pgvecRow
		for _, src := range sources {
			todo = append(todo, src.todo...)
			kept = append(kept, src.kept...)
		}
		var missing map[string]bool
		err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			if err := s.lockLanguage(ctx, tx); err != nil {
				return err
			}
			gone, err := s.lockKept(ctx, tx, locks, kept)
			if err != nil || len(gone) > 0 {
				missing = make(map[string]bool, len(gone))
				for _, r := range gone {
					missing[r.id] = true
				}
				return err // nothing written: retried below
			}
			if err := s.writeRows(ctx, tx, todo, bulk); err != nil {
				return err
			}
			batch := &pgx.Batch{}
			for i, src := range sources {
				if len(src.urls) == 0 && len(src.sources) == 0 {
					continue
				}
				urls, srcs := src.urls, src.sources
				if urls == nil {
					urls = []string{}
				}
				if srcs == nil {
					srcs = []string{}
				}
				batch.Queue(`SELECT id FROM `+t+` WHERE (url = ANY($1) OR source = ANY($2)) AND id <> ALL($3)`, urls, srcs, spare[i])
			}
			var stale []string
			if batch.Len() > 0 {
				br := tx.SendBatch(ctx, batch)
				for range batch.Len() {
					rows, err := br.Query()
					if err != nil {
						br.Close()
						return fmt.Errorf("find stale chunks: %w", err)
					}
					ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
					if err != nil {
						br.Close()
						return fmt.Errorf("find stale chunks: %w", err)
					}
					stale = append(stale, ids...)
				}
				if err := br.Close(); err != nil {
					return fmt.Errorf("find stale chunks: %w", err)
				}
			}
			if len(stale) > 0 {
				if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE id = ANY($1)`, stale); err != nil {
					return fmt.Errorf("delete stale chunks: %w", err)
				}
			}
			if s.replaceHook != nil {
				return s.replaceHook(ctx)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		if attempt == pgvecReplaceAttempts {
			return fmt.Errorf("concurrent writers kept removing chunks of these sources, gave up after %d attempts", attempt)
		}
		var redo []*pgvecRow
		for _, src := range sources {
			src.kept = slices.DeleteFunc(src.kept, func(r *pgvecRow) bool {
				if missing[r.id] {
					src.todo = append(src.todo, r)
					redo = append(redo, r)
					return true
				}
				return false
			})
		}
		if err := s.fillRows(ctx, redo); err != nil {
			return err
		}
	}
}

// pgvecBulkSpare returns, per source of a batch, the chunk IDs its delete
// of stale chunks keeps: its own, and those of later sources of the batch
// that are in its scope, which replacing the sources one after the other
// would have written after that delete.
func pgvecBulkSpare(sources []*pgvecBulkSource) [][]string {
	spare := make([][]string, len(sources))
	byURL := make(map[string][]string)
	bySource := make(map[string][]string)
	for i := len(sources) - 1; i >= 0; i-- {
		src := sources[i]
		ids := slices.Clone(src.keep)
		for _, u := range src.urls {
			ids = append(ids, byURL[u]...)
		}
		for _, name := range src.sources {
			ids = append(ids, bySource[name]...)
		}
		if ids == nil {
			ids = []string{}
		}
		spare[i] = ids
		for _, rows := range [][]*pgvecRow{src.todo, src.kept} {
			for _, r := range rows {
				u, name := metaString(r.doc.Metadata, MetaURL), metaString(r.doc.Metadata, MetaSource)
				byURL[u] = append(byURL[u], r.id)
				bySource[name] = append(bySource[name], r.id)
			}
		}
	}
	return spare
}

// writeAdding runs write, which adds adding rows outside a source
// replacement's batch (Index, or a source replacement outside a Bulk run):
// inside a Bulk run after taking the bulk path when due; outside one, when
// adding crosses the threshold against the rows present, as a Bulk run of
// its own (indexes dropped, write, indexes rebuilt), else as it is, after
// rebuilding indexes an interrupted bulk load left dropped. rows are the
// rows written, whose document frequencies a Bulk run merges at its end;
// deferred reports that it will.
func (s *PgvecStore) writeAdding(ctx context.Context, rows []*pgvecRow, write func() error) (deferred bool, err error) {
	if run := s.bulkRun(); run != nil {
		run.mu.Lock()
		defer run.mu.Unlock()
		if err := s.enterBulkPath(ctx, run, len(rows)); err != nil {
			return false, err
		}
		if err := write(); err != nil {
			return false, err
		}
		run.added += len(rows)
		run.stats.Rows += len(rows)
		run.noteTerms(rows)
		return true, nil
	}
	if err := s.recoverBulk(ctx); err != nil {
		return false, err
	}
	if len(rows) < pgvecBulkMinRows {
		return false, write()
	}
	var present int64
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)).Scan(&present); err != nil {
		return false, fmt.Errorf("count chunks: %w", err)
	}
	if !pgvecBulkDue(len(rows), present) {
		return false, write()
	}
	err = s.Bulk(ctx, func(VectorStore) error {
		_, err := s.writeAdding(ctx, rows, write)
		return err
	})
	return true, err
}
