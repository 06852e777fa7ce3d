package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/firebase/genkit/go/ai"
)

// bulkBatch is the handle a Bulk run (LocalvecStore.Bulk, SQLiteStore.Bulk,
// PgvecStore.Bulk) hands its function as a VectorStore, as pgx.BeginFunc
// hands out a pgx.Tx: the writes made through it are held by the store and
// committed in batches of whole sources, as each store's Bulk says, while
// writes through the store itself are applied at once, as outside a run.
// IndexSource (which replaces a source through it, diffing as on the
// store), IndexInBatches and an app's own ingest code write through it.
// It is valid until the function it was given to returns; later writes
// fail with errBatchEnded. Safe for concurrent use.
type bulkBatch struct {
	s     batchStore
	ended atomic.Bool
}

// batchStore is a store's side of a bulkBatch.
type batchStore interface {
	VectorStore
	scopeCounter
	// writeBatch is the store's writeDocs with writeHeld (the store's
	// open and dimension checks first, its errors wrapped).
	writeBatch(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error)
	// deleteBatch deletes the chunks whose metadata key (MetaURL or
	// MetaSource) is value, as part of the run.
	deleteBatch(ctx context.Context, key, value string) (int, error)
}

// errBatchEnded is the error of a write through a Bulk run's writer after
// the run ended.
var errBatchEnded = errors.New("write through a Bulk batch after its run ended")

// runBatch calls fn with a bulkBatch of s, which ends when fn returns.
func runBatch(s batchStore, fn func(VectorStore) error) error {
	b := &bulkBatch{s: s}
	defer b.ended.Store(true)
	return fn(b)
}

// check returns errBatchEnded once the batch's run has ended.
func (b *bulkBatch) check(op string) error {
	if b.ended.Load() {
		return fmt.Errorf("bulk %s: %w", op, errBatchEnded)
	}
	return nil
}

// Index adds docs as the store's Index does (documents stored unchanged
// are skipped, a text stored reuses its vector), held for the run's next
// commit.
func (b *bulkBatch) Index(ctx context.Context, docs []*ai.Document) error {
	if err := b.check("index"); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	_, _, err := b.s.writeBatch(ctx, replaceScope{}, docs, nil)
	return err
}

// DeleteByURL removes the chunks whose "url" metadata value is url, as the
// store's DeleteByURL does, in the run (a LocalvecStore writes its file
// when the run ends; the databases delete at once, after committing the
// sources held).
func (b *bulkBatch) DeleteByURL(ctx context.Context, url string) (int, error) {
	if err := b.check("delete url"); err != nil {
		return 0, err
	}
	return b.s.deleteBatch(ctx, MetaURL, url)
}

// DeleteBySource removes the chunks whose "source" metadata value is
// sourceName, as DeleteByURL does for a URL.
func (b *bulkBatch) DeleteBySource(ctx context.Context, sourceName string) (int, error) {
	if err := b.check("delete source"); err != nil {
		return 0, err
	}
	return b.s.deleteBatch(ctx, MetaSource, sourceName)
}

// Close does nothing: the run ends when the function given the batch
// returns, and the store stays open.
func (b *bulkBatch) Close() error { return nil }

// replaceSource implements sourceReplacer: IndexSource through the batch
// replaces the source in the run.
func (b *bulkBatch) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	if err := b.check("replace source"); err != nil {
		return 0, 0, err
	}
	return b.s.writeBatch(ctx, scope, docs, progress)
}

// countScope implements scopeCounter.
func (b *bulkBatch) countScope(ctx context.Context, scope replaceScope) (int, error) {
	return b.s.countScope(ctx, scope)
}

// bulkCommits is what a bulk run keeps of its batches' background commits
// (SQLiteStore and PgvecStore commit one batch at a time in a goroutine
// while the run prepares the next): done is closed when the committing
// batch ends and is nil when none is; err gathers the run's failed
// commits and fresh those no source replacement has returned yet. The
// owner's mutex guards it.
type bulkCommits struct {
	done       chan struct{}
	err, fresh error
}

// wait waits, mu held, until no batch is being committed.
func (c *bulkCommits) wait(mu *sync.Mutex) {
	for c.done != nil {
		d := c.done
		mu.Unlock()
		<-d
		mu.Lock()
	}
}

// failed records a failed batch commit, the owner's mutex held.
func (c *bulkCommits) failed(err error) {
	c.err = errors.Join(c.err, err)
	c.fresh = errors.Join(c.fresh, err)
}

// takeFresh returns (and forgets) the failed commits not yet reported.
func (c *bulkCommits) takeFresh() error {
	err := c.fresh
	c.fresh = nil
	return err
}
