package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Bulk ingest (docs/postgres.md, "Bulk ingest"): a write that adds many rows
// compared with those present loads the chunk table without its HNSW index
// and the other indexes only searches use, then builds them once. The
// indexes dropped are recorded in the store's row of askyourdocs_pgvec_stores
// (bulk_rebuild) in the transaction that drops them, so that a process
// killed mid-load leaves a record the next open or write acts on; while
// they are missing, searches give the same results from exact scans.

// pgvecBulkMinRows is the fewest rows a write (or a Bulk run so far) must
// add for the bulk path.
const pgvecBulkMinRows = 1000

// pgvecBulkShare is the bulk threshold relative to the rows present: the
// bulk path is taken when the rows added are at least rows present /
// pgvecBulkShare. Rebuilding HNSW over all rows costs about a fifth of
// maintaining it per added row (docs/postgres.md), so at half the present
// rows the rebuild is cheaper by a wide margin.
const pgvecBulkShare = 2

// pgvecBulkFlushRows is the number of buffered rows at which a Bulk run
// hands the sources it holds to its committing goroutine (about 40 MB of
// rows at 1,024 dimensions).
const pgvecBulkFlushRows = 5000

// pgvecBulkFlushAge is the longest a Bulk run holds a source replacement
// before the next one commits the batch: what a crash can lose.
const pgvecBulkFlushAge = 10 * time.Second

// pgvecBulkLockSalt derives the store's bulk advisory lock key: bulk runs
// hold it shared while indexes may be missing, the rebuild exclusively.
const pgvecBulkLockSalt = "\x00bulk"

// pgvecBulkStats reports what a PgvecStore.Bulk run did (for the tests and
// benchmarks; the run logs its rebuild).
type pgvecBulkStats struct {
	// Rows is the number of chunk rows the run wrote.
	Rows int
	// Sources is the number of source replacements the run committed.
	Sources int
	// Commits is the number of transactions the buffered sources took.
	Commits int
	// Bulk reports that the run loaded without the search indexes (the
	// rows added reached the threshold) and rebuilt them at the end.
	Bulk bool
	// Dropped names the indexes the run dropped and rebuilt.
	Dropped []string
	// IndexBuild is the time the rebuild of the dropped indexes took
	// (within the run's total), HNSWBuild the HNSW index's build within
	// it (the other indexes are built beside it).
	IndexBuild, HNSWBuild time.Duration
}

// pgvecBulkIndex is an index a bulk load dropped: its name and definition.
type pgvecBulkIndex struct {
	Name string `json:"name"`
	Def  string `json:"def"`
}

// pgvecBulkSource is a source replacement a Bulk run holds until its next
// commit.
type pgvecBulkSource struct {
	urls, sources []string
	keep          []string
	todo, kept    []*pgvecRow
	locks         []int64 // pgvecScopeLocks of the scope and all rows
}

// pgvecBulkRun is the state of the Bulk runs of one store in this process.
type pgvecBulkRun struct {
	mu      sync.Mutex // the buffer, the counters, commits
	refs    int
	conn    *pgxpool.Conn // holds the shared bulk lock
	present int64         // chunk rows when the run started
	added   int           // rows the run wrote or buffered so far
	dropped bool          // the run took the bulk path
	loading atomic.Bool   // dropped, for writers not holding mu
	pending []*pgvecBulkSource
	since   time.Time // when pending got its first source
	rows    int       // rows in pending
	// commits are the batches' background commits (pgstore_bulk_write.go).
	commits bulkCommits
	terms   map[string]bool
	stats   pgvecBulkStats
}

// pgvecBulkState is the PgvecStore's field for Bulk runs.
type pgvecBulkState struct {
	mu  sync.Mutex
	run *pgvecBulkRun
	// hook, when set (by tests), is called after the bulk path's steps:
	// "dropped" (indexes dropped and recorded), "committed" (a batch of
	// sources), "rebuild" (before the HNSW index's build commits), "built"
	// (every index built, before the record is cleared).
	hook func(event string)
}

// bulkEvent calls the test hook.
func (s *PgvecStore) bulkEvent(event string) {
	if s.bulk.hook != nil {
		s.bulk.hook(event)
	}
}

// bulkLockKey is the store's bulk advisory lock key.
func (s *PgvecStore) bulkLockKey() int64 { return pgvecLockKey(s.names.table + pgvecBulkLockSalt) }

