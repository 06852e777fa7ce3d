package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestPgvecKeywordParityWithLocalvec indexes one corpus (breadcrumbs,
// repeated texts) into a PgvecStore ("english") and a LocalvecStore and
// checks that the PgvecStore's keyword search returns LocalvecStore's
// results first, in the same order up to exact ties, for the parity
// queries without quoted phrases or long keywords (whose phrase and
// prefix stages only the PgvecStore runs): the same BM25F score from the
// posting table. Its substring stage may add more after them.
func TestPgvecKeywordParityWithLocalvec(t *testing.T) {
	ctx := t.Context()
	docs := keywordParityDocs(400)
	local := keywordBenchStore(docs)
	s := pgTestStoreWith(t, newTestEmbedder(8), 8, &PgvecOptions{TextSearchConfig: "english"})
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, pgTestDistinctIDs(docs))
	stop := map[string]bool{"the": true}
	checked := 0
	for _, q := range append(keywordParityQueries(docs), keywordBenchQueries(docs[200:], 60)...) {
		if p := newKeywordPlan(q, stop); len(p.phrases) > 0 || len(p.prefixes) > 0 {
			continue
		}
		rank := keywordReferenceRank(t, docs, q, stop)
		for _, maxN := range []int{10, 0} {
			want, err := local.KeywordSearch(ctx, q, maxN, stop, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.KeywordSearch(ctx, q, maxN, stop, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < len(want) {
				t.Fatalf("query %q, max %d: %d results, want at least %d", q, maxN, len(got), len(want))
			}
			keywordSameOrder(t, fmt.Sprintf("query %q, max %d", q, maxN), pgTestMetaN(got[:len(want)]), want, rank)
		}
		if len(rank) > 0 {
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d queries with results were compared: the parity check checks too little", checked)
	}
}

// pgTestMetaN returns docs with their metadata "n" as keywordSameOrder
// compares it (JSON gives numbers back as float64).
func pgTestMetaN(docs []*ai.Document) []*ai.Document {
	out := make([]*ai.Document, len(docs))
	for i, d := range docs {
		meta := map[string]any{}
		for k, v := range d.Metadata {
			meta[k] = v
		}
		if f, ok := meta["n"].(float64); ok {
			meta["n"] = int(f)
		}
		out[i] = ai.DocumentFromText(DocText(d), meta)
	}
	return out
}

// pgTestDistinctIDs returns the number of chunks a PgvecStore holds after
// indexing docs: one per distinct chunk identity.
func pgTestDistinctIDs(docs []*ai.Document) int {
	ids, err := documentIdentities(docs)
	if err != nil {
		panic(err)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id.id] = true
	}
	return len(seen)
}

// TestPgvecKeywordPostingsFollowWrites checks that the posting table and
// statistics follow every way chunks change: indexing, a source
// replacement, an overwrite by another embedder, deleting by source, an
// app's own DELETE, TRUNCATE, and a change of the text search
// configuration (postings rebuilt with the new stemmer).
func TestPgvecKeywordPostingsFollowWrites(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	open := func(emb ai.Embedder, config string) *PgvecStore {
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 16, &PgvecOptions{TextSearchConfig: config, RebuildTextSearch: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open(newTestEmbedder(16), "simple")
	if err := s.Index(ctx, append(pgTestDocs("a", "alpha", 20), pgTestDocs("b", "beta", 10)...)); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, 30)
	if _, _, err := s.replaceSource(ctx, replaceScope{sources: []string{"a"}}, pgTestDocs("a", "gamma", 5), nil); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, 15)
	if got, err := s.KeywordSearch(ctx, "alpha", 0, nil, "", nil); err != nil || len(got) != 0 {
		t.Errorf("replaced chunks still found: %d, %v", len(got), err)
	}
	if got, err := s.KeywordSearch(ctx, "gamma", 0, nil, "", nil); err != nil || len(got) != 5 {
		t.Errorf("new chunks: %d, %v", len(got), err)
	}
	s.Close()

	// Another embedder overwrites the same chunk IDs.
	s = open(pgRenamedEmbedder{newTestEmbedder(16)}, "simple")
	if err := s.Index(ctx, pgTestDocs("b", "beta", 10)); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, 15)
	if n, err := s.DeleteBySource(ctx, "b"); err != nil || n != 10 {
		t.Fatalf("DeleteBySource = %d, %v", n, err)
	}
	pgTestCheckPostings(t, s, 5)
	if _, err := s.Pool.Exec(ctx, `DELETE FROM `+pgvecIdent(s.Table())+` WHERE content LIKE 'gamma chunk 1%'`); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, 4)
	if _, err := s.Pool.Exec(ctx, `TRUNCATE `+pgvecIdent(s.Table())); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, 0)

	// "english" stems what "simple" keeps: "topics" finds "topic3" only
	// through the rebuilt postings... and "chunks" finds "chunk".
	if err := s.Index(ctx, pgTestDocs("c", "delta", 6)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.KeywordSearch(ctx, "chunks", 0, nil, "metadata->>'source' = $3", []any{"c"}); err != nil || len(got) != 0 {
		t.Errorf("simple: %q found %d, %v; want none (no stemming, no substring)", "chunks", len(got), err)
	}
	s.Close()
	s = open(pgRenamedEmbedder{newTestEmbedder(16)}, "english")
	if !s.migrationInfo().TextSearchChanged {
		t.Fatalf("Migration() = %+v, want TextSearchChanged", s.migrationInfo())
	}
	pgTestCheckPostings(t, s, 6)
	got, err := s.KeywordSearch(ctx, "chunks", 0, nil, "", nil)
	if err != nil || len(got) != 6 {
		t.Errorf("english after the rebuild: %d results, %v; want 6", len(got), err)
	}
}

