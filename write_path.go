package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// The one write path (docs/stores.md, "Writing"). Every store's Index and
// IndexSource's source replacement run writeDocs: it prepares the rows,
// plans the write (which rows are added, which are stored already, how
// many of the scope's chunks go) and finds the vectors of the added rows
// (a vector the store holds for the same text, else the embedder, in
// batches with progress). A store's writeBackend answers only what the
// store alone knows and applies the plan atomically in its own way: one
// file write (LocalvecStore), one SQLite transaction, one PostgreSQL
// transaction under advisory locks, or a Bulk run's batch. A write that
// adds chunks to a store with no IndexInfo record then records one
// (recordFirstWrite): the store records its embedder itself.

// writeRows is a store's prepared rows (documents with their chunk IDs),
// read and filled by the write path by index.
type writeRows interface {
	count() int
	rowID(i int) string
	// rowText is the key under which rows share one vector: equal texts.
	rowText(i int) string
	rowDoc(i int) *ai.Document
	rowVec(i int) []float32
	setVec(i int, v []float32)
}

// writePlan is one write: the prepared rows, which of them are added and
// which are stored already, and the scope whose other chunks go.
type writePlan struct {
	// scope names the chunks the write replaces; empty (Index), nothing
	// goes.
	scope replaceScope
	rows  writeRows
	// keep holds the IDs of all rows (keepIDs in order, each once): the
	// scope's chunks after the write.
	keep    map[string]bool
	keepIDs []string
	// add are the rows to write (the first of each ID the store does not
	// hold), with their vectors once writeDocs found them; kept the rows
	// the store holds unchanged.
	add, kept []int
	// stale is the number of the scope's chunks not in keep when planned
	// (the backend deletes them as they are when it applies).
	stale int
	// held: the write came through a Bulk run's writer, and the store
	// holds it for the run's batch instead of applying it at once.
	held bool
}

// writeMode says whether a write is applied at once (writeNow) or held
// for its Bulk run's batch (writeHeld, a write through the run's writer).
type writeMode int

const (
	writeNow writeMode = iota
	writeHeld
)

// op names a source replacement of the mode in errors.
func (m writeMode) op() string {
	if m == writeHeld {
		return "bulk write"
	}
	return "replace source"
}

// writeBackend is a store's side of the write path.
type writeBackend interface {
	// prepareRows validates docs (a nil document or one without text is
	// an error wrapping ErrEmptyDocument, naming its index) and computes
	// their rows, without vectors.
	prepareRows(docs []*ai.Document) (writeRows, error)
	// storedIDs returns which of ids the store holds unchanged (the
	// PgvecStore: embedded by its embedder).
	storedIDs(ctx context.Context, ids []string) (map[string]bool, error)
	// countStale returns the number of the scope's chunks whose IDs are
	// not in keep (not called for an empty scope).
	countStale(ctx context.Context, scope replaceScope, keep map[string]bool) (int, error)
	// storedVectors sets the vector of each of rows' idx whose text the
	// store holds a vector for, and returns the dimension new vectors
	// must have (0: any, the store is empty).
	storedVectors(ctx context.Context, rows writeRows, idx []int) (dim int, err error)
	// writeEmbedder is the embedder of the rows the store has no vector for.
	writeEmbedder() ai.Embedder
	// applyWrite writes p's added rows (vectors set) and deletes the
	// scope's chunks not in p.keep, all or nothing, and returns the
	// number of rows written and chunks deleted; a held plan is handed to
	// the store's Bulk run (errBatchEnded when none is in progress).
	applyWrite(ctx context.Context, p *writePlan) (written, deleted int, err error)
	// IndexInfo returns the store's record (cached once found).
	IndexInfo(ctx context.Context) (info IndexInfo, found bool, err error)
	// recordWritten records info unless the store has a record, as
	// indexRecorder's recordIndexInfo does, with the locks
	// the store's writeDocs runs under held.
	recordWritten(ctx context.Context, info IndexInfo) error
}

// empty reports whether the scope names no URL and no source.
func (sc replaceScope) empty() bool { return len(sc.urls) == 0 && len(sc.sources) == 0 }