// Bulk runs fn as one indexing run of many writes (the CLI's index
// command wraps its whole run in it), and hands fn the run's writer w (a
// VectorStore). Source replacements (IndexSource) and Index calls through w are
// committed in batches of up to 5,000 rows or 10 s, each batch one
// transaction holding whole sources; writes through the store itself
// meanwhile commit at once, in the run (its loading mode). The document
// frequencies are merged once at the end; once the rows added
// reach max(1000, rows present / 2), the run drops the HNSW index and the
// other search-only indexes, loads without them and rebuilds them when fn
// returns (the HNSW index beside the others, on two connections, with a
// larger maintenance_work_mem; logged with the rows and the build time).
// Blocks until then; concurrent Bulk calls share one run, which ends with
// the last. A full batch commits in the background while fn prepares the
// next sources, one batch at a time. A source replacement's error is
// returned by that call; a failed batch commit by the next replacement
// through the run (at most one) and by Bulk, which returns every failed
// commit of the run; the failed batch's sources keep their previous
// version.
// Sources not yet committed when the process dies are lost (they keep
// their previous version); the next open rebuilds missing indexes. A ctx
// already done gives its error without running fn.
func (s *PgvecStore) Bulk(ctx context.Context, fn func(VectorStore) error) error {
	_, err := s.bulkWithStats(ctx, fn)
	return err
}

// bulkWithStats is Bulk, also returning what the run did.
func (s *PgvecStore) bulkWithStats(ctx context.Context, fn func(VectorStore) error) (pgvecBulkStats, error) {
	if err := s.checkOpen("bulk"); err != nil {
		return pgvecBulkStats{}, err
	}
	if err := ctx.Err(); err != nil {
		return pgvecBulkStats{}, fmt.Errorf("pgvector bulk: %w", err)
	}
	run, err := s.joinBulk(ctx)
	if err != nil {
		return pgvecBulkStats{}, fmt.Errorf("pgvector bulk: %w", err)
	}
	fnErr := runBatch(s, fn)
	stats, endErr := s.leaveBulk(context.WithoutCancel(ctx), run)
	if endErr != nil {
		endErr = fmt.Errorf("pgvector bulk: %w", endErr)
	}
	return stats, errors.Join(fnErr, endErr)
}

