package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/firebase/genkit/go/ai"
)

// replaceSource implements sourceReplacer (see ingest.go): it makes the
// chunks in scope equal to docs. Chunks already stored with the same ID (same
// source, url, text and metadata, embedded by the same embedder) are kept
// as they are; the others are embedded (reusing stored vectors of equal
// text) and inserted pgvecEmbedBatch at a time, one INSERT statement per
// batch; only then are the scope's chunks that are not in docs deleted, in
// one statement. On any error, including a cancelled ctx, the rows this call
// inserted are deleted again and the old chunks are left as they were.
func (s *PgvecStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	if err := s.checkOpen("replace source"); err != nil {
		return 0, 0, err
	}
	prepared, err := pgvecPrepare(docs)
	if err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
	}
	t := pgvecIdent(s.names.table)
	urls, sources := scope.urls, scope.sources
	if urls == nil {
		urls = []string{}
	}
	if sources == nil {
		sources = []string{}
	}

	// The scope's current chunks: ID -> embedder.
	rows, err := s.Pool.Query(ctx, `SELECT id, embedder FROM `+t+` WHERE url = ANY($1) OR source = ANY($2)`, urls, sources)
	if err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: list current chunks: %w", err)
	}
	current := make(map[string]string)
	for rows.Next() {
		var id, emb string
		if err := rows.Scan(&id, &emb); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("pgvector replace source: list current chunks: %w", err)
		}
		current[id] = emb
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: list current chunks: %w", err)
	}

	keep := make([]string, 0, len(prepared))
	var todo []*pgvecRow
	for i := range prepared {
		r := &prepared[i]
		keep = append(keep, r.id)
		if emb, ok := current[r.id]; ok && emb == s.embName {
			continue
		}
		todo = append(todo, r)
	}

	// inserted holds the IDs this call added (not those it overwrote with a
	// new embedder's vector): a failure deletes exactly these.
	var inserted []string
	fail := func(err error) (int, int, error) {
		if len(inserted) == 0 {
			return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgvecCleanupTimeout)
		defer cancel()
		if _, cerr := s.Pool.Exec(cctx, `DELETE FROM `+t+` WHERE id = ANY($1)`, inserted); cerr != nil {
			return 0, 0, fmt.Errorf("pgvector replace source: %w", errors.Join(err,
				fmt.Errorf("remove the %d chunks this run wrote: %w", len(inserted), cerr)))
		}
		slog.Debug("pgvector replace source: failed run removed its chunks", "store", s.name, "chunks", len(inserted))
		return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
	}

	total := len(todo)
	if progress != nil {
		progress(0, total)
	}
	for start := 0; start < total; start += pgvecEmbedBatch {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		batch := todo[start:min(start+pgvecEmbedBatch, total)]
		if _, err := s.lookup(ctx, batch); err != nil {
			return fail(err)
		}
		if _, err := s.embed(ctx, batch); err != nil {
			return fail(err)
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := s.insert(ctx, s.Pool, batch); err != nil {
			return fail(err)
		}
		for _, r := range batch {
			if _, ok := current[r.id]; !ok {
				inserted = append(inserted, r.id)
			}
		}
		written += len(batch)
		if progress != nil {
			progress(written, total)
		}
	}

	tag, err := s.Pool.Exec(ctx, `DELETE FROM `+t+` WHERE (url = ANY($1) OR source = ANY($2)) AND id <> ALL($3)`, urls, sources, keep)
	if err != nil {
		return fail(fmt.Errorf("delete stale chunks: %w", err))
	}
	return written, int(tag.RowsAffected()), nil
}

// countScope implements scopeCounter (see ingest.go): the number of chunks
// whose "url" is in scope.urls or whose "source" is in scope.sources, read
// from the B-tree indexes.
func (s *PgvecStore) countScope(ctx context.Context, scope replaceScope) (int, error) {
	if err := s.checkOpen("count scope"); err != nil {
		return 0, err
	}
	urls, sources := scope.urls, scope.sources
	if urls == nil {
		urls = []string{}
	}
	if sources == nil {
		sources = []string{}
	}
	var n int64
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)+` WHERE url = ANY($1) OR source = ANY($2)`, urls, sources).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgvector count scope: %w", err)
	}
	return int(n), nil
}
