package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgvecReembedBatch is the default number of chunks a re-embedding
// migration embeds and commits per transaction.
const pgvecReembedBatch = 500

// pgvecReembedLockSalt makes a store's migration lock key differ from its
// source locks.
const pgvecReembedLockSalt = "askyourdocs reembed "

// The shadow columns of a re-embedding migration: the new vector and the
// text_hash of the text it was computed from (a chunk rewritten during the
// migration is embedded again).
const (
	pgvecNextColumn     = "embedding_next"
	pgvecNextHashColumn = "embedding_next_hash"
)

// pgvecStartReembed adds empty shadow columns of dimension dim to the
// chunk table (dropping those of an abandoned migration to another
// dimension), inside the caller's schema transaction. Adding a nullable column
// rewrites nothing.
func pgvecStartReembed(ctx context.Context, tx pgx.Tx, n pgvecNames, dim int) error {
	t := pgvecIdent(n.table)
	for _, s := range []string{
		`ALTER TABLE ` + t + ` DROP COLUMN IF EXISTS ` + pgvecNextColumn + `, DROP COLUMN IF EXISTS ` + pgvecNextHashColumn,
		`ALTER TABLE ` + t + ` ADD COLUMN ` + pgvecNextColumn + ` ` + pgvecVectorFor(dim).column + `, ADD COLUMN ` + pgvecNextHashColumn + ` text`,
	} {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("start re-embedding to dimension %d: %w", dim, err)
		}
	}
	return nil
}

// pgvecBeginReembed starts a re-embedding migration of the store called
// name to dim in tx (the shadow columns and the meta row's reembed_dim),
// or, when pending is that dimension already, resumes the one an earlier
// run left; it reports whether it resumed.
func pgvecBeginReembed(ctx context.Context, tx pgx.Tx, n pgvecNames, name string, dim int, pending *int) (bool, error) {
	if pending != nil && *pending == dim {
		return true, nil
	}
	if err := pgvecStartReembed(ctx, tx, n, dim); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET reembed_dim = $2 WHERE store = $1`, name, dim); err != nil {
		return false, fmt.Errorf("record re-embedding target: %w", err)
	}
	return false, nil
}

// pgvecDropReembed abandons an unfinished re-embedding migration.
func pgvecDropReembed(ctx context.Context, tx pgx.Tx, n pgvecNames, name string) error {
	if _, err := tx.Exec(ctx, `ALTER TABLE `+pgvecIdent(n.table)+` DROP COLUMN IF EXISTS `+pgvecNextColumn+
		`, DROP COLUMN IF EXISTS `+pgvecNextHashColumn); err != nil {
		return fmt.Errorf("drop unfinished re-embedding: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET reembed_dim = NULL WHERE store = $1`, name); err != nil {
		return fmt.Errorf("drop unfinished re-embedding: %w", err)
	}
	return nil
}

// pgvecNextPending is the condition of a chunk whose new vector is missing
// or was computed from another text.
const pgvecNextPending = pgvecNextColumn + ` IS NULL OR ` + pgvecNextHashColumn + ` IS DISTINCT FROM text_hash`

