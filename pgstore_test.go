package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// pgTestContainer is the pgvector container started (once per test binary)
// when no ASKYOURDOCS_TEST_DSN is set and a local Docker engine answers.
// Testcontainers' reaper removes it when the test binary exits.
var pgTestContainer struct {
	once sync.Once
	dsn  string
	err  error
}

// pgTestDSN returns the DSN of a Postgres with pgvector for integration
// tests: ASKYOURDOCS_TEST_DSN if set; else a pgvector/pgvector:pg17
// container when a local Docker engine answers; else the test is skipped,
// or fails when ASKYOURDOCS_REQUIRE_DB=1 (as scripts/test sets it).
func pgTestDSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("ASKYOURDOCS_TEST_DSN"); dsn != "" {
		return dsn
	}
	if pgTestDockerAnswers() {
		pgTestContainer.once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ctr, err := tcpostgres.Run(ctx, "pgvector/pgvector:pg17", tcpostgres.BasicWaitStrategies())
			if err != nil {
				pgTestContainer.err = fmt.Errorf("start pgvector container: %w", err)
				return
			}
			pgTestContainer.dsn, pgTestContainer.err = ctr.ConnectionString(ctx, "sslmode=disable")
		})
		if pgTestContainer.err != nil {
			t.Fatal(pgTestContainer.err)
		}
		return pgTestContainer.dsn
	}
	const msg = "no Postgres with pgvector: set ASKYOURDOCS_TEST_DSN or run scripts/test"
	if os.Getenv("ASKYOURDOCS_REQUIRE_DB") == "1" {
		t.Fatal(msg + " (ASKYOURDOCS_REQUIRE_DB=1 forbids skipping)")
	}
	t.Skip(msg)
	return ""
}

// pgTestDockerAnswers reports whether a Docker engine answers /_ping on a
// local unix socket within a second. Remote engines (tcp DOCKER_HOST) are
// not used: tests never connect to non-loopback addresses.
func pgTestDockerAnswers() bool {
	sock := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		p, ok := strings.CutPrefix(h, "unix://")
		if !ok {
			return false
		}
		sock = p
	}
	conn, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 512)
	n, _ := conn.Read(buf)
	return bytes.HasPrefix(buf[:n], []byte("HTTP/1.")) && bytes.Contains(buf[:n], []byte(" 200 "))
}

// pgTestStoreName returns a store name of its own for the test, so tests
// (and repeated runs against one database) never share a table.
func pgTestStoreName(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "test/" + t.Name() + "/" + hex.EncodeToString(b[:])
}

// pgTestDropStore removes the table and meta row of the store called name
// when the test ends (after the stores' own cleanups, registered later).
func pgTestDropStore(t testing.TB, dsn, name string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop test store: %v", err)
			return
		}
		defer conn.Close(ctx)
		n := pgvecTableNames(name)
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+pgvecIdent(n.table)+`, `+pgvecIdent(n.kw)+`, `+pgvecIdent(n.kwDF)); err != nil {
			t.Errorf("drop test store: %v", err)
			return
		}
		if _, err := conn.Exec(ctx, `DROP FUNCTION IF EXISTS `+pgvecIdent(n.kwSync)); err != nil {
			t.Errorf("drop test store: %v", err)
		}
		if _, err := conn.Exec(ctx, `DELETE FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name); err != nil {
			t.Errorf("drop test store: %v", err)
		}
	})
}

// pgTestOpen opens a store called name (created when missing) with emb and
// dim, closed when the test ends.
func pgTestOpen(t testing.TB, dsn, name string, emb ai.Embedder, dim int) *PgvecStore {
	t.Helper()
	s, err := NewPgvecStore(context.Background(), nil, name, emb, dsn, dim)
	if err != nil {
		t.Fatalf("NewPgvecStore(%q): %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pgTestStore returns a new, empty store of its own for the test.
func pgTestStore(t testing.TB, emb ai.Embedder, dim int) *PgvecStore {
	t.Helper()
	return pgTestStoreWith(t, emb, dim, nil)
}

// pgTestStoreWith returns a new, empty store of its own with opts for the
// test or benchmark, closed when it ends.
func pgTestStoreWith(t testing.TB, emb ai.Embedder, dim int, opts *PgvecOptions) *PgvecStore {
	t.Helper()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	s, err := NewPgvecStoreWithOptions(context.Background(), nil, name, emb, dsn, dim, opts)
	if err != nil {
		t.Fatalf("NewPgvecStoreWithOptions(%q): %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pgTestTextConfig creates the text search configuration name, a copy of
// the configuration from, in the test database when it is missing.
func pgTestTextConfig(t testing.TB, name, from string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgTestDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '`+name+`') THEN
			CREATE TEXT SEARCH CONFIGURATION `+name+` (COPY = `+from+`);
		END IF; END $$`); err != nil {
		t.Fatal(err)
	}
}

