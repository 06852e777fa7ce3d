package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The rebuild of the indexes a bulk load dropped (docs/postgres.md, "Bulk
// ingest"): the HNSW index on one connection and the others, one after
// the other, on a second at the same time, each index in a transaction of
// its own; the bulk record is cleared once all exist.

// pgvecBulkMaxMaintenanceKB is the largest maintenance_work_mem (in kB) the
// HNSW build asks for.
const pgvecBulkMaxMaintenanceKB = 1 << 20 // 1 GB

// pgvecBulkOtherMaintenanceKB is the largest maintenance_work_mem (in kB)
// the other builds ask for, which run beside the HNSW build.
const pgvecBulkOtherMaintenanceKB = 256 << 10 // 256 MB

// pgvecBulkMaintenanceWorkers is the max_parallel_maintenance_workers of
// each build: none, the two builds side by side already keep two cores
// busy (a client cannot see the server's cores; on 2 cores 1 or 4 workers
// per build made the rebuild slower, docs/postgres.md).
const pgvecBulkMaintenanceWorkers = 0

// pgvecBulkBuild is one connection's share of a rebuild: indexes built one
// after the other with the given settings.
type pgvecBulkBuild struct {
	idx       []pgvecBulkIndex
	memoryKB  int64
	workers   int
	durations map[string]time.Duration
}

// rebuildBulkIndexes rebuilds the indexes recorded in the store's bulk
// record, when no bulk run holds the bulk lock (else that run rebuilds
// them when it ends), and then clears the record. The HNSW index and the
// others are built at the same time on two connections, each index
// committed on its own; a process killed meanwhile leaves the record,
// and the next rebuild builds what is missing. rows (0: counted) sizes
// maintenance_work_mem. It reports whether it rebuilt and the time the
// HNSW index took.
func (s *PgvecStore) rebuildBulkIndexes(ctx context.Context, rows int) (rebuilt bool, hnsw time.Duration, err error) {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return false, 0, fmt.Errorf("rebuild indexes: acquire a connection: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, s.bulkLockKey()).Scan(&got); err != nil {
		return false, 0, fmt.Errorf("rebuild indexes: take the bulk lock: %w", err)
	}
	if !got {
		return false, 0, nil // another bulk run holds it and rebuilds at its end
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, s.bulkLockKey()); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	// The record is read outside the builds' transactions (the exclusive
	// bulk lock keeps droppers out meanwhile): a transaction that has read
	// the meta table would block every store's start-up, whose schema
	// transaction alters that table, for the whole build.
	var recorded []byte
	if err := conn.QueryRow(ctx, `SELECT bulk_rebuild FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&recorded); err != nil {
		return false, 0, fmt.Errorf("rebuild indexes: read the bulk record: %w", err)
	}
	if recorded == nil {
		return false, 0, nil
	}
	var idx []pgvecBulkIndex
	if err := json.Unmarshal(recorded, &idx); err != nil {
		return false, 0, fmt.Errorf("rebuild indexes: read the bulk record: %w", err)
	}
	if rows <= 0 {
		var n int64
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)).Scan(&n); err != nil {
			return false, 0, fmt.Errorf("rebuild indexes: count chunks: %w", err)
		}
		rows = int(n)
	}
	// The HNSW graph of all rows should fit into maintenance_work_mem
	// (pgvector builds much slower once it does not): vector, neighbour
	// lists and overhead, with room.
	needKB := int64(rows) * int64(s.dim*4+600) * 3 / 2 / 1024
	graph := &pgvecBulkBuild{memoryKB: min(needKB, pgvecBulkMaxMaintenanceKB), workers: pgvecBulkMaintenanceWorkers}
	rest := &pgvecBulkBuild{memoryKB: min(needKB, pgvecBulkOtherMaintenanceKB), workers: pgvecBulkMaintenanceWorkers}
	for _, x := range idx {
		if x.Name == s.names.hnsw {
			graph.idx = append(graph.idx, x)
		} else {
			rest.idx = append(rest.idx, x)
		}
	}
	if err := s.buildBulkIndexes(ctx, conn.Conn(), graph, rest); err != nil {
		return false, 0, fmt.Errorf("rebuild indexes after a bulk load: %w", err)
	}
	s.bulkEvent("built")
	if _, err := conn.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET bulk_rebuild = NULL WHERE store = $1`, s.name); err != nil {
		return false, 0, fmt.Errorf("rebuild indexes: clear the bulk record: %w", err)
	}
	for _, t := range []string{s.names.table, s.names.kw, s.names.kwDF} {
		if _, err := conn.Exec(ctx, `ANALYZE `+pgvecIdent(t)); err != nil {
			slog.Warn("pgvector store: ANALYZE after a bulk load failed", "store", s.name, "table", t, "err", err)
		}
	}
	return true, graph.durations[s.names.hnsw], nil
}

// buildBulkIndexes runs the builds at the same time: the first non-empty
// one on conn, in the calling goroutine (it calls the "rebuild" test
// event before its last index commits), each other on a connection of the
// pool. The first error cancels the others and is returned. Blocks until
// all have ended.
func (s *PgvecStore) buildBulkIndexes(ctx context.Context, conn *pgx.Conn, builds ...*pgvecBulkBuild) error {
	var todo []*pgvecBulkBuild
	for _, b := range builds {
		if len(b.idx) > 0 {
			todo = append(todo, b)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, b := range todo[1:] {
		wg.Go(func() {
			c, err := s.Pool.Acquire(ctx)
			if err != nil {
				cancel(fmt.Errorf("acquire a connection: %w", err))
				return
			}
			defer c.Release()
			if err := s.buildBulkGroup(ctx, c.Conn(), b, false); err != nil {
				cancel(err)
			}
		})
	}
	if err := s.buildBulkGroup(ctx, conn, todo[0], true); err != nil {
		cancel(err)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// buildBulkGroup builds b's indexes that do not exist on conn, one
// transaction each with b's maintenance_work_mem (never below the
// server's) and parallel workers (set_config local to it), and
// records their build times in b. event calls the "rebuild" test event
// before the last one commits.
func (s *PgvecStore) buildBulkGroup(ctx context.Context, conn *pgx.Conn, b *pgvecBulkBuild, event bool) error {
	b.durations = make(map[string]time.Duration, len(b.idx))
	for i, x := range b.idx {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgvecIdent(x.Name)).Scan(&exists); err != nil {
				return fmt.Errorf("look for index %s: %w", x.Name, err)
			}
			if !exists {
				if _, err := tx.Exec(ctx, `SELECT set_config('maintenance_work_mem', GREATEST(setting::bigint, $1::bigint)::text || 'kB', true)
					FROM pg_settings WHERE name = 'maintenance_work_mem'`, b.memoryKB); err != nil {
					return fmt.Errorf("raise maintenance_work_mem: %w", err)
				}
				if _, err := tx.Exec(ctx, `SELECT set_config('max_parallel_maintenance_workers', $1::int::text, true)`, b.workers); err != nil {
					return fmt.Errorf("set max_parallel_maintenance_workers: %w", err)
				}
				start := time.Now()
				if _, err := tx.Exec(ctx, x.Def); err != nil {
					return fmt.Errorf("build index %s: %w", x.Name, err)
				}
				b.durations[x.Name] = time.Since(start)
			}
			if event && i == len(b.idx)-1 {
				s.bulkEvent("rebuild")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// recoverBulk rebuilds the indexes a bulk load left dropped when no bulk
// run is active (its process died): NewPgvecStore and writes outside a
// Bulk run call it. Searches are exact scans until then.
func (s *PgvecStore) recoverBulk(ctx context.Context) error {
	var pending bool
	if err := s.Pool.QueryRow(ctx, `SELECT bulk_rebuild IS NOT NULL FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&pending); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return fmt.Errorf("read the bulk record: %w", err)
	}
	if !pending {
		return nil
	}
	start := time.Now()
	rebuilt, _, err := s.rebuildBulkIndexes(ctx, 0)
	if err != nil {
		return err
	}
	if rebuilt {
		slog.Warn("pgvector store: rebuilt the indexes an interrupted bulk load had dropped", "store", s.name,
			"took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
