package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// jobDB is the store's own SQL beside River's tables, on PostgreSQL (pg)
// or SQLite (lite): the outcome and result of each job, its progress
// messages, and the processes' heartbeats. Queries are written with ?
// placeholders and {now} for the database's clock in milliseconds.
type jobDB struct {
	pg   *pgxpool.Pool
	lite *sql.DB
}

// jobState is the store's part of a job's state.
type jobState struct {
	outcome string
	result  []byte
	msg     string
	count   int
	log     []string
}

// durableSchemaSQL creates the store's tables (both dialects).
var durableSchemaSQL = []string{
	`CREATE TABLE IF NOT EXISTS askyourdocs_job (
		id BIGINT PRIMARY KEY,
		outcome TEXT NOT NULL DEFAULT '',
		result TEXT,
		error TEXT NOT NULL DEFAULT '',
		progress_count INTEGER NOT NULL DEFAULT 0)`,
	`CREATE TABLE IF NOT EXISTS askyourdocs_job_progress (
		job_id BIGINT NOT NULL,
		n INTEGER NOT NULL,
		msg TEXT NOT NULL,
		PRIMARY KEY (job_id, n))`,
	`CREATE TABLE IF NOT EXISTS askyourdocs_job_instance (
		id TEXT PRIMARY KEY,
		seen_ms BIGINT NOT NULL)`,
}

// sql returns q in the dialect.
func (d *jobDB) sql(q string) string {
	if d.pg != nil {
		q = strings.ReplaceAll(q, "{now}", "(extract(epoch from clock_timestamp())*1000)::bigint")
		var b strings.Builder
		n := 0
		for _, r := range q {
			if r == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	return strings.ReplaceAll(q, "{now}", "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)")
}

func (d *jobDB) exec(ctx context.Context, q string, args ...any) error {
	if d.pg != nil {
		_, err := d.pg.Exec(ctx, d.sql(q), args...)
		return err
	}
	_, err := d.lite.ExecContext(ctx, d.sql(q), args...)
	return err
}

// query calls each for every row, with the row's Scan.
func (d *jobDB) query(ctx context.Context, q string, each func(scan func(dest ...any) error) error, args ...any) error {
	if d.pg != nil {
		rows, err := d.pg.Query(ctx, d.sql(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows.Scan); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	rows, err := d.lite.QueryContext(ctx, d.sql(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// createTables creates the store's tables.
func (d *jobDB) createTables(ctx context.Context) error {
	for _, q := range durableSchemaSQL {
		if err := d.exec(ctx, q); err != nil {
			return fmt.Errorf("create job tables: %w", err)
		}
	}
	return nil
}

// state reads a job's outcome and its newest maxLog progress messages.
func (d *jobDB) state(ctx context.Context, id int64, maxLog int) (jobState, error) {
	var st jobState
	var result sql.NullString
	err := d.query(ctx, `SELECT outcome, result, error, progress_count FROM askyourdocs_job WHERE id = ?`,
		func(scan func(...any) error) error { return scan(&st.outcome, &result, &st.msg, &st.count) }, id)
	if err != nil {
		return st, fmt.Errorf("read job state: %w", err)
	}
	if result.Valid {
		st.result = []byte(result.String)
	}
	if st.count == 0 {
		return st, nil
	}
	err = d.query(ctx, `SELECT msg FROM askyourdocs_job_progress WHERE job_id = ? AND n > ? ORDER BY n`,
		func(scan func(...any) error) error {
			var m string
			if err := scan(&m); err != nil {
				return err
			}
			st.log = append(st.log, m)
			return nil
		}, id, st.count-maxLog)
	if err != nil {
		return st, fmt.Errorf("read job progress: %w", err)
	}
	return st, nil
}

// progress stores message n of a job and drops those past the cap.
func (d *jobDB) progress(ctx context.Context, id int64, n int, msg string, maxLog int) error {
	if err := d.exec(ctx, `INSERT INTO askyourdocs_job_progress (job_id, n, msg) VALUES (?, ?, ?)
		ON CONFLICT (job_id, n) DO UPDATE SET msg = excluded.msg`, id, n, msg); err != nil {
		return err
	}
	if err := d.exec(ctx, `INSERT INTO askyourdocs_job (id, progress_count) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET progress_count = excluded.progress_count`, id, n); err != nil {
		return err
	}
	if n%maxLog == 0 {
		return d.exec(ctx, `DELETE FROM askyourdocs_job_progress WHERE job_id = ? AND n <= ?`, id, n-maxLog)
	}
	return nil
}

// finish records a job's outcome, unless one is recorded: a process
// thought dead that finishes late does not overwrite a later run's.
func (d *jobDB) finish(ctx context.Context, id int64, outcome string, result json.RawMessage, msg string) error {
	var res any
	if result != nil {
		res = string(result)
	}
	return d.exec(ctx, `INSERT INTO askyourdocs_job (id, outcome, result, error) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET outcome = excluded.outcome, result = excluded.result, error = excluded.error
		WHERE askyourdocs_job.outcome = ''`,
		id, outcome, res, msg)
}

// pending counts the store's jobs waiting to run in queues.
func (d *jobDB) pending(ctx context.Context, queues []string) (int, error) {
	var n int
	args := []any{durableRiverKind}
	for _, q := range queues {
		args = append(args, q)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(queues)), ", ")
	err := d.query(ctx, `SELECT count(*) FROM river_job WHERE kind = ? AND queue IN (`+marks+`)
		AND state IN ('available', 'pending', 'retryable', 'scheduled')`,
		func(scan func(...any) error) error { return scan(&n) }, args...)
	return n, err
}

// beat records that process id is alive.
func (d *jobDB) beat(ctx context.Context, id string) error {
	return d.exec(ctx, `INSERT INTO askyourdocs_job_instance (id, seen_ms) VALUES (?, {now})
		ON CONFLICT (id) DO UPDATE SET seen_ms = excluded.seen_ms`, id)
}

// forget removes process id's heartbeat (it stopped cleanly).
func (d *jobDB) forget(ctx context.Context, id string) error {
	return d.exec(ctx, `DELETE FROM askyourdocs_job_instance WHERE id = ?`, id)
}

// alive returns the processes heard from within the last deadMS
// milliseconds, and drops the rows of those silent for a day.
func (d *jobDB) alive(ctx context.Context, deadMS int64) (map[string]bool, error) {
	if err := d.exec(ctx, `DELETE FROM askyourdocs_job_instance WHERE seen_ms < {now} - 86400000`); err != nil {
		return nil, err
	}
	out := make(map[string]bool)
	err := d.query(ctx, `SELECT id FROM askyourdocs_job_instance WHERE seen_ms >= {now} - ?`,
		func(scan func(...any) error) error {
			var id string
			if err := scan(&id); err != nil {
				return err
			}
			out[id] = true
			return nil
		}, deadMS)
	return out, err
}

// sweep deletes the store's rows of jobs River has deleted.
func (d *jobDB) sweep(ctx context.Context) error {
	if err := d.exec(ctx, `DELETE FROM askyourdocs_job WHERE id NOT IN (SELECT id FROM river_job)`); err != nil {
		return err
	}
	return d.exec(ctx, `DELETE FROM askyourdocs_job_progress WHERE job_id NOT IN (SELECT id FROM river_job)`)
}

// pgMigrateLock serialises the migrations of processes starting at once
// on one PostgreSQL database (a transaction-scoped advisory lock).
func pgMigrateLock(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('askyourdocs_job_migrate'))`)
	return err
}

// errDurableOpen wraps the errors of the Open functions.
var errDurableOpen = errors.New("open durable job store")
