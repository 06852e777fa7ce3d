package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// pgvecDefaultMaxReplicaLag is PgvecOptions.MaxReplicaLag's default.
const pgvecDefaultMaxReplicaLag = 10 * time.Second

// pgvecReplicaCheckEvery is how often the store checks its read replica.
const pgvecReplicaCheckEvery = time.Second

// pgvecReplica is the read replica of a PgvecStore (PgvecOptions.ReadDSN):
// the store's reads (SearchVector, SearchText, Sources, the Retriever,
// keyword statistics) go to it while it answers and its replay lag stays
// within maxLag, and to the primary otherwise. A monitor checks it every
// pgvecReplicaCheckEvery; a read that fails on it for a connection reason
// is run again on the primary at once and the replica is set aside until
// the next good check.
type pgvecReplica struct {
	pool   *pgxpool.Pool
	maxLag time.Duration
	notify func(usable bool, reason string)
	name   string

	mu      sync.Mutex
	usable  bool
	reason  string // why reads are on the primary; "" while usable
	checked bool   // the first verdict was given (it is always reported)
	prevLSN string // the primary's WAL position at the previous check

	cancel context.CancelFunc
	done   chan struct{}
}

// pgvecReadKey is the context key of the pool a read runs on.
type pgvecReadKey struct{}

// readPool returns the pool the read running in ctx uses: the replica
// inside pgvecRead when it is usable, else the primary.
func (s *PgvecStore) readPool(ctx context.Context) *pgxpool.Pool {
	if p, ok := ctx.Value(pgvecReadKey{}).(*pgxpool.Pool); ok {
		return p
	}
	return s.Pool
}

// pgvecRead runs the read fn on the store's replica when it has a usable
// one, else on the primary; a replica failure (a lost or refused
// connection, a server shutting down, a recovery conflict) is retried
// once on the primary, so a standby going away fails no read.
func pgvecRead[T any](ctx context.Context, s *PgvecStore, fn func(ctx context.Context) (T, error)) (T, error) {
	r := s.replica
	if r == nil || !r.isUsable() {
		return fn(ctx)
	}
	out, err := fn(context.WithValue(ctx, pgvecReadKey{}, r.pool))
	if err == nil || ctx.Err() != nil || !pgvecReplicaFailure(err) {
		return out, err
	}
	r.set(false, "a read failed on it: "+err.Error())
	return fn(ctx)
}

// pgvecReplicaFailure reports whether err is the replica's fault rather
// than the query's: anything but an SQL error of the query itself (a
// connection error, a server shutting down or not accepting connections,
// a recovery conflict, resources exhausted).
func pgvecReplicaFailure(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true
	}
	for _, class := range []string{"08", "53", "57", "58", "40001", "25006"} {
		if strings.HasPrefix(pe.Code, class) {
			return true
		}
	}
	return false
}

// openReplica opens the read pool of o.ReadDSN and starts its monitor.
// A replica that does not answer yet is no error: reads go to the
// primary until it does.
func (s *PgvecStore) openReplica(ctx context.Context, o *PgvecOptions) error {
	cfg, err := pgxpool.ParseConfig(o.ReadDSN)
	if err != nil {
		return fmt.Errorf("parse read dsn: %w", err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if err := pgxvec.RegisterTypes(ctx, c); err != nil {
			return fmt.Errorf("register pgvector types: %w", err)
		}
		return nil
	}
	cfg.ConnConfig.Tracer = &pgvecTracer{name: s.name + " (replica)", store: s, next: o.Tracer}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open read pool: %w", err)
	}
	lag := o.MaxReplicaLag
	if lag <= 0 {
		lag = pgvecDefaultMaxReplicaLag
	}
	r := &pgvecReplica{pool: pool, maxLag: lag, notify: o.OnReplicaChange, name: s.name,
		reason: "not checked yet", done: make(chan struct{})}
	r.check(ctx, s.Pool) // a healthy replica serves the first read
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go r.monitor(mctx, s.Pool)
	s.replica = r
	return nil
}

// close stops the monitor and closes the read pool.
func (r *pgvecReplica) close() {
	r.cancel()
	<-r.done
	r.pool.Close()
}

func (r *pgvecReplica) isUsable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usable
}

// state returns whether reads use the replica and, when not, why.
func (r *pgvecReplica) state() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usable, r.reason
}

// set records the replica's state; a change is logged (Warn when reads
// move to the primary, Info when they return) and passed to notify.
func (r *pgvecReplica) set(usable bool, reason string) {
	r.mu.Lock()
	first := !r.checked
	changed := usable != r.usable || first
	r.usable, r.reason, r.checked = usable, reason, true
	if usable {
		r.reason = ""
	}
	r.mu.Unlock()
	if !changed {
		return
	}
	switch {
	case usable && first:
		slog.Info("pgvector store: reads use the read replica", "store", r.name)
	case usable:
		slog.Info("pgvector store: reads are on the read replica again", "store", r.name)
	default:
		slog.Warn("pgvector store: reads moved to the primary", "store", r.name, "reason", reason)
	}
	if r.notify != nil {
		r.notify(usable, reason)
	}
}

func (r *pgvecReplica) monitor(ctx context.Context, primary *pgxpool.Pool) {
	defer close(r.done)
	t := time.NewTicker(pgvecReplicaCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.check(ctx, primary)
		}
	}
}

// check measures the replica's replay lag: none when it has replayed what
// the primary had written by the previous check (a second ago; the
// latest record may still be on its way; nothing to hold it to at the
// first check), else the time since the last transaction it replayed. A replica that does not answer, or lags more
// than maxLag, is not used. Only the monitor (and openReplica before it)
// calls check.
func (r *pgvecReplica) check(ctx context.Context, primary *pgxpool.Pool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var lsn string
	if err := primary.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return // the primary cannot say where it is: keep the last verdict
	}
	prev := r.prevLSN
	r.prevLSN = lsn
	if prev == "" {
		// The first check: there is no earlier position to hold the
		// replica to (comparing with the primary's current one would
		// call a replica lagging whenever a write is in flight, and
		// measure the lag from its last replayed transaction, however
		// long the primary was idle before): only whether it answers.
		prev = "0/0"
	}
	var behind bool
	var lagSec *float64
	err := r.pool.QueryRow(ctx, `SELECT coalesce(pg_is_in_recovery() AND pg_last_wal_replay_lsn() < $1::pg_lsn, false),
		extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8`, prev).Scan(&behind, &lagSec)
	switch {
	case ctx.Err() != nil && err != nil:
		r.set(false, "it does not answer within 2s")
	case err != nil:
		r.set(false, "unreachable: "+err.Error())
	case behind && lagSec != nil && time.Duration(*lagSec*float64(time.Second)) > r.maxLag:
		r.set(false, fmt.Sprintf("replay lag %.1fs exceeds %v", *lagSec, r.maxLag))
	default:
		r.set(true, "")
	}
}

// replicaStatus reports whether the store's reads use its read replica
// (PgvecOptions.ReadDSN) and, when they do not, why (unreachable, lagging,
// a failed read); ok is false and reason "no read replica" without one.
func (s *PgvecStore) replicaStatus() (ok bool, reason string) {
	if s.replica == nil {
		return false, "no read replica"
	}
	return s.replica.state()
}
