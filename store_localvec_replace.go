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

// replaceSource implements sourceReplacer. Documents already stored (same
// localvec ID: same text and metadata) are kept as they are; a new document
// whose text equals that of a document in scope reuses its vector; the
// others are embedded in batches of 100. Only when all vectors are at hand
// are the additions and the deletion of the scope's other documents applied,
// in one atomic file write (or, inside a deferred-persist session, in memory
// until it ends). Any error, a cancelled ctx included, leaves the store
// unchanged.
func (s *LocalvecStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return 0, 0, fmt.Errorf("localvec replace source: %w", err)
	}
	release, err := s.lockWrite()
	if err != nil {
		return 0, 0, fmt.Errorf("localvec replace source: %w", err)
	}
	defer release()
	keep := make(map[string]bool, len(docs))
	var todo []localvecNewRow
	for i, d := range docs {
		if d == nil || strings.TrimSpace(DocText(d)) == "" {
			return 0, 0, fmt.Errorf("localvec replace source: document %d: %w", i, ErrEmptyDocument)
		}
		id, js, err := localvecDocJSON(d)
		if err != nil {
			return 0, 0, fmt.Errorf("localvec replace source: document %d: %w", i, err)
		}
		if keep[id] {
			continue
		}
		keep[id] = true
		todo = append(todo, localvecNewRow{id: id, doc: d, js: js})
	}

	del := make(map[string]bool)
	byText := make(map[string][]float32)
	s.mu.RLock()
	todo = slices.DeleteFunc(todo, func(a localvecNewRow) bool { _, ok := s.rows.byID[a.id]; return ok })
	for i, d := range s.rows.docs {
		if !scope.matches(d.Metadata) {
			continue
		}
		if id := s.rows.ids[i]; !keep[id] {
			del[id] = true
		}
		if len(todo) > 0 {
			byText[DocText(d)] = slices.Clone(s.rows.vec(i))
		}
	}
	s.mu.RUnlock()

	var embed []int // indexes into todo of the documents to embed
	for i := range todo {
		if v, ok := byText[DocText(todo[i].doc)]; ok {
			todo[i].vec = v
		} else {
			embed = append(embed, i)
		}
	}
	done := len(todo) - len(embed)
	if progress != nil && len(todo) > 0 {
		progress(done, len(todo))
	}
	for start := 0; start < len(embed); start += indexBatchSize {
		if err := ctx.Err(); err != nil {
			return 0, 0, fmt.Errorf("localvec replace source: %w", err)
		}
		part := embed[start:min(start+indexBatchSize, len(embed))]
		batch := make([]*ai.Document, len(part))
		for j, i := range part {
			batch[j] = todo[i].doc
		}
		vecs, err := s.embed(ctx, batch)
		if err != nil {
			return 0, 0, fmt.Errorf("localvec replace source: %w", err)
		}
		for j, i := range part {
			todo[i].vec = vecs[j]
		}
		done += len(part)
		if progress != nil {
			progress(done, len(todo))
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("localvec replace source: %w", err)
	}
	for _, a := range todo {
		// An empty store takes any dimension; all batches must agree on it.
		if len(a.vec) != len(todo[0].vec) {
			return 0, 0, fmt.Errorf("localvec replace source: %w: vectors of %d and %d dimensions", ErrDimensionMismatch, len(todo[0].vec), len(a.vec))
		}
	}
	if err := s.apply(todo, del); err != nil {
		return 0, 0, fmt.Errorf("localvec replace source: %w", err)
	}
	return len(todo), len(del), nil
}
