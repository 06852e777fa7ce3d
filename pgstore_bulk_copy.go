package engine

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgvecChunkColumns are the chunk table's written columns, in CopyFrom
// order.
var pgvecChunkColumns = []string{"id", "content", "metadata", "content_hash", "text_hash", "embedder", "embedding"}

// copyNew writes rows none of whose IDs is stored with one COPY straight
// into the chunk table and their postings with a second, in a savepoint of
// tx: the bulk path, which needs neither a staging table nor the deletion
// of old postings. done is false, and nothing written, when the COPY
// failed (an ID that is stored after all, written by a concurrent writer,
// or a server that refuses COPY): the caller then writes as usual. err is
// only for a savepoint that cannot be rolled back or a cancelled ctx.
func (s *PgvecStore) copyNew(ctx context.Context, tx pgx.Tx, rows []*pgvecRow) (done bool, err error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("savepoint for copy: %w", err)
	}
	copyErr := func() error {
		src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.id, r.content, r.meta, r.hash, r.textHash, s.embName, pgvector.NewVector(r.vec)}, nil
		})
		if _, err := sp.CopyFrom(ctx, pgx.Identifier{s.names.table}, pgvecChunkColumns, src); err != nil {
			return fmt.Errorf("copy %d chunks: %w", len(rows), err)
		}
		if rows[0].termsAn == nil {
			return nil // a custom configuration: no postings
		}
		ids := make([]string, len(rows))
		terms := make([]*pgvecTerms, len(rows))
		for i, r := range rows {
			ids[i], terms[i] = r.id, r.terms
		}
		return pgvecCopyPostings(ctx, sp, s.names, pgvecPostings(ids, terms))
	}()
	if copyErr == nil {
		if err := sp.Commit(ctx); err != nil {
			return false, fmt.Errorf("release savepoint: %w", err)
		}
		return true, nil
	}
	if err := sp.Rollback(ctx); err != nil {
		return false, fmt.Errorf("roll back savepoint: %w (after %w)", err, copyErr)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("%w (after %w)", err, copyErr)
	}
	return false, nil
}