// Reembed replaces the vector of every chunk with the store's embedder's,
// for an embedder of another dimension than the stored vectors' (writes
// and vector searches fail with ErrDimensionMismatch until then): texts,
// metadata and keyword postings stay. It embeds in committed batches of
// PgvecOptions.ReembedBatch chunks into a shadow column (progress(done,
// total) after each when not nil) while the old vectors stay searchable,
// builds that column's HNSW index, then swaps it in with one transaction;
// killed at any point, the store keeps its old vectors and the next
// Reembed (of any process) continues from the committed batches. Chunks
// written meanwhile are embedded before the swap. It returns how many
// chunks it re-embedded; the stored dimension already the embedder's gives
// an error (re-index with IndexSource instead), as does a call inside Bulk.
func (s *PgvecStore) Reembed(ctx context.Context, progress func(done, total int)) (int, error) {
	if err := s.checkOpen("reembed"); err != nil {
		return 0, err
	}
	if s.bulkLoading() {
		return 0, errors.New("pgvector store: reembed: inside Bulk")
	}
	s.reembedMu.Lock()
	defer s.reembedMu.Unlock()
	var stored int
	err := s.withSchemaLock(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var pending *int
		if err := tx.QueryRow(ctx, `SELECT embedding_dim, reembed_dim FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1 FOR UPDATE`, s.name).
			Scan(&stored, &pending); err != nil {
			return fmt.Errorf("reembed: read the stored dimension: %w", err)
		}
		if stored == s.dim {
			return nil
		}
		s.migration.PreviousDim = stored
		var err error
		if s.migration.ReembedResumed, err = pgvecBeginReembed(ctx, tx, s.names, s.name, s.dim, pending); err != nil {
			return fmt.Errorf("reembed: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if stored == s.dim {
		s.storedDim.Store(0)
		return 0, fmt.Errorf("pgvector store %q: reembed: the embedder gives vectors of the stored dimension %d: re-index with IndexSource", s.name, stored)
	}
	before := s.migration.Reembedded
	if err := s.reembed(ctx, progress); err != nil {
		return s.migration.Reembedded - before, fmt.Errorf("pgvector store %q: %w", s.name, err)
	}
	s.migration.DimensionChanged = true
	s.storedDim.Store(0)
	return s.migration.Reembedded - before, nil
}

// checkDim returns an error wrapping ErrDimensionMismatch while the stored
// vectors have another dimension than the embedder's (read again from the
// meta table, so that another process's Reembed is seen), nil otherwise.
func (s *PgvecStore) checkDim(ctx context.Context, op string) error {
	if s.storedDim.Load() == 0 {
		return nil
	}
	var stored int
	if err := s.Pool.QueryRow(ctx, `SELECT embedding_dim FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&stored); err != nil {
		return fmt.Errorf("pgvector store %q: %s: read the stored dimension: %w", s.name, op, err)
	}
	if stored == s.dim {
		s.storedDim.Store(0)
		return nil
	}
	return fmt.Errorf("pgvector store %q: %s: %w: the stored vectors have %d dimensions, the embedder's %d; call Reembed (or open with PgvecOptions.ReembedOnOpen)",
		s.name, op, ErrDimensionMismatch, stored, s.dim)
}

// reembed runs the re-embedding migration the schema transaction set up:
// under a session advisory lock of the store (a second process starting
// with the same dimension waits, then finds the work done), it fills the
// shadow column in committed batches, builds its HNSW index and swaps it in
// with one transaction. Killed at any point, the store keeps its old
// vectors and the next start continues from the committed batches.
func (s *PgvecStore) reembed(ctx context.Context, progress func(done, total int)) error {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("re-embed: %w", err)
	}
	defer conn.Release()
	key := pgvecLockKey(pgvecReembedLockSalt + s.name)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("re-embed: take migration lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key); err != nil {
			// An unreleased session lock would block the next migration:
			// drop the connection instead of returning it to the pool.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	// Another process may have finished while this one waited.
	var recorded int
	var pending *int
	if err := conn.QueryRow(ctx, `SELECT embedding_dim, reembed_dim FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).
		Scan(&recorded, &pending); err != nil {
		return fmt.Errorf("re-embed: read state: %w", err)
	}
	if recorded == s.dim {
		return nil
	}
	if pending == nil || *pending != s.dim {
		return fmt.Errorf("re-embed: another process moved the migration to dimension %v while this one (dimension %d) waited", pending, s.dim)
	}
	batch := s.reembedSize
	t := pgvecIdent(s.names.table)
	var total, left int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE `+pgvecNextPending+`) FROM `+t).Scan(&total, &left); err != nil {
		return fmt.Errorf("re-embed: count chunks: %w", err)
	}
	slog.Info("pgvector store: re-embedding every chunk for the new dimension; old vectors stay searchable until the swap",
		"store", s.name, "from", s.migration.PreviousDim, "to", s.dim, "chunks", total, "left", left, "resumed", s.migration.ReembedResumed)
	start := time.Now()
	lastLog := start
	var fillTime, indexTime, swapTime time.Duration
	for swapped := false; !swapped; {
		phase := time.Now()
		for {
			n, err := s.reembedBatch(ctx, conn.Conn(), batch)
			if err != nil {
				return fmt.Errorf("re-embed: %w", err)
			}
			if n == 0 {
				break
			}
			s.migration.Reembedded += n
			done := min(total-left+s.migration.Reembedded, total)
			if progress != nil {
				progress(done, total)
			}
			if time.Since(lastLog) >= 10*time.Second {
				lastLog = time.Now()
				slog.Info("pgvector store: re-embedding", "store", s.name, "done", done, "total", total)
			}
		}
		fillTime += time.Since(phase)
		phase = time.Now()
		if err := s.reembedIndex(ctx, conn.Conn()); err != nil {
			return fmt.Errorf("re-embed: %w", err)
		}
		indexTime += time.Since(phase)
		phase = time.Now()
		if swapped, err = s.reembedSwap(ctx, conn.Conn()); err != nil {
			return fmt.Errorf("re-embed: %w", err)
		}
		swapTime += time.Since(phase)
	}
	slog.Info("pgvector store: re-embedding done, new vectors swapped in", "store", s.name, "from", s.migration.PreviousDim,
		"to", s.dim, "reembedded", s.migration.Reembedded, "took", time.Since(start).Round(time.Millisecond),
		"batches", fillTime.Round(time.Millisecond), "index", indexTime.Round(time.Millisecond), "swap", swapTime.Round(time.Millisecond))
	return nil
}

// reembedBatch embeds up to limit pending chunks (each distinct text once)
// and writes their new vectors in one statement; it returns how many it
// took, 0 when none is left. No transaction is open while the embedder
// runs; a chunk rewritten meanwhile keeps its mark and is taken again.
func (s *PgvecStore) reembedBatch(ctx context.Context, conn *pgx.Conn, limit int) (int, error) {
	rows, err := conn.Query(ctx, `SELECT id, content, metadata, text_hash FROM `+pgvecIdent(s.names.table)+
		` WHERE `+pgvecNextPending+` ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return 0, fmt.Errorf("read pending chunks: %w", err)
	}
	var ids, hashes []string
	var docs []*ai.Document
	for rows.Next() {
		var id, content, hash string
		var meta map[string]any
		if err := rows.Scan(&id, &content, &meta, &hash); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read pending chunks: %w", err)
		}
		ids, hashes = append(ids, id), append(hashes, hash)
		docs = append(docs, ai.DocumentFromText(content, meta))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read pending chunks: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	byHash := make(map[string][]float32, len(ids))
	var todo []*ai.Document
	var todoHash []string
	for i, d := range docs {
		if _, ok := byHash[hashes[i]]; !ok {
			byHash[hashes[i]] = nil
			todo, todoHash = append(todo, d), append(todoHash, hashes[i])
		}
	}
	for at := 0; at < len(todo); at += pgvecEmbedBatch {
		end := min(at+pgvecEmbedBatch, len(todo))
		vecs, err := embedChecked(ctx, s.Embedder, todo[at:end], s.dim)
		if err != nil {
			return 0, err
		}
		for i, v := range vecs {
			byHash[todoHash[at+i]] = v
		}
	}
	vecs := make([]pgvector.Vector, len(ids))
	for i, h := range hashes {
		vecs[i] = pgvector.NewVector(byHash[h])
	}
	_, err = conn.Exec(ctx, `UPDATE `+pgvecIdent(s.names.table)+` AS t SET `+pgvecNextColumn+` = u.v, `+
		pgvecNextHashColumn+` = u.h, embedder = $4
		FROM unnest($1::text[], $2::text[], $3::vector[]) AS u(id, h, v)
		WHERE t.id = u.id AND t.text_hash = u.h`, ids, hashes, vecs, s.embName)
	if err != nil {
		return 0, fmt.Errorf("write %d new vectors: %w", len(ids), err)
	}
	return len(ids), nil
}

