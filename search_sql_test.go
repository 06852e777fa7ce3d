package engine

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// searchSQLTestStore returns a store holding a small corpus for keyword
// search tests.
func searchSQLTestStore(t *testing.T, opts *PgvecOptions) *PgvecStore {
	t.Helper()
	ctx := context.Background()
	s := pgTestStoreWith(t, newTestEmbedder(16), 16, opts)
	texts := []struct{ text, tag string }{
		{"The annual report covers revenue and costs", "finance"},
		{"Die Rechnungen werden monatlich geprüft", "finance"},
		{"Eine Rechnung muss binnen 30 Tagen bezahlt werden", "finance"},
		{"We are 100% sure about the deadline", "misc"},
		{"The variable a_b holds the total", "misc"},
		{"The variable axb is unrelated", "misc"},
		{"Mr O'Brien signed the contract", "legal"},
		{`Files live under C:\data\reports`, "misc"},
		{"The contract renewal deadline is in March", "legal"},
		{"Revenue grew while the costs of the contract fell", "finance"},
		{"Payment terms:\n\tnet   thirty days", "finance"},
	}
	var docs []*ai.Document
	for i, tx := range texts {
		docs = append(docs, ai.DocumentFromText(tx.text, map[string]any{MetaURL: "doc" + string(rune('a'+i)), "tag": tx.tag}))
	}
	// The same text under a second URL: returned once.
	docs = append(docs, ai.DocumentFromText(texts[8].text, map[string]any{MetaURL: "copy", "tag": "legal"}))
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKeywordSearchSQLStages checks the stages' order on a store ranking
// from its postings and, through a language not the store's own, from the
// tsvector.
func TestKeywordSearchSQLStages(t *testing.T) {
	t.Run("postings", func(t *testing.T) { keywordSearchSQLStages(t, searchSQLTestStore(t, nil)) })
	t.Run("tsvector", func(t *testing.T) {
		keywordSearchSQLStages(t, searchSQLTestStore(t, &PgvecOptions{TextSearchConfig: "english"}))
	})
}

func keywordSearchSQLStages(t *testing.T, s *PgvecStore) {
	ctx := context.Background()
	stop := map[string]bool{"the": true, "is": true, "in": true, "find": true}

	for _, tc := range []struct {
		name, query string
		max         int
		want        []string // texts, in order (prefix of the result when max is 0)
		wantLen     int
	}{
		{
			name:  "quoted phrase first",
			query: `find "renewal deadline" contract`,
			want: []string{
				"The contract renewal deadline is in March",
				"Mr O'Brien signed the contract",
			},
			wantLen: 3,
		},
		{
			name:  "long keyword prefix bridges inflection",
			query: "Rechnungen",
			want: []string{
				"Die Rechnungen werden monatlich geprüft",
				"Eine Rechnung muss binnen 30 Tagen bezahlt werden",
			},
			wantLen: 2,
		},
		{
			name:    "within a stage more keywords rank first",
			query:   "revenue costs contract",
			want:    []string{"Revenue grew while the costs of the contract fell"},
			wantLen: 4,
		},
		{
			name:    "full-text ranks documents with more keywords first",
			query:   "revenue costs annual",
			want:    []string{"The annual report covers revenue and costs", "Revenue grew while the costs of the contract fell"},
			wantLen: 2,
		},
		{
			name:    "substring stage finds parts of words",
			query:   "report",
			want:    []string{"The annual report covers revenue and costs", `Files live under C:\data\reports`},
			wantLen: 2,
		},
		{name: "capped", query: "the contract revenue", max: 2, wantLen: 2},
		{name: "deduplicated by text", query: `"renewal deadline"`, wantLen: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeywordSearchSQL(ctx, s.Pool, tc.query, tc.max, "simple", stop, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			texts := pgTestTexts(got)
			if len(texts) != tc.wantLen {
				t.Errorf("%d results, want %d: %q", len(texts), tc.wantLen, texts)
			}
			if len(texts) < len(tc.want) || !slices.Equal(texts[:len(tc.want)], tc.want) {
				t.Errorf("results %q, want to start with %q", texts, tc.want)
			}
		})
	}
}

func TestKeywordSearchSQLStopWordsAndMetacharacters(t *testing.T) {
	ctx := context.Background()
	s := searchSQLTestStore(t, nil)
	stop := map[string]bool{"the": true, "is": true, "a": true, "of": true, "or": true}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"the is of", nil},
		{"", nil},
		{`%`, nil},
		{`_`, nil},
		{`'`, nil},
		{`\`, nil},
		{`' OR 1=1 --`, nil},
		{`"100%"`, []string{"We are 100% sure about the deadline"}},
		{`"a_b"`, []string{"The variable a_b holds the total"}},
		{`"O'Brien"`, []string{"Mr O'Brien signed the contract"}},
		{`"C:\data"`, []string{`Files live under C:\data\reports`}},
		{`"%"`, []string{"We are 100% sure about the deadline"}},
		{`"NET thirty"`, []string{"Payment terms:\n\tnet   thirty days"}},
	} {
		got, err := KeywordSearchSQL(ctx, s.Pool, tc.query, 10, "simple", stop, "", nil)
		if err != nil {
			t.Errorf("query %q: %v", tc.query, err)
			continue
		}
		if texts := pgTestTexts(got); !slices.Equal(texts, tc.want) && !(len(texts) == 0 && len(tc.want) == 0) {
			t.Errorf("query %q = %q, want %q", tc.query, texts, tc.want)
		}
	}
}

