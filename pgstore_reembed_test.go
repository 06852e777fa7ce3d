package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgReembedSnapshot is what a re-embedding migration must keep: every
// chunk's ID, text and metadata, as one string.
func pgReembedSnapshot(t testing.TB, q pgvecQueryRower, table string) (string, int) {
	t.Helper()
	var snap string
	var n int
	if err := q.QueryRow(context.Background(), `SELECT coalesce(md5(string_agg(id || content || metadata::text, '|' ORDER BY id)), ''), count(*) FROM `+
		pgvecIdent(table)).Scan(&snap, &n); err != nil {
		t.Fatal(err)
	}
	return snap, n
}

// pgReembedState returns "old" when every vector has dimension from and
// the store records from, "new" when every vector has dimension to, the
// store records to and no shadow column is left, else a description of
// the mix.
func pgReembedState(t testing.TB, conn *pgx.Conn, name, table string, from, to int) string {
	t.Helper()
	ctx := context.Background()
	var recorded, dimFrom, dimTo, n int
	if err := conn.QueryRow(ctx, `SELECT embedding_dim FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE vector_dims(embedding) = $1),
		count(*) FILTER (WHERE vector_dims(embedding) = $2) FROM `+pgvecIdent(table), from, to).Scan(&n, &dimFrom, &dimTo); err != nil {
		t.Fatal(err)
	}
	var shadow bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2)`, table, pgvecNextColumn).Scan(&shadow); err != nil {
		t.Fatal(err)
	}
	switch {
	case recorded == from && dimFrom == n:
		return "old"
	case recorded == to && dimTo == n && !shadow:
		return "new"
	}
	return fmt.Sprintf("mix: recorded dim %d, %d of %d vectors of dim %d, %d of dim %d, shadow column %v", recorded, dimFrom, n, from, dimTo, to, shadow)
}

// pgReembedCheckVectors fails unless every chunk's vector is the one emb
// gives its text.
func pgReembedCheckVectors(t testing.TB, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, table string, dim int) {
	t.Helper()
	rows, err := q.Query(context.Background(), `SELECT id, content, embedding FROM `+pgvecIdent(table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	bad := 0
	for rows.Next() {
		var id, content string
		var v pgvector.Vector
		if err := rows.Scan(&id, &content, &v); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v.Slice(), testVector(content, dim)) {
			bad++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Errorf("%d chunks have a vector other than the new embedder's", bad)
	}
}

// TestPgvecStoreReembedOnDimensionChange reopens a store of 16-dimensional
// vectors with a 32-dimensional embedder: the open changes nothing, writes
// and vector searches fail with ErrDimensionMismatch (keyword search
// works), then Reembed gives every chunk the new embedder's vector, keeping
// its ID, text and metadata; between the batches the old vectors answer
// 16-dimensional searches; afterwards the new embedder finds the chunks
// (through a second handle too), the HNSW index is back and the record
// names the new embedder. ReembedOnOpen does the same at start-up.
func TestPgvecStoreReembedOnDimensionChange(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	s16 := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	docs := append(pgTestDocs("a", "alpha", 70), pgTestDocs("b", "beta", 50)...)
	if err := s16.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	before, n := pgReembedSnapshot(t, s16.Pool, s16.Table())
	table := s16.Table()
	s16.Close()

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var progress [][2]int
	var midErr error
	report := func(done, total int) {
		progress = append(progress, [2]int{done, total})
		if midErr != nil || done == total {
			return
		}
		// Mid-migration the old vectors still answer a search with the
		// old embedder's query vector.
		q := pgvector.NewVector(testVector("alpha chunk 7 about topic0 and subject7", 16))
		var got string
		if err := conn.QueryRow(ctx, `SELECT content FROM `+pgvecIdent(table)+` ORDER BY embedding <=> $1 LIMIT 1`, q).Scan(&got); err != nil {
			midErr = fmt.Errorf("old-vector search after %d of %d: %w", done, total, err)
		} else if !strings.HasPrefix(got, "alpha chunk 7 ") {
			midErr = fmt.Errorf("old-vector search after %d of %d found %q", done, total, got)
		}
		if st := pgReembedState(t, conn, name, table, 16, 32); st != "old" {
			midErr = fmt.Errorf("after %d of %d: %s", done, total, st)
		}
	}
	emb32 := pgRenamedEmbedder{newTestEmbedder(32)}
	s32, err := NewPgvecStoreWithOptions(ctx, nil, name, emb32, dsn, 32, &PgvecOptions{ReembedBatch: 25})
	if err != nil {
		t.Fatal(err)
	}
	defer s32.Close()
	other := pgTestOpen(t, dsn, name, pgRenamedEmbedder{newTestEmbedder(32)}, 32)
	if st := pgReembedState(t, conn, name, table, 16, 32); st != "old" || emb32.docs.Load() != 0 {
		t.Fatalf("the open changed the store: %s, %d documents embedded", st, emb32.docs.Load())
	}
	if err := s32.Index(ctx, pgTestDocs("c", "gamma", 1)); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("Index before Reembed: %v, want ErrDimensionMismatch", err)
	}
	if _, _, err := s32.replaceSource(ctx, replaceScope{sources: []string{"c"}}, pgTestDocs("c", "gamma", 1), nil); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("a source replacement (IndexSource) before Reembed: %v, want ErrDimensionMismatch", err)
	}
	if _, err := s32.SearchVector(ctx, "beta chunk 12", 3, nil); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("SearchVector before Reembed: %v, want ErrDimensionMismatch", err)
	}
	if kw, err := s32.SearchText(ctx, "beta chunk 12", 3, nil); err != nil || len(kw) == 0 {
		t.Errorf("SearchText before Reembed: %d results, %v", len(kw), err)
	}
	reembedded, err := s32.Reembed(ctx, report)
	if err != nil || reembedded != n {
		t.Fatalf("Reembed = %d, %v, want %d", reembedded, err, n)
	}
	if midErr != nil {
		t.Error(midErr)
	}
	if _, err := s32.Reembed(ctx, nil); err == nil || errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("a second Reembed: %v, want the same-dimension error", err)
	}
	if hits, err := other.SearchVector(ctx, "beta chunk 12 about topic5 and subject1", 1, nil); err != nil || len(hits) != 1 {
		t.Errorf("a second handle after Reembed: %d hits, %v", len(hits), err)
	}
	m := s32.migrationInfo()
	if !m.DimensionChanged || m.PreviousDim != 16 || m.Reembedded != n || m.RemovedChunks != 0 || m.ReembedResumed {
		t.Errorf("Migration() = %+v, want %d chunks re-embedded from 16", m, n)
	}
	if len(progress) != (n+24)/25 || progress[len(progress)-1] != [2]int{n, n} {
		t.Errorf("progress reports %v, want %d batches ending at %d/%d", progress, (n+24)/25, n, n)
	}
	if after, got := pgReembedSnapshot(t, s32.Pool, s32.Table()); after != before || got != n {
		t.Errorf("chunks changed: %d before, %d after (texts and metadata equal: %v)", n, got, after == before)
	}
	if st := pgReembedState(t, conn, name, table, 16, 32); st != "new" {
		t.Errorf("after the migration: %s", st)
	}
	pgReembedCheckVectors(t, s32.Pool, s32.Table(), 32)
	got, err := s32.Retrieve(ctx, ai.DocumentFromText("beta chunk 12 about topic5 and subject1", nil), 1)
	if err != nil || len(got) != 1 || !strings.HasPrefix(DocText(got[0]), "beta chunk 12 ") {
		t.Errorf("retrieve with the new embedder: %v, %v", pgTestTexts(got), err)
	}
	if got[0].Metadata[MetaSource] != "b" {
		t.Errorf("metadata after the migration: %v", got[0].Metadata)
	}
	var hnsw bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = $1)`, s32.names.hnsw).Scan(&hnsw); err != nil || !hnsw {
		t.Errorf("HNSW index %s after the swap: %v, %v", s32.names.hnsw, hnsw, err)
	}
	info, found, err := s32.IndexInfo(ctx)
	if err != nil || !found || info.Embedder != "test/renamed" || info.Dim != 32 || info.Fusion != nil {
		t.Errorf("IndexInfo() after the migration = %+v, %v, %v", info, found, err)
	}
	// Indexing the same documents again embeds nothing: the chunks count
	// as the new embedder's.
	emb32.docs.Store(0)
	if err := s32.Index(ctx, docs); err != nil || emb32.docs.Load() != 0 {
		t.Errorf("re-index after the migration embedded %d documents, %v", emb32.docs.Load(), err)
	}
	pgTestCheckPostings(t, s32, n)

	// Reopening with the new dimension does nothing more.
	s32.Close()
	again := pgTestOpen(t, dsn, name, emb32, 32)
	if m := again.migrationInfo(); m.DimensionChanged || m.Reembedded != 0 {
		t.Errorf("second reopen: %+v", m)
	}
	again.Close()
	// ReembedOnOpen: back to 16 dimensions before the open returns.
	var opened [][2]int
	s16b, err := NewPgvecStoreWithOptions(ctx, nil, name, newTestEmbedder(16), dsn, 16, &PgvecOptions{ReembedOnOpen: true, ReembedBatch: 50,
		ReembedProgress: func(done, total int) { opened = append(opened, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s16b.Close()
	if m := s16b.migrationInfo(); !m.DimensionChanged || m.PreviousDim != 32 || m.Reembedded != n || len(opened) != (n+49)/50 {
		t.Errorf("ReembedOnOpen: %+v, progress %v", m, opened)
	}
	pgReembedCheckVectors(t, s16b.Pool, s16b.Table(), 16)
	if hits, err := s16b.SearchVector(ctx, "beta chunk 12 about topic5 and subject1", 1, nil); err != nil || len(hits) != 1 {
		t.Errorf("search after ReembedOnOpen: %d hits, %v", len(hits), err)
	}
}

// TestPgvecStoreTextSearchKept reopens an "english" store asking for
// "simple": without RebuildTextSearch it keeps "english" and warns; with it
// the configuration changes.
func TestPgvecStoreTextSearchKept(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	open := func(o *PgvecOptions) *PgvecStore {
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, newTestEmbedder(16), dsn, 16, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open(&PgvecOptions{TextSearchConfig: "english"})
	if err := s.Index(ctx, pgTestDocs("c", "delta", 6)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	logs := pgTestLogs(func() { s = open(&PgvecOptions{TextSearchConfig: "simple"}) })
	m := s.migrationInfo()
	if s.curLang().name != "english" || m.TextSearchChanged || m.TextSearchKept != "english" || m.TextSearchRequested != "simple" {
		t.Errorf("reopen asking for simple: language = %q, Migration() = %+v", s.curLang().name, m)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "keeping the recorded text search configuration") {
		t.Errorf("no warning about the kept configuration; logs:\n%s", logs)
	}
	if got, err := s.KeywordSearch(ctx, "chunks", 0, nil, "", nil); err != nil || len(got) != 6 {
		t.Errorf("english stemming kept: %d results, %v; want 6", len(got), err)
	}
	s.Close()
	// Without a configuration named the recorded one is kept too.
	s = open(nil)
	if s.curLang().name != "english" {
		t.Errorf("reopen without options: %q", s.curLang().name)
	}
	s.Close()
	s = open(&PgvecOptions{TextSearchConfig: "simple", RebuildTextSearch: true})
	if s.curLang().name != "simple" || !s.migrationInfo().TextSearchChanged {
		t.Errorf("with RebuildTextSearch: %q, %+v", s.curLang().name, s.migrationInfo())
	}
	if got, err := s.KeywordSearch(ctx, "chunks", 0, nil, "", nil); err != nil || len(got) != 0 {
		t.Errorf("simple after the rebuild: %d results, %v; want none", len(got), err)
	}
}

// pgReembedChildMain is the child of TestPgvecStoreKilledReembed: it opens
// the store with the 32-dimensional embedder and runs Reembed, reporting
// each batch; with PGCHILD_BLOCK=1 it stops inside the swap's transaction
// until killed.
func pgReembedChildMain(say func(string, ...any), in io.Reader) error {
	ctx := context.Background()
	if os.Getenv("PGCHILD_BLOCK") == "1" {
		pgvecReembedSwapHook = func(context.Context) error {
			say("in-swap")
			_, _ = io.Copy(io.Discard, in) // until killed
			return nil
		}
	}
	batch, _ := strconv.Atoi(os.Getenv("PGCHILD_N"))
	say("started")
	s, err := NewPgvecStoreWithOptions(ctx, nil, os.Getenv("PGCHILD_STORE"), pgRenamedEmbedder{newTestEmbedder(32)},
		os.Getenv("PGCHILD_DSN"), 32, &PgvecOptions{ReembedBatch: batch})
	if err != nil {
		return err
	}
	n, err := s.Reembed(ctx, func(done, total int) { say("progress %d/%d", done, total) })
	if err != nil {
		s.Close()
		return err
	}
	say("done reembedded=%d", n)
	return s.Close()
}

// TestPgvecStoreKilledReembed kills a process migrating a store from 16 to
// 32 dimensions with SIGKILL 10 times: 8 times after a random number of
// committed batches (each run continues where the last one's commits
// ended), then twice inside the swap's transaction. After every kill the
// store holds all its chunks, unchanged, with the old vectors or the new
// ones, never a mix; a last start completes the migration.
func TestPgvecStoreKilledReembed(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	s16 := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	if err := s16.Index(ctx, pgProcDocs("killed", "v1", 600)); err != nil {
		t.Fatal(err)
	}
	before, n := pgReembedSnapshot(t, s16.Pool, s16.Table())
	table := s16.Table()
	s16.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	seen := map[string]int{}
	for i := range 10 {
		block := i >= 8
		var committed int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(table)+` WHERE `+pgvecNextColumn+` IS NOT NULL`).Scan(&committed); err != nil && i > 0 {
			t.Fatal(err)
		}
		env := []string{"PGCHILD_DSN=" + dsn, "PGCHILD_STORE=" + name, "PGCHILD_N=10"}
		if block {
			env = append(env, "PGCHILD_BLOCK=1")
		}
		c := pgStartChild(t, "reembed", env...)
		c.waitFor(t, "started")
		if block {
			c.waitFor(t, "in-swap")
		} else {
			first := c.waitFor(t, "progress ")
			if want := fmt.Sprintf("progress %d/%d", committed+10, n); first != want {
				t.Fatalf("run %d after %d committed: first report %q, want %q", i, committed, first, want)
			}
			for range mrand.IntN(4) {
				c.waitFor(t, "progress ")
			}
		}
		if err := c.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for range c.lines {
		}
		<-c.done
		st := pgReembedState(t, conn, name, table, 16, 32)
		if st != "old" && st != "new" {
			t.Fatalf("kill %d: %s", i, st)
		}
		if snap, got := pgReembedSnapshot(t, conn, table); snap != before || got != n {
			t.Fatalf("kill %d: %d of %d chunks left or changed", i, got, n)
		}
		seen[st]++
	}
	t.Logf("state after the kills: %v", seen)
	s32, err := NewPgvecStoreWithOptions(ctx, nil, name, pgRenamedEmbedder{newTestEmbedder(32)}, dsn, 32, &PgvecOptions{ReembedOnOpen: true, ReembedBatch: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s32.Close()
	if m := s32.migrationInfo(); !m.ReembedResumed || !m.DimensionChanged || m.Reembedded != 0 {
		t.Errorf("resumed migration: %+v, want only the swap left", m)
	}
	if st := pgReembedState(t, conn, name, table, 16, 32); st != "new" {
		t.Fatalf("after the resumed migration: %s", st)
	}
	if snap, got := pgReembedSnapshot(t, conn, table); snap != before || got != n {
		t.Errorf("after the migration %d of %d chunks, unchanged: %v", got, n, snap == before)
	}
	pgReembedCheckVectors(t, conn, table, 32)
	// The bag-of-words test embedder hashes 600 numbers into 32 buckets:
	// the nearest chunk is one whose vector equals the query's.
	const q = "killed chunk 321 of version v1 about topic6"
	got, err := s32.Retrieve(ctx, ai.DocumentFromText(q, nil), 1)
	if err != nil || len(got) != 1 || !slices.Equal(testVector(DocText(got[0]), 32), testVector(q, 32)) {
		t.Errorf("retrieve after the migration: %v, %v", pgTestTexts(got), err)
	}
	pgTestCheckPostings(t, s32, n)
}