// reembedIndexName is the HNSW index of the shadow column; the swap
// renames it to the store's index name.
func (s *PgvecStore) reembedIndexName() string { return s.names.hnsw + "_next" }

// reembedIndex builds the shadow column's HNSW index (when the dimension
// has one). CREATE INDEX blocks writers, not readers, while it runs.
func (s *PgvecStore) reembedIndex(ctx context.Context, conn *pgx.Conn) error {
	expr := pgvecVectorFor(s.dim).indexExpr
	if expr == "" {
		return nil
	}
	expr = strings.Replace(expr, "embedding", pgvecNextColumn, 1)
	if _, err := conn.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+pgvecIdent(s.reembedIndexName())+` ON `+
		pgvecIdent(s.names.table)+` USING hnsw (`+expr+`)`); err != nil {
		return fmt.Errorf("build HNSW index of the new vectors: %w", err)
	}
	return nil
}

// pgvecReembedSwapHook, when set (by tests), runs inside the swap's
// transaction after its changes, before the commit.
var pgvecReembedSwapHook func(ctx context.Context) error

// errReembedNotDone rolls back a swap that found chunks written since the
// last batch.
var errReembedNotDone = errors.New("chunks left to re-embed")

// reembedSwap replaces the old vectors with the new ones in one
// transaction holding the table exclusively: it drops the old column (and
// its index), renames the shadow column and its index, and records the
// new dimension and embedder. It reports false, changing nothing, when a
// writer added or changed chunks since the last batch.
func (s *PgvecStore) reembedSwap(ctx context.Context, conn *pgx.Conn) (bool, error) {
	t := pgvecIdent(s.names.table)
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgvecSchemaLockKey); err != nil {
			return fmt.Errorf("take schema lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE `+t+` IN ACCESS EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("lock chunk table: %w", err)
		}
		var left int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+t+` WHERE `+pgvecNextPending).Scan(&left); err != nil {
			return fmt.Errorf("count pending chunks: %w", err)
		}
		if left > 0 {
			return errReembedNotDone
		}
		stmts := []string{
			`ALTER TABLE ` + t + ` DROP COLUMN embedding`,
			`ALTER TABLE ` + t + ` RENAME COLUMN ` + pgvecNextColumn + ` TO embedding`,
			`ALTER TABLE ` + t + ` ALTER COLUMN embedding SET NOT NULL, DROP COLUMN ` + pgvecNextHashColumn,
		}
		if pgvecVectorFor(s.dim).indexExpr != "" {
			stmts = append(stmts, `ALTER INDEX `+pgvecIdent(s.reembedIndexName())+` RENAME TO `+pgvecIdent(s.names.hnsw))
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("swap in the new vectors: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET embedding_dim = $2, reembed_dim = NULL, updated_at = now(),
			index_info = CASE WHEN index_info IS NULL THEN NULL
				ELSE (index_info - 'fusion') || jsonb_build_object('embedder', $3::text, 'dim', $2::int, 'created', $4::text) END
			WHERE store = $1`, s.name, s.dim, s.embName, time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)); err != nil {
			return fmt.Errorf("record the new dimension: %w", err)
		}
		if pgvecReembedSwapHook != nil {
			return pgvecReembedSwapHook(ctx)
		}
		return nil
	})
	if errors.Is(err, errReembedNotDone) {
		return false, nil
	}
	return err == nil, err
}
