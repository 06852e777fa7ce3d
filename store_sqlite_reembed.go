package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// Reembed replaces the vector of every chunk with the store's embedder's,
// for an embedder of another dimension than the stored vectors' (Index
// then fails with ErrDimensionMismatch): texts, metadata and keyword index
// stay. It embeds outside any transaction (each distinct text once, 100
// per call, progress(done, total) after each call when not nil), then
// swaps all vectors, the recorded dimension and the IndexInfo (new
// embedder and dimension, fusion defaults) in one write transaction: a
// crash or error leaves the old vectors, and a second call starts over.
// Chunks written meanwhile are embedded before the swap. It returns how
// many chunks it re-embedded; an empty store gives 0. The same dimension
// gives an error: re-index with IndexSource instead.
func (s *SQLiteStore) Reembed(ctx context.Context, progress func(done, total int)) (int, error) {
	if err := s.checkOpen("reembed"); err != nil {
		return 0, err
	}
	if err := s.flushBulkFor(ctx, replaceScope{}, true); err != nil {
		return 0, fmt.Errorf("sqlite reembed: %w", err)
	}
	oldDim, err := s.storedDim(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("sqlite reembed: %w", err)
	}
	vecs := map[string][]float32{} // text hash -> new vector
	dim := 0
	for round := 0; ; round++ {
		todo, total, err := s.reembedPending(ctx, vecs)
		if err != nil {
			return 0, fmt.Errorf("sqlite reembed: %w", err)
		}
		if total == 0 {
			return 0, nil
		}
		for at := 0; at < len(todo); at += pgvecEmbedBatch {
			batch := todo[at:min(at+pgvecEmbedBatch, len(todo))]
			docs := make([]*ai.Document, len(batch))
			for i, p := range batch {
				docs[i] = ai.DocumentFromText(p.text, nil)
			}
			got, err := embedChecked(ctx, s.emb, docs, dim)
			if err != nil {
				return 0, fmt.Errorf("sqlite reembed: %w", err)
			}
			dim = len(got[0])
			if round == 0 && dim == oldDim {
				return 0, fmt.Errorf("sqlite reembed: the embedder gives vectors of the stored dimension %d: re-index with IndexSource", dim)
			}
			for i, p := range batch {
				vecs[p.textHash] = got[i]
			}
			if progress != nil {
				progress(min(at+len(batch), len(todo)), len(todo))
			}
		}
		n, err := s.reembedSwap(ctx, vecs, dim)
		if errors.Is(err, errReembedNotDone) && round < 10 {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite reembed: %w", err)
		}
		s.wrote.Store(true)
		return n, nil
	}
}

type sqliteReembedText struct{ textHash, text string }

// reembedPending returns the distinct texts without a new vector in vecs
// and the number of chunks.
func (s *SQLiteStore) reembedPending(ctx context.Context, vecs map[string][]float32) ([]sqliteReembedText, int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT text_hash, text FROM chunks ORDER BY rid`)
	if err != nil {
		return nil, 0, fmt.Errorf("read chunks: %w", err)
	}
	defer rows.Close()
	var todo []sqliteReembedText
	seen := map[string]bool{}
	total := 0
	for rows.Next() {
		var p sqliteReembedText
		if err := rows.Scan(&p.textHash, &p.text); err != nil {
			return nil, 0, fmt.Errorf("read chunks: %w", err)
		}
		total++
		if _, ok := vecs[p.textHash]; !ok && !seen[p.textHash] {
			seen[p.textHash] = true
			todo = append(todo, p)
		}
	}
	return todo, total, rows.Err()
}

// reembedSwap writes the new vectors of every chunk, the dimension and the
// IndexInfo in one write transaction; errReembedNotDone (nothing written)
// when a chunk's text has no vector in vecs.
func (s *SQLiteStore) reembedSwap(ctx context.Context, vecs map[string][]float32, dim int) (int, error) {
	n := 0
	var newInfo *IndexInfo
	err := s.write(ctx, func(conn *sql.Conn) error {
		rows, err := conn.QueryContext(ctx, `SELECT rid, text_hash FROM chunks`)
		if err != nil {
			return err
		}
		var rids []int64
		var hashes []string
		for rows.Next() {
			var rid int64
			var h string
			if err := rows.Scan(&rid, &h); err != nil {
				rows.Close()
				return err
			}
			if _, ok := vecs[h]; !ok {
				rows.Close()
				return errReembedNotDone
			}
			rids, hashes = append(rids, rid), append(hashes, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		q := make([]byte, dim)
		for i, rid := range rids {
			v := vecs[hashes[i]]
			if _, err := conn.ExecContext(ctx, `UPDATE chunks SET vec = ? WHERE rid = ?`, sqliteEncodeVec(v), rid); err != nil {
				return fmt.Errorf("write vector of row %d: %w", rid, err)
			}
			scale := quantizeUnit(v, q)
			if _, err := conn.ExecContext(ctx, `UPDATE qvecs SET scale = ?, q = ? WHERE rid = ?`, scale, q, rid); err != nil {
				return fmt.Errorf("write vector of row %d: %w", rid, err)
			}
		}
		n = len(rids)
		if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'dim'`, dim); err != nil {
			return fmt.Errorf("record dimension: %w", err)
		}
		info, found, err := sqliteReadIndexInfo(ctx, conn)
		if err != nil {
			return err
		}
		if found {
			info = IndexInfo{Embedder: s.emb.Name(), Dim: dim, Created: time.Now().UTC().Truncate(time.Second)}
			raw, err := json.Marshal(info)
			if err != nil {
				return err
			}
			if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = ?`, string(raw), sqliteIndexInfoKey); err != nil {
				return fmt.Errorf("record index info: %w", err)
			}
			newInfo = &info
		}
		return bumpGeneration(ctx, conn)
	})
	if err == nil && newInfo != nil {
		s.info.p.Store(newInfo)
	}
	return n, err
}