// writeDocs makes the chunks in scope those of docs; with an empty scope
// it adds docs (Index). mode writeHeld hands the write to the store's Bulk
// run. Rows the store holds unchanged are kept without
// embedding; nothing is written when nothing changes. progress, when not
// nil, gets the rows with vectors so far against those to write. Any
// error, a cancelled ctx included, leaves the store unchanged (the
// backend's applyWrite is all or nothing).
func writeDocs(ctx context.Context, b writeBackend, mode writeMode, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	p, err := planWrite(ctx, b, scope, docs)
	if err != nil {
		return 0, 0, err
	}
	p.held = mode == writeHeld
	if len(p.add) == 0 && p.stale == 0 {
		return 0, 0, nil
	}
	if err := fillVectors(ctx, b, p.rows, p.add, progress); err != nil {
		return 0, 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	dim := 0
	if len(p.add) > 0 {
		dim = len(p.rows.rowVec(p.add[0]))
	}
	if written, deleted, err = b.applyWrite(ctx, p); err != nil {
		return 0, 0, err
	}
	if len(p.add) > 0 {
		if err := recordFirstWrite(ctx, b, dim); err != nil {
			return written, deleted, err
		}
	}
	return written, deleted, nil
}

// recordFirstWrite records the store's IndexInfo after a write that added
// chunks of dimension dim (applied, or handed to a Bulk run) when the store
// has no record yet: the write's embedder, dim, now and the fusion the
// embedder implies. Once a record exists it costs a look at the store's
// cache. The store records only if no record exists, in one step across
// processes, so the first writer's record stands.
func recordFirstWrite(ctx context.Context, b writeBackend, dim int) error {
	if _, found, err := b.IndexInfo(ctx); err != nil || found {
		if err != nil {
			return fmt.Errorf("the write was applied, but reading the index record failed: %w", err)
		}
		return nil
	}
	name := b.writeEmbedder().Name()
	f := FusionDefaults(name)
	info := IndexInfo{Embedder: name, Dim: dim, Created: time.Now().UTC().Truncate(time.Second), Fusion: &f}
	if err := b.recordWritten(ctx, info); err != nil {
		return fmt.Errorf("the write was applied, but recording the index record failed: %w", err)
	}
	return nil
}

// planWrite prepares docs and sorts the rows into added and kept, and
// counts the scope's stale chunks.
func planWrite(ctx context.Context, b writeBackend, scope replaceScope, docs []*ai.Document) (*writePlan, error) {
	rows, err := b.prepareRows(docs)
	if err != nil {
		return nil, err
	}
	p := &writePlan{scope: scope, rows: rows, keep: make(map[string]bool, rows.count())}
	var first []int // the first row of each ID
	for i := range rows.count() {
		if id := rows.rowID(i); !p.keep[id] {
			p.keep[id] = true
			p.keepIDs = append(p.keepIDs, id)
			first = append(first, i)
		}
	}
	if len(first) > 0 {
		stored, err := b.storedIDs(ctx, p.keepIDs)
		if err != nil {
			return nil, err
		}
		for _, i := range first {
			if stored[rows.rowID(i)] {
				p.kept = append(p.kept, i)
			} else {
				p.add = append(p.add, i)
			}
		}
	}
	if !scope.empty() {
		if p.stale, err = b.countStale(ctx, scope, p.keep); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// fillVectors sets the vectors of rows' idx: the store's vector of the same
// text where it holds one, else the embedder's, each distinct text
// embedded once, indexBatchSize texts per call, every vector checked
// (embedChecked) against the store's dimension. progress, when not nil,
// gets the rows done after the lookup and after each batch.
func fillVectors(ctx context.Context, b writeBackend, rows writeRows, idx []int, progress func(done, total int)) error {
	if len(idx) == 0 {
		return nil
	}
	dim, err := b.storedVectors(ctx, rows, idx)
	if err != nil {
		return err
	}
	first := make(map[string]int) // text -> the row embedded for it
	share := make(map[string]int) // text -> rows waiting for its vector
	var embed []int
	done := 0
	for _, i := range idx {
		if rows.rowVec(i) != nil {
			done++
			continue
		}
		t := rows.rowText(i)
		if _, ok := first[t]; !ok {
			first[t] = i
			embed = append(embed, i)
		}
		share[t]++
	}
	if progress != nil {
		progress(done, len(idx))
	}
	emb := b.writeEmbedder()
	for start := 0; start < len(embed); start += indexBatchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := embed[start:min(start+indexBatchSize, len(embed))]
		batch := make([]*ai.Document, len(part))
		for j, i := range part {
			batch[j] = rows.rowDoc(i)
		}
		vecs, err := embedChecked(ctx, emb, batch, dim)
		if err != nil {
			return err
		}
		for j, i := range part {
			rows.setVec(i, vecs[j])
			done += share[rows.rowText(i)]
		}
		if dim == 0 {
			dim = len(vecs[0])
		}
		if progress != nil {
			progress(done, len(idx))
		}
	}
	for _, i := range idx {
		if rows.rowVec(i) == nil { // a repeat of an embedded text
			rows.setVec(i, rows.rowVec(first[rows.rowText(i)]))
		}
	}
	return ctx.Err()
}