// pgTestDocs returns n chunk documents of source src (url src+"/page"),
// whose texts start with prefix.
func pgTestDocs(src, prefix string, n int) []*ai.Document {
	docs := make([]*ai.Document, n)
	for i := range docs {
		docs[i] = ai.DocumentFromText(fmt.Sprintf("%s chunk %d about topic%d and subject%d", prefix, i, i%7, i%11),
			map[string]any{MetaSource: src, MetaURL: src + "/page", "n": i})
	}
	return docs
}

// pgTestRows returns id -> xmin (the transaction that last wrote the row) of
// every row in the store: equal maps mean nothing was rewritten.
func pgTestRows(t testing.TB, s *PgvecStore) map[string]string {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT id, xmin::text FROM `+pgvecIdent(s.Table()))
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string)
	for rows.Next() {
		var id, xmin string
		if err := rows.Scan(&id, &xmin); err != nil {
			t.Fatal(err)
		}
		out[id] = xmin
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func pgTestCount(t testing.TB, s *PgvecStore) int {
	t.Helper()
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM `+pgvecIdent(s.Table())).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPgvecTableNames(t *testing.T) {
	if got := pgvecTableNames("docs").table; got != "askyourdocs_docs" {
		t.Errorf("plain name: table %q, want askyourdocs_docs", got)
	}
	a, b := pgvecTableNames("my/docs"), pgvecTableNames("my_docs")
	if a.table == b.table {
		t.Errorf("my/docs and my_docs share table %q", a.table)
	}
	long := pgvecTableNames(strings.Repeat("Very Long Store Name ", 20))
	for _, n := range []string{long.table, long.hnsw, long.fts, long.urlSource, long.source, long.textHash} {
		if len(n) > 63 {
			t.Errorf("derived name %q is %d bytes, over Postgres' 63", n, len(n))
		}
	}
	if q := pgvecIdent(pgvecTableNames(`x"; DROP TABLE y; --`).table); strings.ContainsAny(strings.Trim(q, `"`), `"; `) {
		t.Errorf("hostile name gives identifier %s", q)
	}
}

func TestPgvecRetrieverK(t *testing.T) {
	for _, tc := range []struct {
		opts any
		want int
	}{
		{nil, 3},
		{&pgvecRetrieverOptions{K: 7}, 7},
		{&localvec.RetrieverOptions{K: 5}, 5},
		{map[string]any{"k": float64(4)}, 4},
		{&pgvecRetrieverOptions{}, 3},
	} {
		got, err := pgvecRetrieverK(tc.opts)
		if err != nil || got != tc.want {
			t.Errorf("pgvecRetrieverK(%#v) = %d, %v; want %d", tc.opts, got, err, tc.want)
		}
	}
	if _, err := pgvecRetrieverK("k=3"); err == nil {
		t.Error("string options: no error")
	}
}

func TestNewPgvecStoreBadArguments(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(8)
	const dsn = "postgres://u:p@127.0.0.1:1/db"
	for _, tc := range []struct {
		name string
		emb  ai.Embedder
		dim  int
		dsn  string
	}{
		{"", emb, 8, dsn},
		{"x", nil, 8, dsn},
		{"x", emb, -1, dsn},
		{"x", emb, 16001, dsn},
		{"x", emb, 8, "not a dsn ::"},
	} {
		if s, err := NewPgvecStore(ctx, nil, tc.name, tc.emb, tc.dsn, tc.dim); err == nil {
			s.Close()
			t.Errorf("NewPgvecStore(%q, %v, %d, %q): no error", tc.name, tc.emb, tc.dim, tc.dsn)
		}
	}
	_, err := NewPgvecStoreWithOptions(ctx, nil, "x", emb, dsn, 8, &PgvecOptions{TextSearchConfig: "english'; --"})
	if !errors.Is(err, errPgvecLanguage) {
		t.Errorf("hostile text search config: err = %v, want errPgvecLanguage", err)
	}
}

