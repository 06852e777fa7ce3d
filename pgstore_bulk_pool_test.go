package engine

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A DSN may cap the pool at one connection (pool_max_conns=1). A Bulk run
// that drops and rebuilds the indexes needs a connection of its own for
// the run, one for each batch commit and two for the rebuild side by side:
// it must still end, and leave every index built.
func TestPgvecBulkSmallPool(t *testing.T) {
	dsn := pgTestDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	sources, emb := pgBulkBenchSources(pgvecBulkFlushRows+300, pgBulkTestDim)
	s := pgTestStoreWithDSN(t, dsn+sep+"pool_max_conns=1", emb, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := s.Bulk(ctx, func(w VectorStore) error {
		for _, docs := range sources {
			if _, _, err := IndexSource(ctx, w, &pgBulkBenchSource{docs: docs}, 1200, 0, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Bulk with pool_max_conns=1: %v", err)
	}
	pgBulkCheckIndexes(t, s)
	pgTermsConsistent(t, s)
}