// TestPgvecKeywordCustomConfig checks a store whose text search
// configuration has no textAnalyzer (a copy of "english" under another
// name): it writes no postings and ranks from the tsvector column.
func TestPgvecKeywordCustomConfig(t *testing.T) {
	ctx := context.Background()
	pgTestTextConfig(t, "ayd_test_english", "english")
	s := pgTestStoreWith(t, newTestEmbedder(16), 16, &PgvecOptions{TextSearchConfig: "ayd_test_english"})
	if err := s.Index(ctx, pgTestDocs("c", "invoices", 4)); err != nil {
		t.Fatal(err)
	}
	var postings int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.kw)).Scan(&postings); err != nil || postings != 0 {
		t.Errorf("%d postings, %v; want none", postings, err)
	}
	got, err := s.KeywordSearch(ctx, "invoice", 0, nil, "", nil)
	if err != nil || len(got) != 4 {
		t.Errorf("search through the tsvector column: %d, %v; want 4", len(got), err)
	}
}

// pgRenamedEmbedder is the test embedder under another name: its vectors
// count as another embedder's.
type pgRenamedEmbedder struct{ *testEmbedder }

func (pgRenamedEmbedder) Name() string { return "test/renamed" }

// TestPgvecKeywordTopKMatchesFullRanking checks the threshold search
// (pgvecTopK, used for a limited search without a filter) against the
// stages' SQL, which scores every matching chunk (used for an unlimited
// search): the first n results must be the same chunks in the same order,
// for queries of frequent and rare words, long words (the prefix stage,
// also with a word no chunk has), and a quoted phrase; without a filter,
// with one that keeps almost every chunk (the threshold search checks it
// per chunk) and with one that keeps few (scored directly).
func TestPgvecKeywordTopKMatchesFullRanking(t *testing.T) {
	ctx := t.Context()
	docs, queries := pgKeywordBenchCorpus(3000)
	s := pgTestStoreWith(t, newTestEmbedder(8), 8, &PgvecOptions{TextSearchConfig: "english"})
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 40 {
		words := strings.Fields(DocText(docs[r.IntN(len(docs))]))
		q := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		switch i % 4 {
		case 1:
			q += " " + words[r.IntN(len(words))]
		case 2:
			q += " " + pgBenchWord(r, 9)
		case 3:
			q = words[r.IntN(len(words))]
		}
		queries = append(queries, q)
	}
	prefixStage := 0
	defer func(v int) { pgvecFewRows = v }(pgvecFewRows)
	for _, f := range []struct {
		name  string
		where string
		args  []any
		few   int // pgvecFewRows
	}{
		{"no filter", "", nil, pgvecFewRows},
		// Keeps almost every chunk: the threshold search with the filter.
		{"wide filter", "url <> $3", []any{"doc7.pdf"}, 100},
		// Keeps few: the chunks it keeps are scored directly.
		{"narrow filter", "url = ANY($3)", []any{[]string{"doc3.pdf", "doc40.pdf", "doc99.pdf"}}, pgvecFewRows},
	} {
		pgvecFewRows = f.few
		for _, q := range queries {
			if f.where == "" && len(newKeywordPlan(q, nil).prefixes) > 0 {
				prefixStage++
			}
			all, err := s.KeywordSearch(ctx, q, 0, nil, f.where, f.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 3, 10} {
				got, err := s.KeywordSearch(ctx, q, n, nil, f.where, f.args)
				if err != nil {
					t.Fatal(err)
				}
				want := pgTestTexts(all[:min(n, len(all))])
				if g := pgTestTexts(got); !slices.Equal(g, want) {
					t.Errorf("%s: query %q, max %d:\ngot  %.60q\nwant %.60q", f.name, q, n, g, want)
				}
			}
		}
	}
	if prefixStage < 10 {
		t.Fatalf("only %d queries have long keywords: the prefix stage is hardly checked", prefixStage)
	}
}

