package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Bulk indexing (docs/api-reference.md, SQLiteStore): one transaction per
// source costs a commit, a generation, an FTS5 segment (merged again
// later) and the B-tree pages it touched written anew to the WAL, for
// every file of a folder. A Bulk run holds the source replacements, each
// prepared and embedded as outside a run, and writes many of them in one
// transaction.

// sqliteBulkFlushRows is the number of held rows at which a Bulk run
// commits its batch.
const sqliteBulkFlushRows = 512

// sqliteBulkFlushAge is the longest a Bulk run holds a source replacement
// before committing (checked whenever a source is added).
const sqliteBulkFlushAge = 5 * time.Second

// sqliteBulkAutocheckpoint is the WAL size (pages) at which a Bulk run's
// connections checkpoint, instead of SQLite's 1000: a checkpoint writes
// back (and syncs) every page changed since the last one, and the pages a
// batch rewrites (interior B-tree pages, FTS5 segments) are written back
// once rather than after every few batches.
const sqliteBulkAutocheckpoint = 16384

// sqliteBulkCacheKB is the page cache (cache_size, negative: KiB; 16 MB) of a
// connection committing a Bulk batch, instead of SQLite's 2 MB: a batch
// changes more pages than that, and a full cache writes dirty pages to
// the WAL before the commit, some of them again later.
const sqliteBulkCacheKB = -16384

// sqliteBulkSource is a source replacement a Bulk run holds: the scope,
// the chunk IDs to keep and the new rows, with their vectors.
type sqliteBulkSource struct {
	scope replaceScope
	keep  map[string]bool
	todo  []sqliteRow
}

// sqliteBulkBatch is the source replacements of one batch: their rows,
// when the first was added, their scopes (urls, sources) and their new
// rows' vectors by text hash (reused like stored ones).
type sqliteBulkBatch struct {
	pending       []sqliteBulkSource
	rows          int
	oldest        time.Time
	urls, sources map[string]bool
	vecs          map[string][]float32
}

// add adds src to the batch.
func (bt *sqliteBulkBatch) add(src sqliteBulkSource) {
	if bt.urls == nil {
		bt.urls, bt.sources, bt.vecs = map[string]bool{}, map[string]bool{}, map[string][]float32{}
	}
	if len(bt.pending) == 0 {
		bt.oldest = time.Now()
	}
	bt.pending = append(bt.pending, src)
	bt.rows += len(src.todo)
	for _, u := range src.scope.urls {
		bt.urls[u] = true
	}
	for _, n := range src.scope.sources {
		bt.sources[n] = true
	}
	for i := range src.todo {
		bt.vecs[src.todo[i].textHash] = src.todo[i].vec
	}
}

// overlaps reports whether scope shares a URL or source name with a
// replacement of the batch.
func (bt *sqliteBulkBatch) overlaps(scope replaceScope) bool {
	return slices.ContainsFunc(scope.urls, func(u string) bool { return bt.urls[u] }) ||
		slices.ContainsFunc(scope.sources, func(n string) bool { return bt.sources[n] })
}

// sqliteBulkState is the SQLiteStore's field for Bulk runs; mu guards
// it. A full batch is committed by a goroutine of its own (one at a
// time: busy, commits.done closed when it ends) while the run prepares and embeds
// the next sources; a batch committed for a write that must follow it
// (flushBulkFor) and the last one are committed by the caller.
type sqliteBulkState struct {
	mu sync.Mutex
	// runs counts the Bulk calls in progress; 0: no run.
	runs int
	cur  sqliteBulkBatch
	// busy is the batch committing in the background (nil: none).
	busy    *sqliteBulkBatch
	commits bulkCommits
}

