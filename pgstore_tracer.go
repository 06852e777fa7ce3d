package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgvecTracer is the query tracer of every pool NewPgvecStore makes. It is
// how KeywordSearchSQL, which the spec gives a pool only, finds the store:
// the pool's own configuration (pool.Config().ConnConfig.Tracer) carries
// it, so there is no package-level pool-to-store map. With the app's
// PgvecOptions.Tracer it forwards every trace call the app's tracer takes
// (query, batch, copy, prepare, connect, acquire, release); without one it
// logs each query's duration and outcome at debug level.
type pgvecTracer struct {
	name  string          // the store's name, for the log
	store *PgvecStore     // the store whose pool this is
	next  pgx.QueryTracer // the app's tracer, or nil
}

// pgvecStoreOf returns the store that made pool, or nil for a pool that no
// PgvecStore made (or a copy of such a pool's configuration opened anew).
func pgvecStoreOf(pool *pgxpool.Pool) *PgvecStore {
	t, ok := pool.Config().ConnConfig.Tracer.(*pgvecTracer)
	if !ok || t.store == nil || t.store.Pool != pool {
		return nil
	}
	return t.store
}

type pgvecTraceStartKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (t *pgvecTracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.next != nil {
		return t.next.TraceQueryStart(ctx, c, data)
	}
	if !slog.Default().Enabled(ctx, slog.LevelDebug) {
		return ctx
	}
	return context.WithValue(ctx, pgvecTraceStartKey{}, time.Now())
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *pgvecTracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryEndData) {
	if t.next != nil {
		t.next.TraceQueryEnd(ctx, c, data)
		return
	}
	start, ok := ctx.Value(pgvecTraceStartKey{}).(time.Time)
	if !ok {
		return
	}
	slog.DebugContext(ctx, "pgvector store query", "store", t.name, "command", data.CommandTag.String(),
		"duration", time.Since(start), "ok", data.Err == nil)
}

// TraceBatchStart implements pgx.BatchTracer: the app's tracer's, else the
// batch's duration is logged at debug level as a query's is (a vector
// search is one batch).
func (t *pgvecTracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if n, ok := t.next.(pgx.BatchTracer); ok {
		return n.TraceBatchStart(ctx, c, data)
	}
	if t.next != nil || !slog.Default().Enabled(ctx, slog.LevelDebug) {
		return ctx
	}
	return context.WithValue(ctx, pgvecTraceStartKey{}, time.Now())
}

// TraceBatchQuery implements pgx.BatchTracer for the app's tracer.
func (t *pgvecTracer) TraceBatchQuery(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchQueryData) {
	if n, ok := t.next.(pgx.BatchTracer); ok {
		n.TraceBatchQuery(ctx, c, data)
	}
}

// TraceBatchEnd implements pgx.BatchTracer (see TraceBatchStart).
func (t *pgvecTracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchEndData) {
	if n, ok := t.next.(pgx.BatchTracer); ok {
		n.TraceBatchEnd(ctx, c, data)
		return
	}
	start, ok := ctx.Value(pgvecTraceStartKey{}).(time.Time)
	if !ok {
		return
	}
	slog.DebugContext(ctx, "pgvector store batch", "store", t.name, "duration", time.Since(start), "ok", data.Err == nil)
}

// TraceCopyFromStart implements pgx.CopyFromTracer for the app's tracer.
func (t *pgvecTracer) TraceCopyFromStart(ctx context.Context, c *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if n, ok := t.next.(pgx.CopyFromTracer); ok {
		return n.TraceCopyFromStart(ctx, c, data)
	}
	return ctx
}

// TraceCopyFromEnd implements pgx.CopyFromTracer for the app's tracer.
func (t *pgvecTracer) TraceCopyFromEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceCopyFromEndData) {
	if n, ok := t.next.(pgx.CopyFromTracer); ok {
		n.TraceCopyFromEnd(ctx, c, data)
	}
}

// TracePrepareStart implements pgx.PrepareTracer for the app's tracer.
func (t *pgvecTracer) TracePrepareStart(ctx context.Context, c *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if n, ok := t.next.(pgx.PrepareTracer); ok {
		return n.TracePrepareStart(ctx, c, data)
	}
	return ctx
}

// TracePrepareEnd implements pgx.PrepareTracer for the app's tracer.
func (t *pgvecTracer) TracePrepareEnd(ctx context.Context, c *pgx.Conn, data pgx.TracePrepareEndData) {
	if n, ok := t.next.(pgx.PrepareTracer); ok {
		n.TracePrepareEnd(ctx, c, data)
	}
}

// TraceConnectStart implements pgx.ConnectTracer for the app's tracer.
func (t *pgvecTracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	if n, ok := t.next.(pgx.ConnectTracer); ok {
		return n.TraceConnectStart(ctx, data)
	}
	return ctx
}

// TraceConnectEnd implements pgx.ConnectTracer for the app's tracer.
func (t *pgvecTracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	if n, ok := t.next.(pgx.ConnectTracer); ok {
		n.TraceConnectEnd(ctx, data)
	}
}

// TraceAcquireStart implements pgxpool.AcquireTracer for the app's tracer.
func (t *pgvecTracer) TraceAcquireStart(ctx context.Context, p *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	if n, ok := t.next.(pgxpool.AcquireTracer); ok {
		return n.TraceAcquireStart(ctx, p, data)
	}
	return ctx
}

// TraceAcquireEnd implements pgxpool.AcquireTracer for the app's tracer.
func (t *pgvecTracer) TraceAcquireEnd(ctx context.Context, p *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	if n, ok := t.next.(pgxpool.AcquireTracer); ok {
		n.TraceAcquireEnd(ctx, p, data)
	}
}

// TraceRelease implements pgxpool.ReleaseTracer for the app's tracer.
func (t *pgvecTracer) TraceRelease(p *pgxpool.Pool, data pgxpool.TraceReleaseData) {
	if n, ok := t.next.(pgxpool.ReleaseTracer); ok {
		n.TraceRelease(p, data)
	}
}