func TestPgvecStoreIndexRetrieveDelete(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(64)
	s := pgTestStore(t, emb, 64)

	docs := []*ai.Document{
		ai.DocumentFromText("The invoice is due within thirty days", map[string]any{MetaURL: "a.pdf", MetaSource: "finance"}),
		ai.DocumentFromText("Holiday requests go to the team lead", map[string]any{MetaURL: "b.pdf", MetaSource: "hr"}),
		ai.DocumentFromText("Parking spaces are assigned by lottery", map[string]any{MetaURL: "c.pdf", MetaSource: "hr"}),
		ai.DocumentFromText("Travel costs are refunded monthly", map[string]any{MetaURL: "c.pdf", MetaSource: "hr"}),
	}
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	got, err := s.Retrieve(ctx, ai.DocumentFromText("when is the invoice due", nil), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || DocText(got[0]) != DocText(docs[0]) {
		t.Fatalf("Retrieve top-2 = %v, want %q first", pgTestTexts(got), DocText(docs[0]))
	}
	if got[0].Metadata[MetaURL] != "a.pdf" || got[0].Metadata[MetaSource] != "finance" {
		t.Errorf("metadata not returned: %v", got[0].Metadata)
	}

	for _, opts := range []any{nil, &pgvecRetrieverOptions{K: 4}, &localvec.RetrieverOptions{K: 1}} {
		resp, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("parking lottery", nil), Options: opts})
		if err != nil {
			t.Fatalf("Retriever with %#v: %v", opts, err)
		}
		want, _ := pgvecRetrieverK(opts)
		if len(resp.Documents) != min(want, 4) || DocText(resp.Documents[0]) != DocText(docs[2]) {
			t.Errorf("Retriever with %#v: %v", opts, pgTestTexts(resp.Documents))
		}
	}

	srcs, err := s.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSrcs := []Source{{"a.pdf", "finance", 1, ""}, {"b.pdf", "hr", 1, ""}, {"c.pdf", "hr", 2, ""}}
	if !slices.Equal(srcs, wantSrcs) {
		t.Errorf("Sources = %v, want %v", srcs, wantSrcs)
	}
	if n, err := s.DeleteByURL(ctx, "c.pdf"); err != nil || n != 2 {
		t.Errorf("DeleteByURL(c.pdf) = %d, %v; want 2", n, err)
	}
	if n, err := s.DeleteBySource(ctx, "hr"); err != nil || n != 1 {
		t.Errorf("DeleteBySource(hr) = %d, %v; want 1", n, err)
	}
	if n, err := s.DeleteBySource(ctx, "nothing"); err != nil || n != 0 {
		t.Errorf("DeleteBySource(nothing) = %d, %v; want 0", n, err)
	}
	if n := pgTestCount(t, s); n != 1 {
		t.Errorf("%d chunks left, want 1", n)
	}
}

func pgTestTexts(docs []*ai.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = DocText(d)
	}
	return out
}