// Bulk runs fn as one indexing run of many source replacements, with a
// writer w (a VectorStore) to write through. IndexSource (and Index)
// through w prepares and embeds each source as on the store, then holds
// it; held sources are committed in batches of up to 512 rows or 5 s
// (checked when a source is added), each batch one transaction of
// whole sources written by a goroutine of its own while the next sources
// are prepared, and the last batch when fn returns (also when ctx is
// cancelled: finished sources are kept). Readers, in this process too,
// see a source once its batch commits; a delete, and any write through
// the store itself, commits the held sources first (a replacement only
// those of its own source). Concurrent Bulk calls share one run,
// which ends with the last. A source replacement's error is returned by
// that call; a source the database refuses (its batch is then written one
// source per transaction) by the next replacement and by Bulk, naming it.
// Sources not yet committed when the process dies are lost: the database
// keeps their previous version, consistent, as after a kill between two
// transactions. A ctx already done gives its error without running fn.
func (s *SQLiteStore) Bulk(ctx context.Context, fn func(VectorStore) error) error {
	if err := s.checkOpen("bulk"); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite bulk: %w", err)
	}
	b := &s.bulk
	b.mu.Lock()
	if b.runs == 0 {
		b.commits = bulkCommits{}
	}
	b.runs++
	b.mu.Unlock()

	fnErr := runBatch(s, fn)

	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs--
	if b.runs > 0 {
		return fnErr
	}
	b.commits.wait(&b.mu)
	if err := s.commitBatch(context.WithoutCancel(ctx), &b.cur, false); err != nil {
		b.commits.failed(err)
	}
	b.cur = sqliteBulkBatch{}
	endErr := b.commits.err
	b.commits = bulkCommits{}
	if endErr != nil {
		endErr = fmt.Errorf("sqlite bulk: %w", endErr)
	}
	return errors.Join(fnErr, endErr)
}

// bulkHold adds a prepared, embedded source replacement to the Bulk run
// and hands the batch to a committing goroutine when it is full or old
// enough. The error is errBatchEnded when no run is in progress, or a
// failed commit of an earlier batch.
func (s *SQLiteStore) bulkHold(ctx context.Context, src sqliteBulkSource) error {
	if err := sqliteEncodeRows(src.todo, s.an.Load().language()); err != nil {
		return err
	}
	b := &s.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == 0 {
		return errBatchEnded
	}
	b.cur.add(src)
	if b.cur.rows >= sqliteBulkFlushRows || time.Since(b.cur.oldest) >= sqliteBulkFlushAge {
		b.commits.wait(&b.mu)
		batch := b.cur
		b.cur = sqliteBulkBatch{}
		done := make(chan struct{})
		b.busy, b.commits.done = &batch, done
		wctx := context.WithoutCancel(ctx)
		go func() {
			err := s.commitBatch(wctx, &batch, true)
			b.mu.Lock()
			if err != nil {
				b.commits.failed(err)
			}
			b.busy, b.commits.done = nil, nil
			close(done)
			b.mu.Unlock()
		}()
	}
	return b.commits.takeFresh()
}

// deleteBatch implements batchStore: the store's delete, after the held
// sources commit.
func (s *SQLiteStore) deleteBatch(ctx context.Context, key, value string) (int, error) {
	column := "url"
	if key == MetaSource {
		column = "source"
	}
	n, err := s.deleteWhere(ctx, column, value)
	if err != nil {
		return 0, fmt.Errorf("sqlite bulk delete %s %q: %w", key, value, err)
	}
	return n, nil
}

// bulkHeldVector returns the vector of a held row with text hash h.
func (s *SQLiteStore) bulkHeldVector(h string) ([]float32, bool) {
	b := &s.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.cur.vecs[h]; ok {
		return v, true
	}
	if b.busy != nil {
		v, ok := b.busy.vecs[h]
		return v, ok
	}
	return nil, false
}

// flushBulkFor commits the held replacements before a write that must
// come after them: every write when all is set, else one whose scope
// overlaps a held one (its diff must see them). Outside a run it does
// nothing.
func (s *SQLiteStore) flushBulkFor(ctx context.Context, scope replaceScope, all bool) error {
	b := &s.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.cur.pending) == 0 && b.busy == nil {
		return nil
	}
	if !all && !b.cur.overlaps(scope) && (b.busy == nil || !b.busy.overlaps(scope)) {
		return nil
	}
	b.commits.wait(&b.mu)
	err := s.commitBatch(context.WithoutCancel(ctx), &b.cur, b.runs > 0)
	b.cur = sqliteBulkBatch{}
	if err != nil {
		b.commits.failed(err)
	}
	if err := b.commits.takeFresh(); err != nil {
		return fmt.Errorf("commit the held sources: %w", err)
	}
	return nil
}

