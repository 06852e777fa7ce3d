package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Login failures shared by every serve process on one database: with
// --pg in the table askyourdocs_serve_logins (beside the session secret's
// table), else in <data>/serve-logins.sqlite, which every process on the
// same --data directory opens. A key is "client:<address>" or
// "account:<user>"; a row holds the consecutive failures and the end of
// the lockout they earned, so a lockout begun on one process holds on all
// of them and survives a restart. The per-process token buckets stay in
// memory: they only smooth bursts below the lockout thresholds.

// pgLoginTable is the PostgreSQL table of the shared login failures.
const pgLoginTable = "askyourdocs_serve_logins"

// loginFile is the SQLite file of the shared login failures (without --pg).
const loginFile = "serve-logins.sqlite"

// loginPruneEvery is how many recorded failures pass between two
// deletions of idle rows (idle for loginIdle, lockout over).
const loginPruneEvery = 256

// loginShared is where the login failures of all serve processes of one
// database are kept. Safe for concurrent use.
type loginShared interface {
	// state returns key's consecutive failures and lockout end (zero
	// values when it has none).
	state(ctx context.Context, key string) (int, time.Time, error)
	// fail counts one more failure of key at now and stores the lockout
	// end lockout(n) gives for the new count n; it returns n and that end.
	fail(ctx context.Context, key string, now time.Time, lockout func(int) time.Time) (int, time.Time, error)
	// clear forgets key's failures (a successful login).
	clear(ctx context.Context, key string) error
	// prune deletes the rows idle since before and no longer locked.
	prune(ctx context.Context, before time.Time) error
	Close() error
}

// openLoginShared opens the shared login table of b's database: the
// PostgreSQL pool of a --pg backend, else the SQLite file in dataDir.
func openLoginShared(ctx context.Context, b *backend, dataDir string) (loginShared, error) {
	if pg, ok := b.store.(*pgStore); ok {
		return openPGLogins(ctx, pg.Pool)
	}
	return openSQLiteLogins(ctx, filepath.Join(dataDir, loginFile))
}

// pgLogins is loginShared on PostgreSQL.
type pgLogins struct{ pool *pgxpool.Pool }

func openPGLogins(ctx context.Context, pool *pgxpool.Pool) (*pgLogins, error) {
	// Under an advisory lock: processes starting at once would race on
	// CREATE TABLE IF NOT EXISTS.
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('"+pgLoginTable+"'))"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+pgLoginTable+
			" (key text PRIMARY KEY, failures integer NOT NULL, until_ms bigint NOT NULL, seen_ms bigint NOT NULL)")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("login table %s: %w", pgLoginTable, err)
	}
	return &pgLogins{pool: pool}, nil
}

func (p *pgLogins) state(ctx context.Context, key string) (int, time.Time, error) {
	var n int
	var until int64
	err := p.pool.QueryRow(ctx, "SELECT failures, until_ms FROM "+pgLoginTable+" WHERE key = $1", key).Scan(&n, &until)
	if err == pgx.ErrNoRows {
		return 0, time.Time{}, nil
	}
	return n, fromMillis(until), err
}

func (p *pgLogins) fail(ctx context.Context, key string, now time.Time, lockout func(int) time.Time) (int, time.Time, error) {
	var n int
	err := p.pool.QueryRow(ctx, "INSERT INTO "+pgLoginTable+" AS l (key, failures, until_ms, seen_ms) VALUES ($1, 1, 0, $2) "+
		"ON CONFLICT (key) DO UPDATE SET failures = l.failures + 1, seen_ms = $2 RETURNING failures", key, now.UnixMilli()).Scan(&n)
	if err != nil {
		return 0, time.Time{}, err
	}
	until := lockout(n)
	_, err = p.pool.Exec(ctx, "UPDATE "+pgLoginTable+" SET until_ms = GREATEST(until_ms, $2) WHERE key = $1", key, toMillis(until))
	return n, until, err
}

func (p *pgLogins) clear(ctx context.Context, key string) error {
	_, err := p.pool.Exec(ctx, "DELETE FROM "+pgLoginTable+" WHERE key = $1", key)
	return err
}

func (p *pgLogins) prune(ctx context.Context, before time.Time) error {
	_, err := p.pool.Exec(ctx, "DELETE FROM "+pgLoginTable+" WHERE seen_ms < $1 AND until_ms < $1", before.UnixMilli())
	return err
}

// Close leaves the pool to its owner, the store.
func (p *pgLogins) Close() error { return nil }

// sqliteLogins is loginShared on a SQLite file.
type sqliteLogins struct{ db *sql.DB }

func openSQLiteLogins(ctx context.Context, path string) (*sqliteLogins, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fmt.Errorf("login file %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS logins (key TEXT PRIMARY KEY, failures INTEGER NOT NULL, until_ms INTEGER NOT NULL, seen_ms INTEGER NOT NULL)"); err != nil {
		db.Close()
		return nil, fmt.Errorf("login file %s: %w", path, err)
	}
	return &sqliteLogins{db: db}, nil
}

func (s *sqliteLogins) state(ctx context.Context, key string) (int, time.Time, error) {
	var n int
	var until int64
	err := s.db.QueryRowContext(ctx, "SELECT failures, until_ms FROM logins WHERE key = ?", key).Scan(&n, &until)
	if err == sql.ErrNoRows {
		return 0, time.Time{}, nil
	}
	return n, fromMillis(until), err
}

func (s *sqliteLogins) fail(ctx context.Context, key string, now time.Time, lockout func(int) time.Time) (int, time.Time, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "INSERT INTO logins (key, failures, until_ms, seen_ms) VALUES (?, 1, 0, ?) "+
		"ON CONFLICT (key) DO UPDATE SET failures = failures + 1, seen_ms = excluded.seen_ms RETURNING failures", key, now.UnixMilli()).Scan(&n)
	if err != nil {
		return 0, time.Time{}, err
	}
	until := lockout(n)
	_, err = s.db.ExecContext(ctx, "UPDATE logins SET until_ms = max(until_ms, ?) WHERE key = ?", toMillis(until), key)
	return n, until, err
}

func (s *sqliteLogins) clear(ctx context.Context, key string) error {
	_, err := s.db.ExecContext(ctx, "DELETE FROM logins WHERE key = ?", key)
	return err
}

func (s *sqliteLogins) prune(ctx context.Context, before time.Time) error {
	_, err := s.db.ExecContext(ctx, "DELETE FROM logins WHERE seen_ms < ? AND until_ms < ?", before.UnixMilli(), before.UnixMilli())
	return err
}

// Close closes the database.
func (s *sqliteLogins) Close() error { return s.db.Close() }

// toMillis is t in Unix milliseconds, 0 for the zero time.
func toMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMillis is the inverse of toMillis.
func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
