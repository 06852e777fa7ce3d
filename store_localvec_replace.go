package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// matches reports whether meta puts a document into scope.
func (sc replaceScope) matches(meta map[string]any) bool {
	if u, ok := meta[MetaURL].(string); ok && slices.Contains(sc.urls, u) {
		return true
	}
	if s, ok := meta[MetaSource].(string); ok && slices.Contains(sc.sources, s) {
		return true
	}
	return false
}

// countScope implements scopeCounter: the number of documents in scope.
func (s *LocalvecStore) countScope(ctx context.Context, scope replaceScope) (int, error) {
	if err := s.refreshForRead(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrStoreClosed
	}
	n := 0
	for _, d := range s.rows.docs {
		if scope.matches(d.Metadata) {
			n++
		}
	}
	return n, nil
}

// replaceSource implements sourceReplacer through the one write path
// (writeDocs): documents already stored (same localvec ID: same text and
// metadata) are kept as they are, a new document whose text equals that of
// a stored one reuses its vector, the others are embedded in batches of
// 100. Only when all vectors are at hand are the additions and the
// deletion of the scope's other documents applied, in one atomic file
// write. The store's
// write lock is held throughout. Any error, a cancelled ctx included,
// leaves the store unchanged.
func (s *LocalvecStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	return s.writeScope(ctx, writeNow, scope, docs, progress)
}

// writeBatch implements batchStore: the write held in memory until the
// Bulk run ends.
func (s *LocalvecStore) writeBatch(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	return s.writeScope(ctx, writeHeld, scope, docs, progress)
}

// writeScope is a source replacement (or, mode writeHeld, one held for a
// Bulk run) through writeDocs, under the store's write locks.
func (s *LocalvecStore) writeScope(ctx context.Context, mode writeMode, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	release, err := s.beginWrite()
	if err != nil {
		return 0, 0, fmt.Errorf("localvec %s: %w", mode.op(), err)
	}
	defer release()
	written, deleted, err = writeDocs(ctx, s, mode, scope, docs, progress)
	if err != nil {
		return 0, 0, fmt.Errorf("localvec %s: %w", mode.op(), err)
	}
	return written, deleted, nil
}

// beginWrite takes the store's write locks (this process's, then the
// file's) for a write through writeDocs and returns their release.
func (s *LocalvecStore) beginWrite() (release func(), err error) {
	s.writeMu.Lock()
	if err := s.checkOpen(); err != nil {
		s.writeMu.Unlock()
		return nil, err
	}
	unlock, err := s.lockWrite()
	if err != nil {
		s.writeMu.Unlock()
		return nil, err
	}
	return func() { unlock(); s.writeMu.Unlock() }, nil
}

// localvecWriteRows are a LocalvecStore's prepared rows (writeRows).
type localvecWriteRows []localvecNewRow

func (r localvecWriteRows) count() int                { return len(r) }
func (r localvecWriteRows) rowID(i int) string        { return r[i].id }
func (r localvecWriteRows) rowText(i int) string      { return DocText(r[i].doc) }
func (r localvecWriteRows) rowDoc(i int) *ai.Document { return r[i].doc }
func (r localvecWriteRows) rowVec(i int) []float32    { return r[i].vec }
func (r localvecWriteRows) setVec(i int, v []float32) { r[i].vec = v }

// prepareRows implements writeBackend: the documents' localvec IDs and
// JSON encodings.
func (s *LocalvecStore) prepareRows(docs []*ai.Document) (writeRows, error) {
	rows := make(localvecWriteRows, len(docs))
	for i, d := range docs {
		if d == nil || strings.TrimSpace(DocText(d)) == "" {
			return nil, fmt.Errorf("document %d: %w", i, ErrEmptyDocument)
		}
		id, js, err := localvecDocJSON(d)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		rows[i] = localvecNewRow{id: id, doc: d, js: js}
	}
	return rows, nil
}

// storedIDs implements writeBackend.
func (s *LocalvecStore) storedIDs(_ context.Context, ids []string) (map[string]bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]bool)
	for _, id := range ids {
		if _, ok := s.rows.byID[id]; ok {
			out[id] = true
		}
	}
	return out, nil
}

// countStale implements writeBackend.
func (s *LocalvecStore) countStale(_ context.Context, scope replaceScope, keep map[string]bool) (int, error) {
	return len(s.staleIDs(scope, keep)), nil
}

// staleIDs returns the IDs of the scope's documents not in keep.
func (s *LocalvecStore) staleIDs(scope replaceScope, keep map[string]bool) map[string]bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	del := make(map[string]bool)
	for i, d := range s.rows.docs {
		if id := s.rows.ids[i]; !keep[id] && scope.matches(d.Metadata) {
			del[id] = true
		}
	}
	return del
}

// storedVectors implements writeBackend: vectors of stored documents of
// equal text (one pass over the store), and the store's dimension.
func (s *LocalvecStore) storedVectors(_ context.Context, rows writeRows, idx []int) (int, error) {
	want := make(map[string][]int, len(idx))
	for _, i := range idx {
		t := rows.rowText(i)
		want[t] = append(want[t], i)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for j, d := range s.rows.docs {
		if len(want) == 0 {
			break
		}
		t := DocText(d)
		if is, ok := want[t]; ok {
			v := slices.Clone(s.rows.vec(j))
			for _, i := range is {
				rows.setVec(i, v)
			}
			delete(want, t)
		}
	}
	return s.rows.dim, nil
}

// writeEmbedder implements writeBackend.
func (s *LocalvecStore) writeEmbedder() ai.Embedder { return s.emb }

// applyWrite implements writeBackend: the added rows and the deletion of
// the scope's documents not kept, in one file write (s.apply), or in memory
// for a held write. Called
// with the write locks held, so the scope is as planned.
func (s *LocalvecStore) applyWrite(_ context.Context, p *writePlan) (written, deleted int, err error) {
	rows := p.rows.(localvecWriteRows)
	add := make([]localvecNewRow, len(p.add))
	for j, i := range p.add {
		add[j] = rows[i]
	}
	var del map[string]bool
	if !p.scope.empty() {
		del = s.staleIDs(p.scope, p.keep)
	}
	if err := s.apply(add, del, p.held); err != nil {
		return 0, 0, err
	}
	return len(add), len(del), nil
}
