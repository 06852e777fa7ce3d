package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// Reembed replaces the vector of every chunk with the store's embedder's,
// for an embedder of another dimension than the stored vectors' (Index
// then fails with ErrDimensionMismatch): documents and keyword index stay.
// Holding the store's file lock, it embeds every distinct text (progress
// after each call when not nil), then writes the whole file atomically:
// a crash leaves the old file, and a second call starts over. An existing
// IndexInfo file is then updated to the new embedder and dimension. It
// returns how many chunks it re-embedded. The same dimension, or a call
// inside Bulk, gives an error.
func (s *LocalvecStore) Reembed(ctx context.Context, progress func(done, total int)) (int, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return 0, fmt.Errorf("localvec reembed: %w", err)
	}
	if s.sessions > 0 {
		return 0, errors.New("localvec reembed: not inside Bulk")
	}
	release, err := s.lockWrite()
	if err != nil {
		return 0, fmt.Errorf("localvec reembed: %w", err)
	}
	defer release()
	s.mu.RLock()
	ids, docs, oldDim := slices.Clone(s.rows.ids), slices.Clone(s.rows.docs), s.rows.dim
	s.mu.RUnlock()
	if len(ids) == 0 {
		return 0, nil
	}
	byText := make(map[string][]float32, len(docs))
	var todo []*ai.Document
	for _, d := range docs {
		if _, ok := byText[DocText(d)]; !ok {
			byText[DocText(d)] = nil
			todo = append(todo, d)
		}
	}
	dim := 0
	for at := 0; at < len(todo); at += indexBatchSize {
		batch := todo[at:min(at+indexBatchSize, len(todo))]
		vecs, err := embedChecked(ctx, s.emb, batch, dim)
		if err != nil {
			return 0, fmt.Errorf("localvec reembed: %w", err)
		}
		if dim = len(vecs[0]); dim == oldDim {
			return 0, fmt.Errorf("localvec reembed: the embedder gives vectors of the stored dimension %d: re-index with IndexSource", dim)
		}
		for i, d := range batch {
			byText[DocText(d)] = vecs[i]
		}
		if progress != nil {
			progress(at+len(batch), len(todo))
		}
	}
	add := make([]localvecNewRow, len(ids))
	for i, id := range ids {
		add[i] = localvecNewRow{id: id, doc: docs[i], vec: byText[DocText(docs[i])]}
	}
	var fresh localvecRows
	if err := fresh.writeFile(s.path, add, nil); err != nil {
		return 0, fmt.Errorf("localvec reembed: %w", err)
	}
	s.fileWrites.Add(1)
	s.noteWritten()
	fresh.append(add)
	s.mu.Lock()
	s.rows = fresh
	s.mu.Unlock()
	if _, found, err := s.IndexInfo(ctx); err != nil || found {
		if err == nil {
			info := IndexInfo{Embedder: s.emb.Name(), Dim: dim, Created: time.Now().UTC().Truncate(time.Second)}
			raw, merr := json.MarshalIndent(info, "", "  ")
			if err = merr; err == nil {
				err = writeFileAtomic(s.infoPath(), append(raw, '\n'))
			}
			if err == nil {
				s.info.p.Store(&info)
			}
		}
		if err != nil {
			return len(ids), fmt.Errorf("localvec reembed: vectors replaced, index record not updated: %w", err)
		}
	}
	return len(ids), nil
}
