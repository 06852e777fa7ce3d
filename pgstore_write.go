package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgvecWriteMethod selects how a PgvecStore writes chunk rows.
type pgvecWriteMethod int

const (
	// pgvecWriteAuto (the default) writes with COPY into a temporary
	// staging table when a call writes at least pgvecCopyMinRows rows, and
	// with multi-row INSERT statements otherwise. A server that refuses
	// COPY (PGlite, some proxies) makes the store fall back to INSERT for
	// the rest of its life, with one warning.
	pgvecWriteAuto pgvecWriteMethod = iota
	// pgvecWriteCopy always writes with COPY, never falling back.
	pgvecWriteCopy
	// pgvecWriteInsert always writes with multi-row INSERT statements.
	pgvecWriteInsert
)

// String returns the method's name as the benchmarks and logs show it.
func (m pgvecWriteMethod) String() string {
	switch m {
	case pgvecWriteAuto:
		return "auto"
	case pgvecWriteCopy:
		return "copy"
	case pgvecWriteInsert:
		return "insert"
	}
	return fmt.Sprintf("pgvecWriteMethod(%d)", int(m))
}

// pgvecCopyMinRows is the smallest write for which pgvecWriteAuto uses COPY:
// below it the temporary table costs more than COPY saves.
const pgvecCopyMinRows = 1000

// pgvecStageTable is the temporary staging table of a COPY write; it is
// dropped when the writing transaction ends.
const pgvecStageTable = "askyourdocs_stage"

// pgvecStageColumns are the staging table's columns, in CopyFrom order.
var pgvecStageColumns = []string{"id", "content", "metadata", "content_hash", "text_hash", "embedding"}

// writeRows stores rows inside tx, overwriting rows whose ID exists, with
// COPY or multi-row INSERT as the store's write method says; bulk (a bulk
// load, its indexes dropped) first tries COPY straight into the chunk
// table (pgstore_bulk_copy.go).
func (s *PgvecStore) writeRows(ctx context.Context, tx pgx.Tx, rows []*pgvecRow, bulk bool) error {
	if len(rows) == 0 {
		return nil
	}
	lang, err := s.settleLanguage(ctx, tx, rows)
	if err != nil {
		return err
	}
	analyzeTerms(rows, lang.an)
	if bulk && s.writeMethod != pgvecWriteInsert && !s.noCopy.Load() {
		done, err := s.copyNew(ctx, tx, rows)
		if err != nil || done {
			return err
		}
	}
	useCopy := false
	switch s.writeMethod {
	case pgvecWriteCopy:
		useCopy = true
	case pgvecWriteAuto:
		useCopy = len(rows) >= pgvecCopyMinRows && !s.noCopy.Load()
	}
	if useCopy {
		if s.writeMethod == pgvecWriteCopy {
			return s.copyRows(ctx, tx, rows)
		}
		// A savepoint, so that a refused COPY leaves the transaction usable.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return fmt.Errorf("savepoint for copy: %w", err)
		}
		copyErr := s.copyRows(ctx, sp, rows)
		if copyErr == nil {
			return sp.Commit(ctx)
		}
		if err := sp.Rollback(ctx); err != nil || ctx.Err() != nil {
			return fmt.Errorf("copy %d chunks: %w", len(rows), copyErr)
		}
		if err := s.insertBatches(ctx, tx, rows); err != nil {
			return err
		}
		// INSERT took what COPY refused: the server does not do COPY.
		if !s.noCopy.Swap(true) {
			slog.Warn("pgvector store: the server refused COPY, writing with INSERT from now on; set PgvecOptions.writeMethod to pgvecWriteInsert to skip the attempt",
				"store", s.name, "err", copyErr)
		}
		return nil
	}
	return s.insertBatches(ctx, tx, rows)
}

// insertBatches writes rows with one multi-row INSERT per pgvecWriteBatch
// rows, then their postings.
func (s *PgvecStore) insertBatches(ctx context.Context, tx pgx.Tx, rows []*pgvecRow) error {
	for start := 0; start < len(rows); start += pgvecWriteBatch {
		if err := s.insert(ctx, tx, rows[start:min(start+pgvecWriteBatch, len(rows))]); err != nil {
			return err
		}
	}
	return s.writeTerms(ctx, tx, rows, false)
}

// copyRows copies rows into a temporary staging table (dropped at commit)
// and moves them into the chunk table with one INSERT ... SELECT ... ON
// CONFLICT, then copies their postings, in tx.
func (s *PgvecStore) copyRows(ctx context.Context, tx pgx.Tx, rows []*pgvecRow) error {
	stage := pgvecIdent(pgvecStageTable)
	if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS `+stage+` (
		id text, content text, metadata text, content_hash text, text_hash text, embedding vector
	) ON COMMIT DROP`); err != nil {
		return fmt.Errorf("create staging table: %w", err)
	}
	// A second write in the same transaction finds the table made by the
	// first: start empty.
	if _, err := tx.Exec(ctx, `TRUNCATE `+stage); err != nil {
		return fmt.Errorf("empty staging table: %w", err)
	}
	src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := rows[i]
		return []any{r.id, r.content, r.meta, r.hash, r.textHash, pgvector.NewVector(r.vec)}, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{pgvecStageTable}, pgvecStageColumns, src); err != nil {
		return fmt.Errorf("copy %d chunks: %w", len(rows), err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+pgvecIdent(s.names.table)+
		` (id, content, metadata, content_hash, text_hash, embedder, embedding)
		SELECT id, content, metadata::jsonb, content_hash, text_hash, $1, embedding FROM `+stage+`
		ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, metadata = EXCLUDED.metadata,
			content_hash = EXCLUDED.content_hash, text_hash = EXCLUDED.text_hash,
			embedder = EXCLUDED.embedder, embedding = EXCLUDED.embedding`, s.embName)
	if err != nil {
		return fmt.Errorf("move %d copied chunks into the table: %w", len(rows), err)
	}
	return s.writeTerms(ctx, tx, rows, true)
}

// insert writes rows with one multi-row INSERT ... SELECT FROM unnest(...)
// statement (one round trip, atomic). A row whose ID exists is overwritten.
func (s *PgvecStore) insert(ctx context.Context, q pgvecExecer, rows []*pgvecRow) error {
	ids := make([]string, len(rows))
	contents := make([]string, len(rows))
	metas := make([]string, len(rows))
	hashes := make([]string, len(rows))
	textHashes := make([]string, len(rows))
	vecs := make([]pgvector.Vector, len(rows))
	for i, r := range rows {
		ids[i], contents[i], metas[i], hashes[i], textHashes[i] = r.id, r.content, r.meta, r.hash, r.textHash
		vecs[i] = pgvector.NewVector(r.vec)
	}
	_, err := q.Exec(ctx, `INSERT INTO `+pgvecIdent(s.names.table)+
		` (id, content, metadata, content_hash, text_hash, embedder, embedding)
		SELECT u.id, u.content, u.meta::jsonb, u.hash, u.text_hash, $6, u.embedding
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $7::vector[])
			AS u(id, content, meta, hash, text_hash, embedding)
		ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, metadata = EXCLUDED.metadata,
			content_hash = EXCLUDED.content_hash, text_hash = EXCLUDED.text_hash,
			embedder = EXCLUDED.embedder, embedding = EXCLUDED.embedding`,
		ids, contents, metas, hashes, textHashes, s.embName, vecs)
	if err != nil {
		return fmt.Errorf("insert %d chunks: %w", len(rows), err)
	}
	return nil
}
