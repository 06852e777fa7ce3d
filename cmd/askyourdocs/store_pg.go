package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// pgStore is a PgvecStore; it embeds *PgvecStore, so IndexSource diffs
// sources on it.
type pgStore struct {
	*askyourdocs.PgvecStore
	name string
}

// bulk runs an indexing run as one PgvecStore.Bulk run: sources are
// committed in batches (at most 10 s old) and, for a first index or a
// re-index of a large share, the search indexes are built once at the
// end.
func (s *pgStore) bulk(fn func(w askyourdocs.VectorStore) error) error {
	return s.Bulk(context.Background(), fn)
}

func (s *pgStore) chunkCount(ctx context.Context) (int, error) {
	var n int
	if err := s.Pool.QueryRow(ctx, "SELECT count(*) FROM "+s.Table()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count chunks: %w", err)
	}
	return n, nil
}

func (s *pgStore) describe() string { return "PostgreSQL table " + s.Table() }

// legacyManifest reads the record of the table an earlier version kept.
func (s *pgStore) legacyManifest(ctx context.Context) (indexManifest, bool, error) {
	var m indexManifest
	var exists bool
	if err := s.Pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgManifestTable).Scan(&exists); err != nil || !exists {
		return m, false, err
	}
	err := s.Pool.QueryRow(ctx, "SELECT embedder, dim, created FROM "+pgManifestTable+" WHERE store = $1", s.name).Scan(&m.Embedder, &m.Dim, &m.Created)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read %s: %w", pgManifestTable, err)
	}
	return m, true, nil
}

// dropLegacyManifest removes the store's row of the legacy table (the
// table itself may hold other stores' rows).
func (s *pgStore) dropLegacyManifest(ctx context.Context) error {
	if _, err := s.Pool.Exec(ctx, "DELETE FROM "+pgManifestTable+" WHERE store = $1", s.name); err != nil {
		return fmt.Errorf("remove the migrated record from %s: %w", pgManifestTable, err)
	}
	return nil
}
