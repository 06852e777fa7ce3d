package main

import (
	"context"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// pgStore is a PgvecStore; it embeds *PgvecStore, so IndexSource diffs
// sources on it.
type pgStore struct {
	*askyourdocs.PgvecStore
	name string
}

// bulk and flush: PostgreSQL commits every batch itself.
func (s *pgStore) bulk(fn func() error) error { return fn() }
func (s *pgStore) flush() error               { return nil }

func (s *pgStore) vectorSearch(ctx context.Context, q *ai.Document, k int) ([]*ai.Document, error) {
	docs, err := s.Retrieve(ctx, q, k)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return docs, nil
}

func (s *pgStore) keywordSearch(ctx context.Context, q string, k int) ([]*ai.Document, error) {
	docs, err := s.KeywordSearch(ctx, q, k, cliStopWords, "", nil)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return docs, nil
}

func (s *pgStore) listSources(ctx context.Context) ([]askyourdocs.Source, error) {
	return s.Sources(ctx)
}

func (s *pgStore) chunkCount(ctx context.Context) (int, error) {
	var n int
	if err := s.Pool.QueryRow(ctx, "SELECT count(*) FROM "+s.Table()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count chunks: %w", err)
	}
	return n, nil
}

func (s *pgStore) describe() string { return "PostgreSQL table " + s.Table() }

// ensureManifestTable creates the manifest table under the stores' schema
// lock: two processes starting at once on a fresh database would otherwise
// race on CREATE TABLE IF NOT EXISTS.
func (s *pgStore) ensureManifestTable(ctx context.Context) error {
	err := s.WithSchemaLock(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+pgManifestTable+
			" (store text PRIMARY KEY, embedder text NOT NULL, dim int NOT NULL, created timestamptz NOT NULL)")
		return err
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", pgManifestTable, err)
	}
	return nil
}

func (s *pgStore) manifest(ctx context.Context) (indexManifest, bool, error) {
	var m indexManifest
	if err := s.ensureManifestTable(ctx); err != nil {
		return m, false, err
	}
	rows, err := s.Pool.Query(ctx, "SELECT embedder, dim, created FROM "+pgManifestTable+" WHERE store = $1", s.name)
	if err != nil {
		return m, false, fmt.Errorf("read %s: %w", pgManifestTable, err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		if err := rows.Scan(&m.Embedder, &m.Dim, &m.Created); err != nil {
			return m, false, fmt.Errorf("read %s: %w", pgManifestTable, err)
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return m, false, fmt.Errorf("read %s: %w", pgManifestTable, err)
	}
	return m, found, nil
}

func (s *pgStore) saveManifest(ctx context.Context, m indexManifest) error {
	if err := s.ensureManifestTable(ctx); err != nil {
		return err
	}
	_, err := s.Pool.Exec(ctx, "INSERT INTO "+pgManifestTable+" (store, embedder, dim, created) VALUES ($1, $2, $3, $4)"+
		" ON CONFLICT (store) DO UPDATE SET embedder = EXCLUDED.embedder, dim = EXCLUDED.dim, created = EXCLUDED.created",
		s.name, m.Embedder, m.Dim, m.Created)
	if err != nil {
		return fmt.Errorf("write %s: %w", pgManifestTable, err)
	}
	return nil
}

// manifestClaimer is a store whose manifest check and record is atomic
// across processes (pgStore): claimManifest records m unless a manifest is
// there (found) and fails like checkManifest when the store holds chunks
// without one.
type manifestClaimer interface {
	claimManifest(ctx context.Context, m indexManifest) (found bool, err error)
}

// claimManifest implements manifestClaimer under the stores' schema lock.
func (s *pgStore) claimManifest(ctx context.Context, m indexManifest) (found bool, err error) {
	err = s.WithSchemaLock(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+pgManifestTable+
			" (store text PRIMARY KEY, embedder text NOT NULL, dim int NOT NULL, created timestamptz NOT NULL)"); err != nil {
			return fmt.Errorf("create %s: %w", pgManifestTable, err)
		}
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgManifestTable+" WHERE store = $1)", s.name).Scan(&found); err != nil || found {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+s.Table()).Scan(&n); err != nil {
			return fmt.Errorf("count chunks: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("%w: %s holds %d chunks but no record of the embedder that built them; index into another --data directory",
				errEmbedderMismatch, s.describe(), n)
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+pgManifestTable+" (store, embedder, dim, created) VALUES ($1, $2, $3, $4)",
			s.name, m.Embedder, m.Dim, m.Created)
		return err
	})
	return found, err
}