// TestPgvecSchema4ReindexesIdentifiers checks the step to schema 5: a store
// recorded at version 4 has its postings rebuilt when it opens, with the
// whole identifiers, so a whole identifier ranks its chunk first.
func TestPgvecSchema4ReindexesIdentifiers(t *testing.T) {
	ctx := context.Background()
	open, migrateFrom := pgTestSchemaStep(t)
	s := open()
	whole := "Set max_log_file_size to bound the log."
	scattered := "The max size of a log file: the log file size, the file size max."
	if err := s.Index(ctx, kwTestDocs("d", scattered, whole)); err != nil {
		t.Fatal(err)
	}
	// Version 4 postings lacked the identifier terms: drop those terms
	// (migrateFrom records version 4).
	if _, err := s.Pool.Exec(ctx, `DELETE FROM `+pgvecIdent(s.names.kw)+` WHERE term LIKE '%\_%'`); err != nil {
		t.Fatal(err)
	}
	// (The ranking is not compared before the migration: the rules after
	// the cut score the best chunks from their texts, as the current
	// analyzer reads them.)
	identPostings := func() int {
		t.Helper()
		var n int
		if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.kw)+` WHERE term = 'max_log_file_size'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := identPostings(); n != 0 {
		t.Fatalf("version 4 postings of the identifier: %d, want none", n)
	}
	s = migrateFrom(s, 4)
	if n := identPostings(); n != 1 {
		t.Errorf("after the migration: %d postings of the identifier, want 1", n)
	}
	got, err := s.KeywordSearch(ctx, "max_log_file_size", 0, nil, "", nil)
	if err != nil || len(got) != 2 || DocText(got[0]) != whole {
		t.Fatalf("after the migration: %q (%v), want %q first", kwTestTexts(got), err, whole)
	}
}

// TestPgvecSchema8ReanalysesAcronymPlurals checks the step to schema 9: a
// store recorded at version 8, whose postings hold an acronym's plural as
// CamelCase parts ("BIGNUMs" as "bignu" and "ms"), has them rebuilt when
// it opens: the parts' postings are gone.
func TestPgvecSchema8ReanalysesAcronymPlurals(t *testing.T) {
	ctx := context.Background()
	open, migrateFrom := pgTestSchemaStep(t)
	s := open()
	text := "BN_swap() exchanges two BIGNUMs."
	if err := s.Index(ctx, kwTestDocs("d", text)); err != nil {
		t.Fatal(err)
	}
	// As version 8 wrote them: the parts' postings beside the word's.
	kw := pgvecIdent(s.names.kw)
	if _, err := s.Pool.Exec(ctx, `INSERT INTO `+kw+` (term, cid, tf, len) SELECT p.term, cid, tf, len FROM `+kw+`, (VALUES ('bignu'), ('ms')) AS p(term) WHERE `+kw+`.term = 'bignum'`); err != nil {
		t.Fatal(err)
	}
	parts := func() int {
		t.Helper()
		var n int
		if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+kw+` WHERE term IN ('bignu', 'ms')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := parts(); n != 2 {
		t.Fatalf("version 8 postings of the parts: %d, want 2", n)
	}
	s = migrateFrom(s, 8)
	if n := parts(); n != 0 {
		t.Errorf("after the migration: %d postings of the parts, want none", n)
	}
	for q, want := range map[string]int{"ms": 0, "exchange BIGNUMs": 1} {
		if got, err := s.SearchText(ctx, q, 5, nil); err != nil || len(got) != want {
			t.Errorf("%q after the migration: %q (%v), want %d hits", q, kwTestTexts(got), err, want)
		}
	}
}

// pgTestSchemaStep is the set-up of a schema step test: open opens a fresh
// (dropped) English store of the test's name, and migrateFrom records s at
// schema version from, closes and reopens it, and checks that the opening
// migrated it from there to the current version.
func pgTestSchemaStep(t *testing.T) (open func() *PgvecStore, migrateFrom func(s *PgvecStore, from int) *PgvecStore) {
	t.Helper()
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	open = func() *PgvecStore {
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, newTestEmbedder(8), dsn, 8, &PgvecOptions{TextSearchConfig: "english"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	migrateFrom = func(s *PgvecStore, from int) *PgvecStore {
		t.Helper()
		if _, err := s.Pool.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET schema_version = $1 WHERE store = $2`, from, name); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = open()
		if m := s.migrationInfo(); m.FromVersion != from || m.ToVersion != pgvecSchemaVersion() {
			t.Fatalf("migration %+v, want from %d to %d", m, from, pgvecSchemaVersion())
		}
		return s
	}
	return open, migrateFrom
}