func TestPgvecStoreRetrieveMoreThanEfSearch(t *testing.T) {
	ctx := context.Background()
	s := pgTestStore(t, newTestEmbedder(32), 32)
	if err := s.Index(ctx, pgTestDocs("src", "many", 120)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Retrieve(ctx, ai.DocumentFromText("topic3", nil), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Errorf("Retrieve k=100 over 120 chunks gave %d, want 100 (HNSW ef_search raised)", len(got))
	}
	if _, err := s.Retrieve(ctx, ai.DocumentFromText("x", nil), 0); err == nil {
		t.Error("k=0: no error")
	}
}

func TestPgvecStoreSchemaAndIndexes(t *testing.T) {
	ctx := context.Background()
	s := pgTestStore(t, newTestEmbedder(16), 16)
	m := s.migrationInfo()
	if !m.Created || m.FromVersion != 0 || m.ToVersion != pgvecSchemaVersion() || m.DimensionChanged {
		t.Errorf("Migration() = %+v for a new store", m)
	}
	var version, dim int
	var table, ts string
	err := s.Pool.QueryRow(ctx, `SELECT chunk_table, schema_version, embedding_dim, ts_config FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).
		Scan(&table, &version, &dim, &ts)
	if err != nil || table != s.Table() || version != pgvecSchemaVersion() || dim != 16 || ts != defaultTextSearchLanguage {
		t.Errorf("meta row = %q %d %d %q, %v", table, version, dim, ts, err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE tablename = $1`, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(defs, "\n")
	for _, want := range []string{"USING hnsw (embedding vector_cosine_ops)", "USING gin (tsv)", "(url, source)", "(source)", "(text_hash)"} {
		if !strings.Contains(all, want) {
			t.Errorf("no index with %q among:\n%s", want, all)
		}
	}

	// The planner must be able to serve deletes and listings from indexes
	// (on a tiny table it would rather scan, so forbid that).
	if err := s.Index(ctx, pgTestDocs("src", "plan", 20)); err != nil {
		t.Fatal(err)
	}
	tbl := pgvecIdent(s.Table())
	for _, q := range []string{
		`EXPLAIN DELETE FROM ` + tbl + ` WHERE url = 'x'`,
		`EXPLAIN DELETE FROM ` + tbl + ` WHERE source = 'x'`,
		`EXPLAIN SELECT url, source, count(*) FROM ` + tbl + ` GROUP BY url, source ORDER BY source, url`,
		`EXPLAIN SELECT content FROM ` + tbl + ` ORDER BY embedding <=> (SELECT embedding FROM ` + tbl + ` LIMIT 1) LIMIT 5`,
	} {
		var plan []string
		err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, q)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if strings.Contains(plan[0], "Seq Scan") || !strings.Contains(strings.Join(plan, "\n"), "Index") {
			t.Errorf("%s uses no index:\n%s", q, strings.Join(plan, "\n"))
		}
	}
}

func TestPgvecStoreNamesDoNotCollide(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	base := pgTestStoreName(t)
	a, b := base+"/docs", base+"_docs"
	pgTestDropStore(t, dsn, a)
	pgTestDropStore(t, dsn, b)
	sa := pgTestOpen(t, dsn, a, newTestEmbedder(8), 8)
	sb := pgTestOpen(t, dsn, b, newTestEmbedder(8), 8)
	if sa.Table() == sb.Table() {
		t.Fatalf("stores %q and %q share table %q", a, b, sa.Table())
	}
	if err := sa.Index(ctx, pgTestDocs("s", "only in a", 3)); err != nil {
		t.Fatal(err)
	}
	if n := pgTestCount(t, sb); n != 0 {
		t.Errorf("store b sees %d chunks of store a", n)
	}
}

func TestPgvecStoreConcurrentStart(t *testing.T) {
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	ctx := context.Background()
	var wg sync.WaitGroup
	stores := make([]*PgvecStore, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate Genkit instances, as two processes would have.
			stores[i], errs[i] = NewPgvecStore(ctx, genkit.Init(ctx), name, newTestEmbedder(16), dsn, 16)
		}()
	}
	wg.Wait()
	created := 0
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("start %d: %v", i, errs[i])
		}
		defer s.Close()
		if s.migrationInfo().Created {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d of 2 concurrent starts created the schema, want exactly 1", created)
	}
	if err := stores[0].Index(ctx, pgTestDocs("s", "one", 2)); err != nil {
		t.Fatal(err)
	}
	if n := pgTestCount(t, stores[1]); n != 2 {
		t.Errorf("second store sees %d chunks, want 2", n)
	}
}

// pgTestLogs captures slog records at warn level and above while fn runs.
func pgTestLogs(fn func()) string {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	defer slog.SetDefault(old)
	fn()
	return buf.String()
}

func TestPgvecStoreDimensionChange(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)

	s16 := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	if err := s16.Index(ctx, pgTestDocs("s", "old", 5)); err != nil {
		t.Fatal(err)
	}
	s16.Close()

	// Same dimension: nothing changes.
	same := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	if m := same.migrationInfo(); m.Created || m.DimensionChanged || m.FromVersion != pgvecSchemaVersion() {
		t.Errorf("reopen at same dimension: %+v", m)
	}
	if n := pgTestCount(t, same); n != 5 {
		t.Errorf("reopen at same dimension kept %d of 5 chunks", n)
	}
	same.Close()

	var s32 *PgvecStore
	logs := pgTestLogs(func() {
		var err error
		s32, err = NewPgvecStoreWithOptions(ctx, nil, name, newTestEmbedder(32), dsn, 32, &PgvecOptions{DeleteOnDimensionChange: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s32.Close() })
	})
	m := s32.migrationInfo()
	if !m.DimensionChanged || m.PreviousDim != 16 || m.RemovedChunks != 5 || m.Created {
		t.Errorf("Migration() after 16 -> 32 = %+v", m)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "dimension changed") || !strings.Contains(logs, "removed=5") {
		t.Errorf("no warning about the dimension change; logs:\n%s", logs)
	}
	if n := pgTestCount(t, s32); n != 0 {
		t.Errorf("%d old chunks survive the dimension change", n)
	}
	if err := s32.Index(ctx, pgTestDocs("s", "new", 3)); err != nil {
		t.Fatalf("index at the new dimension: %v", err)
	}
	if got, err := s32.Retrieve(ctx, ai.DocumentFromText("new chunk 1", nil), 1); err != nil || len(got) != 1 {
		t.Errorf("retrieve at the new dimension: %v, %v", pgTestTexts(got), err)
	}
}