// commitBatch writes the replacements of bt in one transaction (each
// scope's stale chunks as the scope is now, then all new rows). inRun
// keeps the connection's checkpoint threshold raised; the batch that ends
// a run sets it back, so the WAL is written back at its commit.
//
// One refused source (a full disk, a trigger, a constraint) must not take
// the batch's other sources with it: when the batch's transaction fails,
// each source is written alone, so only the refused ones are lost.
func (s *SQLiteStore) commitBatch(ctx context.Context, bt *sqliteBulkBatch, inRun bool) error {
	err := s.commitBatchTx(ctx, bt, inRun)
	if err == nil || len(bt.pending) < 2 || ctx.Err() != nil {
		return err
	}
	return s.commitEach(ctx, bt, inRun)
}

// commitBatchTx writes the replacements of bt in one transaction.
func (s *SQLiteStore) commitBatchTx(ctx context.Context, bt *sqliteBulkBatch, inRun bool) error {
	if len(bt.pending) == 0 {
		return nil
	}
	var todo []sqliteRow
	for _, p := range bt.pending {
		todo = append(todo, p.todo...)
	}
	checkpoint := 1000 // SQLite's default
	if inRun {
		checkpoint = sqliteBulkAutocheckpoint
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("commit %d held sources: %w", len(bt.pending), err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d; PRAGMA cache_size = %d", checkpoint, sqliteBulkCacheKB)); err != nil {
		return fmt.Errorf("commit %d held sources: set wal_autocheckpoint and cache_size: %w", len(bt.pending), err)
	}
	// The connection goes back to the pool with SQLite's defaults (its
	// cache memory freed).
	defer conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 1000; PRAGMA cache_size = -2000")
	defer sqliteHoldTerms(todo)()
	changed := false
	err = sqliteConnWriteTx(ctx, conn, func(conn *sql.Conn) error {
		for _, p := range bt.pending {
			stale, err := s.staleInScope(ctx, conn, p.scope, p.keep)
			if err != nil {
				return err
			}
			for _, rid := range stale {
				if _, err := conn.ExecContext(ctx, `DELETE FROM chunks WHERE rid = ?`, rid); err != nil {
					return fmt.Errorf("delete stale chunk: %w", err)
				}
			}
			changed = changed || len(stale) > 0
		}
		n, err := s.insertRows(ctx, conn, todo)
		if err != nil {
			return err
		}
		if changed = changed || n > 0; !changed {
			return nil
		}
		return bumpGeneration(ctx, conn)
	})
	if err != nil {
		return fmt.Errorf("commit %d held sources: %w", len(bt.pending), err)
	}
	if changed {
		s.wrote.Store(true)
	}
	return nil
}

// commitEach writes the replacements of bt one transaction each, after
// the batch's transaction failed, and joins the errors of those that fail
// ("source docs/b.html: ...").
func (s *SQLiteStore) commitEach(ctx context.Context, bt *sqliteBulkBatch, inRun bool) error {
	var errs []error
	for _, p := range bt.pending {
		one := sqliteBulkBatch{}
		one.add(p)
		if err := s.commitBatchTx(ctx, &one, inRun); err != nil {
			errs = append(errs, fmt.Errorf("source %s: %w", p.scope.name(), err))
		}
	}
	return errors.Join(errs...)
}

// name is the scope's source name, else its URL, for messages.
func (sc replaceScope) name() string {
	if len(sc.sources) > 0 {
		return sc.sources[0]
	}
	if len(sc.urls) > 0 {
		return sc.urls[0]
	}
	return "(no source)"
}