// flushBulkNow commits the source replacements a Bulk run holds; outside
// a run it does nothing.
func (s *PgvecStore) flushBulkNow(ctx context.Context) error {
	s.bulk.mu.Lock()
	run := s.bulk.run
	s.bulk.mu.Unlock()
	if run == nil {
		return nil
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if err := s.flushBulk(ctx, run); err != nil {
		return fmt.Errorf("pgvector bulk: %w", err)
	}
	return nil
}

// joinBulk returns the store's Bulk run, starting one (taking the shared
// bulk lock on a connection of its own and counting the rows present).
func (s *PgvecStore) joinBulk(ctx context.Context) (*pgvecBulkRun, error) {
	s.bulk.mu.Lock()
	defer s.bulk.mu.Unlock()
	if r := s.bulk.run; r != nil {
		r.refs++
		return r, nil
	}
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire a connection: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock_shared($1)`, s.bulkLockKey()); err != nil {
		conn.Release()
		return nil, fmt.Errorf("take the bulk lock: %w", err)
	}
	r := &pgvecBulkRun{refs: 1, conn: conn, terms: map[string]bool{}}
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)).Scan(&r.present); err != nil {
		s.releaseBulkConn(r)
		return nil, fmt.Errorf("count chunks: %w", err)
	}
	s.bulk.run = r
	return r, nil
}

// releaseBulkConn releases the shared bulk lock and the run's connection.
func (s *PgvecStore) releaseBulkConn(r *pgvecBulkRun) {
	if r.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.conn.Exec(ctx, `SELECT pg_advisory_unlock_shared($1)`, s.bulkLockKey()); err != nil {
		// A connection in an unknown state must not return to the pool
		// holding the lock.
		_ = r.conn.Conn().Close(ctx)
	}
	r.conn.Release()
	r.conn = nil
}

// leaveBulk ends the caller's share of run; the last one commits what is
// buffered, merges the frequency deltas and rebuilds the dropped indexes.
func (s *PgvecStore) leaveBulk(ctx context.Context, run *pgvecBulkRun) (pgvecBulkStats, error) {
	s.bulk.mu.Lock()
	run.refs--
	last := run.refs == 0
	if last {
		s.bulk.run = nil
	}
	s.bulk.mu.Unlock()
	run.mu.Lock()
	defer run.mu.Unlock()
	if !last {
		run.commits.wait(&run.mu)
		return run.stats, run.commits.err
	}
	s.flushBulk(ctx, run) // its failures are in run.commits.err
	err := run.commits.err
	compact := func() {
		if len(run.terms) > 0 {
			terms := make([]string, 0, len(run.terms)+1)
			terms = append(terms, "")
			for t := range run.terms {
				terms = append(terms, t)
			}
			s.compactTermList(ctx, terms, run.stats.Rows*50)
		}
	}
	s.releaseBulkConn(run)
	if !run.dropped {
		compact()
	} else {
		// The frequency table is merged beside the rebuild, which does
		// not touch it.
		var merged sync.WaitGroup
		merged.Go(compact)
		start := time.Now()
		rebuilt, hnsw, rerr := s.rebuildBulkIndexes(ctx, run.stats.Rows)
		run.stats.IndexBuild, run.stats.HNSWBuild = time.Since(start), hnsw
		merged.Wait()
		if rerr != nil {
			err = errors.Join(err, rerr)
		} else if rebuilt {
			slog.Info("pgvector store: bulk load done, indexes rebuilt", "store", s.name, "rows", run.stats.Rows,
				"indexes", run.stats.Dropped, "build", run.stats.IndexBuild.Round(time.Millisecond))
		}
	}
	return run.stats, err
}

// pgvecBulkDue reports whether added rows cross the bulk threshold
// against present rows.
func pgvecBulkDue(added int, present int64) bool {
	return added >= pgvecBulkMinRows && int64(added)*pgvecBulkShare >= present
}

// pgvecBulkCandidates returns the names of the indexes a bulk load drops:
// those only searches use. The primary key, the B-trees on url, source and
// text_hash, the postings' (cid, term) index and the frequency table's
// index stay: writers need them.
func pgvecBulkCandidates(n pgvecNames) []string {
	return []string{n.hnsw, n.kw + "_rank", n.kw + "_cid", n.tsv, n.trgm}
}

// dropBulkIndexes drops the bulk candidates that exist and records them in
// the store's row of the meta table, in one transaction; the caller holds
// the shared bulk lock. It returns the names dropped.
func (s *PgvecStore) dropBulkIndexes(ctx context.Context) ([]string, error) {
	var names []string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var recorded []byte
		if err := tx.QueryRow(ctx, `SELECT bulk_rebuild FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1 FOR UPDATE`, s.name).Scan(&recorded); err != nil {
			return fmt.Errorf("read the bulk record: %w", err)
		}
		var idx []pgvecBulkIndex
		if recorded != nil {
			if err := json.Unmarshal(recorded, &idx); err != nil {
				return fmt.Errorf("read the bulk record: %w", err)
			}
		}
		rows, err := tx.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
			WHERE schemaname = current_schema() AND indexname = ANY($1)`, pgvecBulkCandidates(s.names))
		if err != nil {
			return fmt.Errorf("list indexes: %w", err)
		}
		found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgvecBulkIndex, error) {
			var x pgvecBulkIndex
			err := r.Scan(&x.Name, &x.Def)
			return x, err
		})
		if err != nil {
			return fmt.Errorf("list indexes: %w", err)
		}
		if len(found) == 0 {
			return nil
		}
		idx = append(idx, found...)
		js, err := json.Marshal(idx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET bulk_rebuild = $2 WHERE store = $1`, s.name, js); err != nil {
			return fmt.Errorf("record the bulk load: %w", err)
		}
		for _, x := range found {
			if _, err := tx.Exec(ctx, `DROP INDEX IF EXISTS `+pgvecIdent(x.Name)); err != nil {
				return fmt.Errorf("drop index %s: %w", x.Name, err)
			}
			names = append(names, x.Name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("drop indexes for a bulk load: %w", err)
	}
	return names, nil
}

// bulkLoading reports whether a Bulk run of this process has dropped the
// indexes (writes then take the bulk write path).
func (s *PgvecStore) bulkLoading() bool {
	run := s.bulkRun()
	return run != nil && run.loading.Load()
}

// bulkRun returns the store's active Bulk run, nil outside one.
func (s *PgvecStore) bulkRun() *pgvecBulkRun {
	s.bulk.mu.Lock()
	defer s.bulk.mu.Unlock()
	return s.bulk.run
}

// enterBulkPath drops the search indexes when run's rows added (plus
// adding) cross the threshold and it has not done so; run.mu is held.
func (s *PgvecStore) enterBulkPath(ctx context.Context, run *pgvecBulkRun, adding int) error {
	if run.dropped || !pgvecBulkDue(run.added+adding, run.present) {
		return nil
	}
	names, err := s.dropBulkIndexes(ctx)
	if err != nil {
		return err
	}
	run.dropped, run.stats.Bulk = true, true
	run.loading.Store(true)
	run.stats.Dropped = append(run.stats.Dropped, names...)
	s.bulkEvent("dropped")
	return nil
}

// noteTerms adds the terms of rows to run's deferred compaction.
func (run *pgvecBulkRun) noteTerms(rows []*pgvecRow) {
	for _, r := range rows {
		if r.terms == nil {
			continue
		}
		for _, t := range r.terms.terms {
			run.terms[t] = true
		}
	}
}