// TestPgvecStoreRecordedDimension: dimension 0 opens an existing store
// with the dimension it records (an embedder of another dimension then
// gets ErrDimensionMismatch and the chunks stay), and for a store that does
// not exist is an error wrapping ErrIndexUnrecorded that creates nothing.
func TestPgvecStoreRecordedDimension(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exists := func() (table, row bool) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgvecIdent(pgvecTableNames(name).table)).Scan(&table); err != nil {
			t.Fatal(err)
		}
		var meta bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgvecIdent(pgvecMetaTable)).Scan(&meta); err != nil {
			t.Fatal(err)
		}
		if meta {
			if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1)`, name).Scan(&row); err != nil {
				t.Fatal(err)
			}
		}
		return table, row
	}

	s, err := NewPgvecStoreWithOptions(ctx, nil, name, newTestEmbedder(16), dsn, 0, nil)
	if err == nil {
		s.Close()
		t.Fatal("dimension 0 for a store that does not exist: no error")
	}
	if !errors.Is(err, ErrIndexUnrecorded) || !strings.Contains(err.Error(), "needs an embedding dimension") {
		t.Errorf("dimension 0 for a store that does not exist: %v, want ErrIndexUnrecorded saying a new store needs a dimension", err)
	}
	if table, row := exists(); table || row {
		t.Fatalf("dimension 0 created the store: table %v, record %v", table, row)
	}

	s16 := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	if err := s16.Index(ctx, pgTestDocs("s", "old", 3)); err != nil {
		t.Fatal(err)
	}
	s16.Close()

	again := pgTestOpen(t, dsn, name, newTestEmbedder(16), 0)
	if m := again.migrationInfo(); m.Created || m.DimensionChanged {
		t.Errorf("reopen with dimension 0: %+v", m)
	}
	if err := again.Index(ctx, pgTestDocs("t", "more", 2)); err != nil {
		t.Fatalf("index after opening with the recorded dimension: %v", err)
	}
	if got, err := again.Retrieve(ctx, ai.DocumentFromText("old chunk 1", nil), 1); err != nil || len(got) != 1 {
		t.Errorf("retrieve after opening with the recorded dimension: %v, %v", pgTestTexts(got), err)
	}
	again.Close()

	other := pgTestOpen(t, dsn, name, newTestEmbedder(32), 0)
	if err := other.Index(ctx, pgTestDocs("u", "new", 1)); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("an embedder of another dimension on a store opened with dimension 0: %v, want ErrDimensionMismatch", err)
	}
	if n := pgTestCount(t, other); n != 5 {
		t.Errorf("the store holds %d chunks, want 5", n)
	}
}

func TestPgvecStoreIndexSkipsUnchangedAndReusesEmbeddings(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	s := pgTestStore(t, emb, 16)
	docs := pgTestDocs("s", "same", 10)
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if emb.docs.Load() != 10 {
		t.Fatalf("first Index embedded %d documents, want 10", emb.docs.Load())
	}
	before := pgTestRows(t, s)
	emb.calls.Store(0)
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if c := emb.calls.Load(); c != 0 {
		t.Errorf("Index of unchanged documents called the embedder %d times", c)
	}
	if after := pgTestRows(t, s); !mapsEqual(before, after) {
		t.Error("Index of unchanged documents rewrote rows")
	}

	// The same texts under another URL: new rows, vectors reused.
	emb.calls.Store(0)
	moved := make([]*ai.Document, len(docs))
	for i, d := range docs {
		moved[i] = ai.DocumentFromText(DocText(d), map[string]any{MetaSource: "s", MetaURL: "elsewhere"})
	}
	if err := s.Index(ctx, moved); err != nil {
		t.Fatal(err)
	}
	if c := emb.calls.Load(); c != 0 {
		t.Errorf("Index of known texts called the embedder %d times, want 0 (vectors reused)", c)
	}
	if n := pgTestCount(t, s); n != 20 {
		t.Errorf("%d rows, want 20", n)
	}
	// Equal texts within one call are embedded once.
	emb.docs.Store(0)
	twice := []*ai.Document{ai.DocumentFromText("brand new text", map[string]any{MetaURL: "x"}), ai.DocumentFromText("brand new text", map[string]any{MetaURL: "y"})}
	if err := s.Index(ctx, twice); err != nil {
		t.Fatal(err)
	}
	if d := emb.docs.Load(); d != 1 {
		t.Errorf("two equal new texts embedded %d times, want 1", d)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestPgvecStoreReplaceSource(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	s := pgTestStore(t, emb, 16)
	other := pgTestDocs("other", "unrelated", 3)
	if err := s.Index(ctx, other); err != nil {
		t.Fatal(err)
	}
	scope := replaceScope{sources: []string{"src"}}
	docs := pgTestDocs("src", "version one", 250)
	var last [2]int
	written, deleted, err := s.replaceSource(ctx, scope, docs, func(done, total int) { last = [2]int{done, total} })
	if err != nil || written != 250 || deleted != 0 || last != [2]int{250, 250} {
		t.Fatalf("first replace = %d, %d, %v, progress %v", written, deleted, err, last)
	}

	// Unchanged: nothing embedded, nothing rewritten.
	before := pgTestRows(t, s)
	emb.calls.Store(0)
	written, deleted, err = s.replaceSource(ctx, scope, docs, nil)
	if err != nil || written != 0 || deleted != 0 {
		t.Errorf("unchanged replace = %d, %d, %v; want 0, 0", written, deleted, err)
	}
	if c := emb.calls.Load(); c != 0 {
		t.Errorf("unchanged replace called the embedder %d times", c)
	}
	if after := pgTestRows(t, s); !mapsEqual(before, after) {
		t.Error("unchanged replace rewrote rows")
	}

	// One chunk changed, one dropped: one embedded, two old ones deleted.
	changed := slices.Clone(docs[:249])
	changed[10] = ai.DocumentFromText("a completely rewritten paragraph", changed[10].Metadata)
	emb.docs.Store(0)
	written, deleted, err = s.replaceSource(ctx, scope, changed, nil)
	if err != nil || written != 1 || deleted != 2 {
		t.Errorf("changed replace = %d, %d, %v; want 1, 2", written, deleted, err)
	}
	if d := emb.docs.Load(); d != 1 {
		t.Errorf("changed replace embedded %d documents, want 1", d)
	}
	if n := pgTestCount(t, s); n != 249+3 {
		t.Errorf("%d rows, want 252", n)
	}
}

func TestPgvecStoreReplaceSourceFailureKeepsOldVersion(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	s := pgTestStore(t, emb, 16)
	scope := replaceScope{sources: []string{"src"}}
	if _, _, err := s.replaceSource(ctx, scope, pgTestDocs("src", "old", 150), nil); err != nil {
		t.Fatal(err)
	}
	before := pgTestRows(t, s)

	boom := errors.New("embedder down")
	emb.calls.Store(0)
	emb.fail = func(call int64) error {
		if call == 2 {
			return boom
		}
		return nil
	}
	_, _, err := s.replaceSource(ctx, scope, pgTestDocs("src", "new", 250), nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the embedder's error", err)
	}
	if after := pgTestRows(t, s); !mapsEqual(before, after) {
		t.Errorf("failed replace left %d rows, want the old %d unchanged", len(after), len(before))
	}

	// Cancelled mid-run: the same.
	cctx, cancel := context.WithCancel(ctx)
	emb.fail = func(call int64) error {
		if call == 2 {
			cancel()
		}
		return nil
	}
	emb.calls.Store(0)
	_, _, err = s.replaceSource(cctx, scope, pgTestDocs("src", "newer", 250), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if after := pgTestRows(t, s); !mapsEqual(before, after) {
		t.Errorf("cancelled replace left %d rows, want the old %d unchanged", len(after), len(before))
	}
}

func TestPgvecStoreBadInput(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	s := pgTestStore(t, emb, 16)

	if err := s.Index(ctx, nil); err != nil {
		t.Errorf("Index(nil) = %v", err)
	}
	if err := s.Index(ctx, []*ai.Document{}); err != nil {
		t.Errorf("Index(empty) = %v", err)
	}
	for _, docs := range [][]*ai.Document{
		{ai.DocumentFromText("fine", nil), ai.DocumentFromText("  \n", nil)},
		{ai.DocumentFromText("fine", nil), nil},
		{{Metadata: map[string]any{MetaURL: "x"}}},
	} {
		if err := s.Index(ctx, docs); !errors.Is(err, ErrEmptyDocument) {
			t.Errorf("Index with an empty document: err = %v, want ErrEmptyDocument", err)
		}
	}
	if _, _, err := s.replaceSource(ctx, replaceScope{urls: []string{"x"}}, []*ai.Document{ai.DocumentFromText("", nil)}, nil); !errors.Is(err, ErrEmptyDocument) {
		t.Errorf("replaceSource with an empty document: err = %v", err)
	}

	boom := errors.New("embedder down")
	emb.fail = func(int64) error { return boom }
	if err := s.Index(ctx, pgTestDocs("s", "x", 3)); !errors.Is(err, boom) {
		t.Errorf("Index with failing embedder: err = %v", err)
	}
	emb.fail = nil

	// An embedder whose vectors disagree with the store's dimension.
	wrong := pgTestOpen(t, pgTestDSN(t), s.name, newTestEmbedder(8), 16)
	if err := wrong.Index(ctx, pgTestDocs("s", "x", 3)); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("Index with 8-dim vectors into 16: err = %v, want ErrDimensionMismatch", err)
	}
	if _, err := wrong.Retrieve(ctx, ai.DocumentFromText("x", nil), 1); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("Retrieve with 8-dim query: err = %v, want ErrDimensionMismatch", err)
	}
	if n := pgTestCount(t, s); n != 0 {
		t.Errorf("bad input wrote %d rows", n)
	}

	// Text Postgres cannot store as is (NUL, invalid UTF-8) is cleaned.
	if err := s.Index(ctx, []*ai.Document{ai.DocumentFromText("nul\x00byte and bad \xff utf8", nil)}); err != nil {
		t.Errorf("Index with NUL and invalid UTF-8: %v", err)
	}

	// Cancelled while indexing in batches: whole batches or nothing.
	cctx, cancel := context.WithCancel(ctx)
	emb.calls.Store(0)
	emb.fail = func(call int64) error {
		if call == 3 {
			cancel()
		}
		return nil
	}
	err := IndexInBatches(cctx, s, pgTestDocs("batched", "cancel", 500), nil)
	emb.fail = nil
	if !errors.Is(err, context.Canceled) {
		t.Errorf("IndexInBatches cancelled: err = %v", err)
	}
	if n, _ := s.DeleteBySource(ctx, "batched"); n%indexBatchSize != 0 || n > 300 {
		t.Errorf("cancelled IndexInBatches left %d chunks: not whole batches", n)
	}

	s.Close()
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	checks := map[string]error{
		"Index": s.Index(ctx, pgTestDocs("s", "x", 1)),
	}
	_, checks["Retrieve"] = s.Retrieve(ctx, ai.DocumentFromText("x", nil), 1)
	_, checks["Sources"] = s.Sources(ctx)
	_, checks["DeleteByURL"] = s.DeleteByURL(ctx, "x")
	_, checks["DeleteBySource"] = s.DeleteBySource(ctx, "x")
	_, checks["KeywordSearch"] = s.KeywordSearch(ctx, "x", 1, nil, "", nil)
	_, _, checks["replaceSource"] = s.replaceSource(ctx, replaceScope{}, pgTestDocs("s", "x", 1), nil)
	for op, err := range checks {
		if !errors.Is(err, ErrStoreClosed) {
			t.Errorf("%s after Close: err = %v, want ErrStoreClosed", op, err)
		}
	}
}

func TestPgvecStoreRetrieverRegistered(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	g := genkit.Init(ctx)
	s, err := NewPgvecStore(ctx, g, name, newTestEmbedder(8), dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if genkit.LookupRetriever(g, "pgvector/"+name) == nil {
		t.Errorf("retriever pgvector/%s not registered", name)
	}
	if s2, err := NewPgvecStore(ctx, g, name, newTestEmbedder(8), dsn, 8); err == nil {
		s2.Close()
		t.Error("second store of the same name in one Genkit instance: no error")
	}
}

func TestPgvecStoreIndexSource(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	s := pgTestStore(t, emb, 16)
	src := &ingestTestSource{url: "doc.pdf", texts: ingestTestTexts("v1", 230)}
	n, deleted, err := IndexSource(ctx, s, src, 500, 50, nil)
	if err != nil || n != 230 || deleted != 0 {
		t.Fatalf("first IndexSource = %d, %d, %v", n, deleted, err)
	}

	// Unchanged: zero embedder calls, no row rewritten.
	before := pgTestRows(t, s)
	emb.calls.Store(0)
	n, deleted, err = IndexSource(ctx, s, src, 500, 50, nil)
	if err != nil || n != 230 || deleted != 0 {
		t.Errorf("unchanged IndexSource = %d, %d, %v", n, deleted, err)
	}
	if c := emb.calls.Load(); c != 0 {
		t.Errorf("unchanged IndexSource called the embedder %d times, want 0", c)
	}
	if after := pgTestRows(t, s); !mapsEqual(before, after) {
		t.Error("unchanged IndexSource rewrote rows")
	}

	// A run failing mid-way leaves the previous version.
	boom := errors.New("embedder down")
	emb.fail = func(call int64) error {
		if call == 2 {
			return boom
		}
		return nil
	}
	_, _, err = IndexSource(ctx, s, &ingestTestSource{url: "doc.pdf", texts: ingestTestTexts("v2", 230)}, 500, 50, nil)
	emb.fail = nil
	if !errors.Is(err, boom) {
		t.Fatalf("failing IndexSource: err = %v", err)
	}
	if after := pgTestRows(t, s); !mapsEqual(before, after) {
		t.Errorf("failed IndexSource changed the store: %d rows, want the old %d", len(after), len(before))
	}

	// A new version replaces the old one.
	n, deleted, err = IndexSource(ctx, s, &ingestTestSource{url: "doc.pdf", texts: ingestTestTexts("v3", 10)}, 500, 50, nil)
	if err != nil || n != 10 || deleted != 230 {
		t.Errorf("new version IndexSource = %d, %d, %v; want 10, 230", n, deleted, err)
	}
	if c := pgTestCount(t, s); c != 10 {
		t.Errorf("%d rows after the new version, want 10", c)
	}
}

// pgTestAppFilter is an app's own retrieval filter.
type pgTestAppFilter struct{ Tag string }

// pgTestAppStore is an app's own richer store, as in the spec's "Extending a
// store": it embeds *PgvecStore and adds a filtered Retrieve (shadowing the
// embedded one) and a KeywordSearch built on KeywordSearchSQL, both against
// the exported Pool and Embedder.
type pgTestAppStore struct {
	*PgvecStore
}

func (s *pgTestAppStore) Retrieve(ctx context.Context, query *ai.Document, k int, filter pgTestAppFilter) ([]*ai.Document, error) {
	resp, err := s.Embedder.Embed(ctx, &ai.EmbedRequest{Input: []*ai.Document{query}})
	if err != nil {
		return nil, err
	}
	rows, err := s.Pool.Query(ctx, `SELECT content, metadata FROM `+pgx.Identifier{s.Table()}.Sanitize()+
		` WHERE metadata->>'tag' = $2 ORDER BY embedding <=> $1 LIMIT $3`,
		pgvector.NewVector(resp.Embeddings[0].Embedding), filter.Tag, k)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*ai.Document, error) {
		var text string
		var meta map[string]any
		err := r.Scan(&text, &meta)
		return ai.DocumentFromText(text, meta), err
	})
}

func (s *pgTestAppStore) KeywordSearch(ctx context.Context, query string, maxResults int, filter pgTestAppFilter) ([]*ai.Document, error) {
	return KeywordSearchSQL(ctx, s.Pool, query, maxResults, "simple", map[string]bool{"the": true},
		"metadata->>'tag' = $3", []any{filter.Tag})
}

// pgTestAppVectorStore is the app's own, larger interface.
type pgTestAppVectorStore interface {
	VectorStore
	Retrieve(ctx context.Context, query *ai.Document, k int, filter pgTestAppFilter) ([]*ai.Document, error)
	KeywordSearch(ctx context.Context, query string, maxResults int, filter pgTestAppFilter) ([]*ai.Document, error)
	Sources(ctx context.Context) ([]Source, error)
}

func TestPgvecStoreExtendedByApp(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	var app pgTestAppVectorStore = &pgTestAppStore{PgvecStore: pgTestStore(t, emb, 16)}

	red := &ingestTestSource{url: "red.pdf", texts: ingestTestTexts("red", 6), meta: map[string]any{"tag": "red"}}
	blue := &ingestTestSource{url: "blue.pdf", texts: ingestTestTexts("blue", 4), meta: map[string]any{"tag": "blue"}}
	for _, src := range []*ingestTestSource{red, blue} {
		if _, _, err := IndexSource(ctx, app, src, 500, 50, nil); err != nil {
			t.Fatalf("IndexSource(%s) with the app's store: %v", src.url, err)
		}
	}
	// The embedded store's diffing reaches through the app's type.
	calls := emb.calls.Load()
	if _, _, err := IndexSource(ctx, app, red, 500, 50, nil); err != nil || emb.calls.Load() != calls {
		t.Errorf("app store is not diffed: %d embed calls, %v", emb.calls.Load()-calls, err)
	}
	docs, err := app.Retrieve(ctx, ai.DocumentFromText("chunk about topic1", nil), 10, pgTestAppFilter{Tag: "blue"})
	if err != nil || len(docs) != 4 {
		t.Fatalf("filtered Retrieve = %d docs, %v; want 4", len(docs), err)
	}
	for _, d := range docs {
		if d.Metadata["tag"] != "blue" {
			t.Errorf("filtered Retrieve returned tag %v", d.Metadata["tag"])
		}
	}
	kw, err := app.KeywordSearch(ctx, "topic1 chunk", 10, pgTestAppFilter{Tag: "red"})
	if err != nil || len(kw) != 6 {
		t.Errorf("filtered KeywordSearch = %d docs, %v; want 6", len(kw), err)
	}
	if err := IndexInBatches(ctx, app, []*ai.Document{ai.DocumentFromText("extra", map[string]any{"tag": "red"})}, nil); err != nil {
		t.Errorf("IndexInBatches with the app's store: %v", err)
	}
	if srcs, err := app.Sources(ctx); err != nil || len(srcs) != 3 {
		t.Errorf("Sources = %v, %v", srcs, err)
	}
}