func TestKeywordSearchSQLExtraWhere(t *testing.T) {
	ctx := context.Background()
	s := searchSQLTestStore(t, nil)
	got, err := KeywordSearchSQL(ctx, s.Pool, "contract", 10, "simple", nil, "metadata->>'tag' = $3 AND url <> $4", []any{"legal", "copy"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Mr O'Brien signed the contract", "The contract renewal deadline is in March"}
	texts := pgTestTexts(got)
	slices.Sort(texts)
	if !slices.Equal(texts, want) {
		t.Errorf("filtered results %q, want %q", texts, want)
	}
	if _, err := KeywordSearchSQL(ctx, s.Pool, "contract", 10, "simple", nil, "", []any{"legal"}); err == nil {
		t.Error("extraArgs without extraWhere: no error")
	}
	// The method uses the store's own configuration.
	if m, err := s.KeywordSearch(ctx, "contract", 10, nil, "metadata->>'tag' = $3", []any{"legal"}); err != nil || len(m) != 2 {
		t.Errorf("PgvecStore.KeywordSearch = %q, %v", pgTestTexts(m), err)
	}
}

func TestKeywordSearchSQLLanguage(t *testing.T) {
	ctx := context.Background()
	s := searchSQLTestStore(t, &PgvecOptions{TextSearchConfig: "english"})
	if s.curLang().name != "english" {
		t.Fatalf("language = %q", s.curLang().name)
	}
	// english stems "costs" and "cost" alike: the full-text stage finds it.
	got, err := KeywordSearchSQL(ctx, s.Pool, "cost", 10, "", nil, "", nil)
	if err != nil || len(got) != 2 {
		t.Errorf("stemmed search = %q, %v; want 2 results", pgTestTexts(got), err)
	}
	for _, bad := range []string{"english'", "simple; DROP TABLE x", "a b", "'simple'", "1simple", "x.y.z"} {
		if _, err := KeywordSearchSQL(ctx, s.Pool, "cost", 10, bad, nil, "", nil); !errors.Is(err, errPgvecLanguage) {
			t.Errorf("language %q: err = %v, want errPgvecLanguage", bad, err)
		}
	}
	if _, err := KeywordSearchSQL(ctx, s.Pool, "cost", 10, "pg_catalog.german", nil, "", nil); err != nil {
		t.Errorf("schema-qualified language: %v", err)
	}
}

func TestKeywordSearchSQLForeignPool(t *testing.T) {
	dsn := pgTestDSN(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := KeywordSearchSQL(context.Background(), pool, "xylophone", 1, "simple", nil, "", nil); !errors.Is(err, ErrNotPgvecPool) {
		t.Errorf("foreign pool: err = %v, want ErrNotPgvecPool", err)
	}
	if _, err := KeywordSearchSQL(context.Background(), nil, "xylophone", 1, "simple", nil, "", nil); err == nil {
		t.Error("nil pool: no error")
	}
	// No usable keyword: no result, and the pool is not looked at.
	if docs, err := KeywordSearchSQL(context.Background(), nil, `the "" ?`, 1, "simple", map[string]bool{"the": true}, "", nil); docs != nil || err != nil {
		t.Errorf("no keyword: %v, %v; want nil, nil", docs, err)
	}
	// A pool opened from a copy of a store's pool configuration carries the
	// store's tracer but is not the store's pool.
	s := pgTestStore(t, newTestEmbedder(16), 16)
	copied, err := pgxpool.NewWithConfig(context.Background(), s.Pool.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	if _, err := KeywordSearchSQL(context.Background(), copied, "xylophone", 1, "simple", nil, "", nil); !errors.Is(err, ErrNotPgvecPool) {
		t.Errorf("pool from a copied configuration: err = %v, want ErrNotPgvecPool", err)
	}
	// A closed store's pool names its store, which is closed.
	s.Close()
	if _, err := KeywordSearchSQL(context.Background(), s.Pool, "xylophone", 1, "simple", nil, "", nil); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("closed store's pool: err = %v, want ErrStoreClosed", err)
	}
}

// TestKeywordSearchSQLStoresApart checks that two stores' pools each find
// their own table: the lookup lives in each pool's configuration, not in a
// shared map.
func TestKeywordSearchSQLStoresApart(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(16)
	a := pgTestStore(t, emb, 16)
	b := pgTestStore(t, emb, 16)
	if a.Table() == b.Table() {
		t.Fatalf("both stores use table %q", a.Table())
	}
	if err := a.Index(ctx, []*ai.Document{ai.DocumentFromText("the xylophone in store a", map[string]any{"source": "a"})}); err != nil {
		t.Fatal(err)
	}
	if err := b.Index(ctx, []*ai.Document{ai.DocumentFromText("the marimba in store b", map[string]any{"source": "b"})}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s          *PgvecStore
		hit, other string
	}{{a, "xylophone", "marimba"}, {b, "marimba", "xylophone"}} {
		if got, err := KeywordSearchSQL(ctx, c.s.Pool, c.hit, 5, "", nil, "", nil); err != nil || len(got) != 1 {
			t.Errorf("store %s, %q: %q, %v; want its one chunk", c.s.Table(), c.hit, pgTestTexts(got), err)
		}
		if got, err := KeywordSearchSQL(ctx, c.s.Pool, c.other, 5, "", nil, "", nil); err != nil || len(got) != 0 {
			t.Errorf("store %s, %q: %q, %v; want none (the other store's chunk)", c.s.Table(), c.other, pgTestTexts(got), err)
		}
	}
}

// TestKeywordSearchSQLOwnTracer checks that a store created with the app's
// own tracer passes it every trace call its interfaces take (queries,
// batches, copies, acquires, releases) and that KeywordSearchSQL still finds
// the store from the pool.
func TestKeywordSearchSQLOwnTracer(t *testing.T) {
	ctx := context.Background()
	tr := &searchSQLCountingTracer{}
	s := searchSQLTestStore(t, &PgvecOptions{Tracer: tr, writeMethod: pgvecWriteCopy})
	got, err := KeywordSearchSQL(ctx, s.Pool, "contract", 0, "", nil, "", nil)
	if err != nil || len(got) == 0 {
		t.Fatalf("KeywordSearchSQL with the app's tracer: %d docs, %v", len(got), err)
	}
	b := &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("SELECT 2")
	if err := s.Pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	// The store wrote its chunks with COPY (pgvecWriteCopy): copies counted.
	for name, n := range map[string]int64{"query": tr.queries.Load(), "batch query": tr.batchQueries.Load(),
		"copy": tr.copies.Load(), "acquire": tr.acquires.Load(), "release": tr.releases.Load()} {
		if n == 0 {
			t.Errorf("the app's tracer saw no %s", name)
		}
	}
	// A tracer of queries only gets queries, and the store still works.
	q := &searchSQLQueryTracer{}
	s2 := searchSQLTestStore(t, &PgvecOptions{Tracer: q})
	if got, err := KeywordSearchSQL(ctx, s2.Pool, "contract", 0, "", nil, "", nil); err != nil || len(got) == 0 {
		t.Fatalf("KeywordSearchSQL with a query tracer: %d docs, %v", len(got), err)
	}
	if q.n.Load() == 0 {
		t.Error("the query tracer saw no query")
	}
}

// searchSQLQueryTracer counts the queries it sees; it traces nothing else.
type searchSQLQueryTracer struct{ n atomic.Int64 }

func (c *searchSQLQueryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *searchSQLQueryTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// searchSQLCountingTracer counts the calls of every tracer interface of pgx
// and pgxpool.
type searchSQLCountingTracer struct {
	queries, batchQueries, copies, acquires, releases atomic.Int64
}

func (c *searchSQLCountingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries.Add(1)
	return ctx
}

func (c *searchSQLCountingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *searchSQLCountingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *searchSQLCountingTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.batchQueries.Add(1)
}

func (c *searchSQLCountingTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *searchSQLCountingTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.copies.Add(1)
	return ctx
}

func (c *searchSQLCountingTracer) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {
}

func (c *searchSQLCountingTracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	c.acquires.Add(1)
	return ctx
}

func (c *searchSQLCountingTracer) TraceAcquireEnd(context.Context, *pgxpool.Pool, pgxpool.TraceAcquireEndData) {
}

func (c *searchSQLCountingTracer) TraceRelease(*pgxpool.Pool, pgxpool.TraceReleaseData) {
	c.releases.Add(1)
}

// TestKeywordSearchSQLTrigramFallback checks that the store gets a pg_trgm
// index when the extension is available and that searching with and without
// it gives the same results (the fallback scans the table).
func TestKeywordSearchSQLTrigramFallback(t *testing.T) {
	ctx := context.Background()
	s := searchSQLTestStore(t, nil)
	stop := map[string]bool{"the": true, "is": true, "in": true}
	queries := []string{`"renewal deadline" contract`, "Rechnungen", "revenue costs contract", "report",
		`"NET thirty"`, `"100%"`, "ab", "the contract revenue"}
	search := func() [][]string {
		var out [][]string
		for _, q := range queries {
			got, err := s.KeywordSearch(ctx, q, 0, stop, "", nil)
			if err != nil {
				t.Fatalf("query %q: %v", q, err)
			}
			out = append(out, pgTestTexts(got))
		}
		return out
	}
	var have bool
	if err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = $1)`, s.names.trgm).Scan(&have); err != nil {
		t.Fatal(err)
	}
	if !have {
		if os.Getenv("ASKYOURDOCS_REQUIRE_DB") == "1" {
			t.Fatal("no pg_trgm index: the test server lacks pg_trgm (ASKYOURDOCS_REQUIRE_DB=1 wants the full set-up, see docs/testing.md)")
		}
		t.Log("pg_trgm not available on this server: only the fallback is checked")
	}
	// Force index use where there is one, as the tiny table would be scanned.
	if _, err := s.Pool.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	with := search()
	if _, err := s.Pool.Exec(ctx, `DROP INDEX IF EXISTS `+pgvecIdent(s.names.trgm)); err != nil {
		t.Fatal(err)
	}
	without := search()
	if _, err := s.Pool.Exec(ctx, `RESET enable_seqscan`); err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		if !slices.Equal(with[i], without[i]) {
			t.Errorf("query %q: with trigram index %q, without %q", q, with[i], without[i])
		}
	}
	if len(with[0]) == 0 || len(with[1]) == 0 {
		t.Errorf("expected matches, got %q", with)
	}
}

// A query without a usable keyword (stop words, words under 3 letters,
// punctuation) returns nil without touching the pool, as in the original
// engine: no database needed.
func TestKeywordSearchSQLNoKeyword(t *testing.T) {
	stop := map[string]bool{"the": true, "und": true}
	for _, q := range []string{"", "   ", "the und", "a an im", "?! -- %", `"" ''`} {
		got, err := KeywordSearchSQL(context.Background(), nil, q, 10, "simple", stop, "", nil)
		if got != nil || err != nil {
			t.Errorf("nil pool, query %q: %v, %v; want nil, nil", q, got, err)
		}
	}
	// A real pool that could never connect: not acquired.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	got, err := KeywordSearchSQL(context.Background(), pool, "the und", 10, "simple", stop, "", nil)
	if got != nil || err != nil || pool.Stat().AcquireCount() != 0 {
		t.Errorf("unreachable pool: %v, %v, %d acquires; want nil, nil, 0", got, err, pool.Stat().AcquireCount())
	}
	// With a keyword the pool is used (and fails here).
	if _, err := KeywordSearchSQL(context.Background(), pool, "contract", 10, "simple", stop, "", nil); err == nil {
		t.Error("a keyword query on a foreign pool succeeded")
	}
}
