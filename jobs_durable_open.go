package engine

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// OpenDurableJobStorePG is NewDurableJobStorePg.
//
// Deprecated: Use NewDurableJobStorePg (New for every constructor, Pg for
// PostgreSQL outside the pgvector store).
func OpenDurableJobStorePG(ctx context.Context, dsn string, opts *DurableJobStoreOptions) (DurableJobStore, error) {
	return NewDurableJobStorePg(ctx, dsn, opts)
}

// OpenDurableJobStoreSQLite is NewDurableJobStoreSQLite.
//
// Deprecated: Use NewDurableJobStoreSQLite (New for every constructor).
func OpenDurableJobStoreSQLite(ctx context.Context, path string, opts *DurableJobStoreOptions) (DurableJobStore, error) {
	return NewDurableJobStoreSQLite(ctx, path, opts)
}

// NewDurableJobStorePg opens a DurableJobStore on the PostgreSQL database
// of dsn: it runs River's migrations and creates the store's tables
// (askyourdocs_job, askyourdocs_job_progress, askyourdocs_job_instance)
// under an advisory lock, so processes may start at once. ctx bounds the
// setup only. opts may be nil; it is copied. Register kinds, then Start;
// Close releases the connections.
func NewDurableJobStorePg(ctx context.Context, dsn string, opts *DurableJobStoreOptions) (DurableJobStore, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: parse DSN: %w", errDurableOpen, err)
	}
	if cfg.MaxConns < 4 {
		cfg.MaxConns = 4
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	s, err := openDurablePG(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func openDurablePG(ctx context.Context, pool *pgxpool.Pool, opts *DurableJobStoreOptions) (*durableJobStore, error) {
	s := newDurable(opts, &jobDB{pg: pool}, pool.Close)
	driver := riverpgxv5.New(pool)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	defer conn.Release()
	const lock = `SELECT pg_advisory_lock(hashtext('askyourdocs_job_migrate'))`
	const unlock = `SELECT pg_advisory_unlock(hashtext('askyourdocs_job_migrate'))`
	if _, err := conn.Exec(ctx, lock); err != nil {
		return nil, fmt.Errorf("%w: lock for migrations: %w", errDurableOpen, err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), unlock) //nolint:errcheck // the session ends with the pool anyway
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(warnHandler{s.opts.Logger.Handler()})})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("%w: River migrations: %w", errDurableOpen, err)
	}
	if err := s.db.createTables(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	cfg, err := s.opts.riverConfig(&durableWorker{s: s})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	s.client, s.exec = client, driver.GetExecutor()
	return s, nil
}

// NewDurableJobStoreSQLite opens a DurableJobStore on the SQLite file at
// path (created if missing, in WAL mode) through River's riversqlite
// driver and modernc.org/sqlite: River's migrations and the store's tables
// run in one immediate transaction, so processes sharing the file may
// start at once. Use a file of its own, not an index database: River
// polls it. ctx bounds the setup only; opts may be nil. Register kinds,
// then Start; Close closes the file.
func NewDurableJobStoreSQLite(ctx context.Context, path string, opts *DurableJobStoreOptions) (DurableJobStore, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	// One connection, as riversqlite advises: SQLite runs one writer, and
	// River's parallel maintenance would otherwise meet SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	s, err := openDurableSQLite(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func openDurableSQLite(ctx context.Context, db *sql.DB, opts *DurableJobStoreOptions) (*durableJobStore, error) {
	s := newDurable(opts, &jobDB{lite: db}, func() { db.Close() })
	driver := riversqlite.New(db)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(warnHandler{s.opts.Logger.Handler()})})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	//lint:ignore SA1019 one transaction is what serialises processes on one file
	if _, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("%w: River migrations: %w", errDurableOpen, err)
	}
	for _, q := range durableSchemaSQL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%w: create job tables: %w", errDurableOpen, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	cfg, err := s.opts.riverConfig(&durableWorker{s: s})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDurableOpen, err)
	}
	s.client, s.exec = client, driver.GetExecutor()
	return s, nil
}

// newDurable returns a store without its River client.
func newDurable(opts *DurableJobStoreOptions, db *jobDB, closeDB func()) *durableJobStore {
	var o DurableJobStoreOptions
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	base, stop := context.WithCancel(context.Background())
	var queues []string
	if qs, err := o.queues(); err == nil { // else riverConfig reports it
		for q := range qs {
			queues = append(queues, q)
		}
		slices.Sort(queues)
	}
	return &durableJobStore{
		queueList: queues,
		opts:      o,
		db:        db,
		closeDB:   closeDB,
		kinds:     make(map[string]jobInputFunc),
		local:     make(map[int64]context.CancelCauseFunc),
		base:      base,
		stopBase:  stop,
		beatDone:  make(chan struct{}),
	}
}
