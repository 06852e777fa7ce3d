package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPgvecKeywordFullScoringMatchesThreshold checks that the threshold
// search and the one-pass scoring it gives way to (prefixFull for the
// prefix stage, the stage's SQL for the keyword stage) return the first
// n of the unlimited ranking, with each forced in turn: a cost ratio of 0
// never gives way (the threshold search to its end, with and without the
// short lists read whole first), a huge one always does, before the first
// round.
func TestPgvecKeywordFullScoringMatchesThreshold(t *testing.T) {
	ctx := t.Context()
	docs, queries := pgKeywordBenchCorpus(2000)
	s := pgTestStoreWith(t, newTestEmbedder(8), 8, &PgvecOptions{TextSearchConfig: "english"})
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 24 {
		words := strings.Fields(DocText(docs[r.IntN(len(docs))]))
		q := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		if r.IntN(2) == 0 {
			q += " " + pgBenchWord(r, 9)
		}
		queries = append(queries, q)
	}
	defer func(v, w int64) { pgvecTopKCostRatio, pgvecTopKWholeList = v, w }(pgvecTopKCostRatio, pgvecTopKWholeList)
	for _, f := range []struct {
		where string
		args  []any
	}{{"", nil}, {"url <> $3", []any{"doc7.pdf"}}} {
		for _, q := range queries {
			pgvecTopKCostRatio = 16
			all, err := s.KeywordSearch(ctx, q, 0, nil, f.where, f.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range [][2]int64{{0, 0}, {0, 2048}, {16, 2048}, {1 << 40, 2048}} {
				ratio := c[0]
				pgvecTopKCostRatio, pgvecTopKWholeList = c[0], c[1]
				for _, n := range []int{1, 10} {
					got, err := s.KeywordSearch(ctx, q, n, nil, f.where, f.args)
					if err != nil {
						t.Fatal(err)
					}
					want := pgTestTexts(all[:min(n, len(all))])
					if g := pgTestTexts(got); !slices.Equal(g, want) {
						t.Errorf("filter %q, ratio %d, whole lists up to %d: query %q, max %d:\ngot  %.60q\nwant %.60q", f.where, ratio, c[1], q, n, g, want)
					}
				}
			}
		}
	}
}

// TestPgvecSchema6RebuildsImpactIndex checks the step to schema 7: a store
// recorded at version 6, its impact index without the term frequencies,
// gets the index with INCLUDE (tf, len) when it opens, and searches as
// before.
func TestPgvecSchema6RebuildsImpactIndex(t *testing.T) {
	ctx := context.Background()
	open, migrateFrom := pgTestSchemaStep(t)
	indexDef := func(s *PgvecStore) string {
		var def string
		if err := s.Pool.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = $1`, s.names.kw+"_rank").Scan(&def); err != nil {
			t.Fatal(err)
		}
		return def
	}
	s := open()
	if def := indexDef(s); !strings.Contains(def, "INCLUDE (tf, len)") {
		t.Fatalf("new store's impact index: %s, want INCLUDE (tf, len)", def)
	}
	if err := s.Index(ctx, kwTestDocs("d", "The ferry leaves at noon.", "A ferry timetable for the winter.", "Nothing here.")); err != nil {
		t.Fatal(err)
	}
	want, err := s.KeywordSearch(ctx, "ferry timetable", 0, nil, "", nil)
	if err != nil || len(want) != 2 {
		t.Fatalf("search: %q (%v), want 2 chunks", pgTestTexts(want), err)
	}
	// Version 6 had the index without the included columns.
	rank := pgvecIdent(s.names.kw + "_rank")
	for _, q := range []string{
		`DROP INDEX ` + rank,
		`CREATE INDEX ` + rank + ` ON ` + pgvecIdent(s.names.kw) + ` (term, w DESC, cid DESC)`,
	} {
		if _, err := s.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s = migrateFrom(s, 6)
	if def := indexDef(s); !strings.Contains(def, "INCLUDE (tf, len)") {
		t.Fatalf("after the migration: %s, want INCLUDE (tf, len)", def)
	}
	got, err := s.KeywordSearch(ctx, "ferry timetable", 0, nil, "", nil)
	if err != nil || !slices.Equal(pgTestTexts(got), pgTestTexts(want)) {
		t.Fatalf("after the migration: %q (%v), want %q", pgTestTexts(got), err, pgTestTexts(want))
	}
}
