package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestPgvecRetrieveSettingsPerQuery checks that every vector search runs
// with its own hnsw.ef_search and hnsw.iterative_scan, set in the same round
// trip, and leaves nothing on the pooled connection: with each of pgx's
// query modes, on a pool of one connection shared by two stores with
// different settings, concurrently with other ef values. The filter reads
// the settings the query itself runs with, so a query that ran with other
// settings returns no rows.
func TestPgvecRetrieveSettingsPerQuery(t *testing.T) {
	ctx := context.Background()
	docs, emb, q := pgTestFilterCorpus()
	docs = docs[:200]
	base := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, base, name)
	const settingsWhere = `current_setting('hnsw.ef_search') = $3 AND current_setting('hnsw.iterative_scan') = $4`
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			sep := "?"
			if strings.Contains(base, "?") {
				sep = "&"
			}
			dsn := base + sep + "pool_max_conns=1&default_query_exec_mode=" + mode
			s, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 32, &PgvecOptions{EfSearch: 77})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Index(ctx, docs); err != nil {
				t.Fatal(err)
			}
			// A second store on the same table whose requests go through the
			// first one's pool, as an app's shared pool would carry them.
			strict, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 32, &PgvecOptions{IterativeScan: "strict_order"})
			if err != nil {
				t.Fatal(err)
			}
			own := strict.Pool
			strict.Pool = s.Pool
			defer func() { strict.Pool = own; strict.Close() }()

			check := func(st *PgvecStore, ef int, wantEf, wantScan string) error {
				got, err := st.retrieveWhere(ctx, q, 5, ef, settingsWhere, []any{wantEf, wantScan})
				if err != nil {
					return err
				}
				if len(got) != 5 {
					return fmt.Errorf("ef %d: %d rows with ef_search %s and iterative_scan %s, want 5: the query ran with other settings", ef, len(got), wantEf, wantScan)
				}
				return nil
			}
			// Nothing stays on the connection (the pool has only one).
			leftover := func(after string) {
				t.Helper()
				var ef, scan string
				if err := s.Pool.QueryRow(ctx, `SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')`).Scan(&ef, &scan); err != nil {
					t.Fatal(err)
				}
				if ef != "40" || scan != "off" {
					t.Errorf("after %s the connection has ef_search %s, iterative_scan %s; want pgvector's defaults 40, off", after, ef, scan)
				}
			}
			if err := check(s, 0, "77", "relaxed_order"); err != nil {
				t.Error(err)
			}
			leftover("a filtered search")
			if err := check(s, 300, "300", "relaxed_order"); err != nil {
				t.Error(err)
			}
			if err := check(strict, 0, "100", "strict_order"); err != nil {
				t.Error(err)
			}
			leftover("a filtered search of the other store")
			if _, err := s.Retrieve(ctx, q, 5); err != nil {
				t.Fatal(err)
			}
			leftover("an unfiltered search")

			// Concurrent requests with different settings through the one
			// connection.
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for g := range 8 {
				wg.Go(func() {
					for i := range 8 {
						st, want := s, "relaxed_order"
						if (g+i)%2 == 1 {
							st, want = strict, "strict_order"
						}
						ef := 20 + 10*g + i
						if err := check(st, ef, fmt.Sprint(ef), want); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
