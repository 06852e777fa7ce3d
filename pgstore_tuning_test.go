package engine

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// pgTestFilterCorpus returns 3,000 chunks of 32 dimensions in which only 12
// have a URL under "rare/", far from the query in vector space.
func pgTestFilterCorpus() ([]*ai.Document, *pgBenchEmbedder, *ai.Document) {
	docs, _, emb := pgBenchClustered(3000, 32, 0)
	for i := range 12 {
		docs[i*250].Metadata[MetaURL] = fmt.Sprintf("rare/%d.pdf", i)
	}
	q := ai.DocumentFromText("the query", nil)
	emb.vecs[DocText(q)] = emb.vecs[DocText(docs[1])]
	return docs, emb, q
}

// TestPgvecStoreFilteredRetrieveReturnsK checks that a filtered search
// through the HNSW index returns k rows whenever k match, with the store's
// default iterative scan, while with IterativeScan "off" the index's
// ef_search candidates run out (which shows that the index is used).
func TestPgvecStoreFilteredRetrieveReturnsK(t *testing.T) {
	ctx := context.Background()
	docs, emb, q := pgTestFilterCorpus()
	// A database of its own where the planner neither scans the table nor
	// sorts, so that the searches go through the HNSW index however small
	// the table.
	dsn := pgTestFreshDB(t, pgTestDSN(t))
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	for _, set := range []string{"enable_seqscan = off", "enable_sort = off", "jit = off"} {
		if _, err = conn.Exec(ctx, `ALTER DATABASE `+pgvecIdent(strings.TrimPrefix(u.Path, "/"))+` SET `+set); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	name := pgTestStoreName(t)
	s, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 32, &PgvecOptions{EfSearch: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	const k = 10
	resp, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: map[string]any{"k": k, "urlPrefix": "rare/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Documents) != k {
		t.Errorf("filtered retrieve returned %d documents, want %d", len(resp.Documents), k)
	}
	for _, d := range resp.Documents {
		if !strings.HasPrefix(d.Metadata[MetaURL].(string), "rare/") {
			t.Errorf("filtered retrieve returned url %v", d.Metadata[MetaURL])
		}
	}
	// The same with a map of options, as the Genkit reflection API sends.
	resp, err = s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: map[string]any{"k": float64(k), "urlPrefix": "rare/", "efSearch": float64(40)}})
	if err != nil || len(resp.Documents) != k {
		t.Errorf("filtered retrieve with map options: %d documents, %v", len(resp.Documents), err)
	}
	docsWhere, err := s.retrieveWhere(ctx, q, k, 0, `starts_with(url, $3)`, []any{"rare/"})
	if err != nil || len(docsWhere) != k {
		t.Errorf("retrieveWhere: %d documents, %v", len(docsWhere), err)
	}

	off, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 32, &PgvecOptions{EfSearch: 40, IterativeScan: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	got, err := off.retrieveWhere(ctx, q, k, 0, `starts_with(url, $3)`, []any{"rare/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) >= k {
		t.Errorf("without an iterative scan the filtered HNSW search returned %d documents: the index was not used, the test proves nothing", len(got))
	}

	// The unfiltered search is unaffected, and more results than ef_search
	// come back in full.
	all, err := s.Retrieve(ctx, q, 300)
	if err != nil || len(all) != 300 {
		t.Errorf("Retrieve(300) with EfSearch 40: %d documents, %v", len(all), err)
	}
	if _, err := s.retrieveWhere(ctx, q, k, 0, "", []any{1}); err == nil {
		t.Error("extraArgs without extraWhere: no error")
	}
	for _, o := range []PgvecOptions{{EfSearch: 1001}, {IterativeScan: "sometimes"}, {writeMethod: 7}} {
		if _, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 32, &o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
}

// TestPgvecStoreWriteMethods writes the same documents with COPY, with
// multi-row INSERT and with the automatic choice, twice (the second time
// with changed metadata, overwriting), and checks that the tables agree.
func TestPgvecStoreWriteMethods(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	docs := pgTestDocs("src", "written", pgvecCopyMinRows+200)
	changed := make([]*ai.Document, len(docs))
	for i, d := range docs {
		changed[i] = ai.DocumentFromText(DocText(d), map[string]any{MetaSource: "src", MetaURL: "u", "rev": 2})
	}
	var tables []map[string]string
	for _, m := range []pgvecWriteMethod{pgvecWriteCopy, pgvecWriteInsert, pgvecWriteAuto} {
		name := pgTestStoreName(t)
		pgTestDropStore(t, dsn, name)
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, newTestEmbedder(16), dsn, 16, &PgvecOptions{writeMethod: m})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Index(ctx, docs); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if _, _, err := s.replaceSource(ctx, replaceScope{sources: []string{"src"}}, changed, nil); err != nil {
			t.Fatalf("%v: replace: %v", m, err)
		}
		// Two writes in one transaction reuse the staging table.
		err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			rows, err := pgvecPrepare(pgTestDocs("two", "writes", 200))
			if err != nil {
				return err
			}
			var ptrs []*pgvecRow
			for i := range rows {
				rows[i].vec = testVector(rows[i].content, 16)
				ptrs = append(ptrs, &rows[i])
			}
			if err := s.writeRows(ctx, tx, ptrs[:100], false); err != nil {
				return err
			}
			return s.writeRows(ctx, tx, ptrs[100:], false)
		})
		if err != nil {
			t.Fatalf("%v: two writes in a transaction: %v", m, err)
		}
		if s.noCopy.Load() {
			t.Errorf("%v: the native server was taken for one refusing COPY", m)
		}
		tables = append(tables, pgTestContents(t, s))
	}
	if len(tables[0]) != len(docs)+200 {
		t.Errorf("%d rows, want %d", len(tables[0]), len(docs)+200)
	}
	for i := 1; i < len(tables); i++ {
		if !mapsEqual(tables[0], tables[i]) {
			t.Errorf("write method %d wrote other rows than COPY", i)
		}
	}
}

// pgvecRefusedBase is the number of rows TestPgvecStoreCopyRefused writes
// before its COPY writes.
const pgvecRefusedBase = 2500

// TestPgvecStoreCopyRefused connects as a role that may not create
// temporary tables, so COPY's staging table is refused: pgvecWriteAuto
// falls back to INSERT (and logs it once), pgvecWriteCopy fails, nothing
// half-written stays.
func TestPgvecStoreCopyRefused(t *testing.T) {
	ctx := context.Background()
	admin := pgTestFreshDB(t, pgTestDSN(t))
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	u, _ := url.Parse(admin)
	db := strings.TrimPrefix(u.Path, "/")
	role := db + "_user"
	for _, stmt := range []string{
		`CREATE EXTENSION vector`,
		`CREATE ROLE ` + role + ` LOGIN`,
		`REVOKE TEMPORARY ON DATABASE ` + db + ` FROM PUBLIC`,
		`GRANT CREATE, USAGE ON SCHEMA public TO ` + role,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), pgTestDSN(t))
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		// After the database is dropped (cleanups run last-in first-out).
		_, _ = c.Exec(context.Background(), `DROP ROLE IF EXISTS `+role)
	})
	u.User = url.User(role)
	dsn := u.String()

	docs := pgTestDocs("src", "refused", pgvecCopyMinRows)
	var s *PgvecStore
	logs := pgTestLogs(func() {
		s, err = NewPgvecStore(ctx, nil, "refused", newTestEmbedder(16), dsn, 16)
		if err != nil {
			t.Fatal(err)
		}
		// Rows present first (INSERT, below the COPY threshold), so that
		// the writes below are not bulk loads, which COPY straight into
		// the chunk table without a staging table (pgstore_bulk_copy.go).
		for i := range pgvecRefusedBase / 500 {
			if err := s.Index(ctx, pgTestDocs("src", fmt.Sprintf("base%d", i), 500)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Index(ctx, docs); err != nil {
			t.Errorf("auto write on a server refusing COPY: %v", err)
		}
		if err := s.Index(ctx, pgTestDocs("src", "more", pgvecCopyMinRows)); err != nil {
			t.Errorf("second auto write: %v", err)
		}
	})
	defer s.Close()
	if !s.noCopy.Load() || strings.Count(logs, "refused COPY") != 1 {
		t.Errorf("fallback not recorded or not logged once: noCopy=%v, logs:\n%s", s.noCopy.Load(), logs)
	}
	if n := pgTestCount(t, s); n != pgvecRefusedBase+2*pgvecCopyMinRows {
		t.Errorf("%d rows after the fallback writes, want %d", n, pgvecRefusedBase+2*pgvecCopyMinRows)
	}

	strict, err := NewPgvecStoreWithOptions(ctx, nil, "refused", newTestEmbedder(16), dsn, 16, &PgvecOptions{writeMethod: pgvecWriteCopy})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	err = strict.Index(ctx, pgTestDocs("src", "strict", 100))
	if err == nil || !strings.Contains(err.Error(), "staging table") {
		t.Errorf("pgvecWriteCopy on a server refusing COPY: err = %v", err)
	}
	if n := pgTestCount(t, s); n != pgvecRefusedBase+2*pgvecCopyMinRows {
		t.Errorf("%d rows after the refused COPY, want the %d from before", n, pgvecRefusedBase+2*pgvecCopyMinRows)
	}
	if got := slices.Collect(func(yield func(string) bool) {
		for _, m := range []pgvecWriteMethod{pgvecWriteAuto, pgvecWriteCopy, pgvecWriteInsert, 9} {
			if !yield(m.String()) {
				return
			}
		}
	}); !slices.Equal(got, []string{"auto", "copy", "insert", "pgvecWriteMethod(9)"}) {
		t.Errorf("String() = %q", got)
	}
}

// pgTestContents returns id -> everything written of the row (content,
// metadata, hashes, embedder, vector) for every row of the store.
func pgTestContents(t testing.TB, s *PgvecStore) map[string]string {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT id, concat_ws('|', content, metadata::text, content_hash, text_hash, embedder, embedding::text) FROM `+pgvecIdent(s.Table()))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var id, v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPgvecStoreUpgradeToStoredTSVector turns a new store back into schema
// version 2 (full-text expression index, no tsv column, no postings) with
// chunks in it, and opens it again: the store is upgraded in place under
// the lock, says so in the log, and keyword search finds the old chunks
// through the new column and the new postings.
func TestPgvecStoreUpgradeToStoredTSVector(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	s := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	if err := s.Index(ctx, pgTestDocs("src", "upgraded", 30)); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range append(pgTestDropV4(s), []string{
		`DROP INDEX ` + pgvecIdent(s.names.tsv),
		`ALTER TABLE ` + pgvecIdent(s.Table()) + ` DROP COLUMN tsv`,
		pgvecFTSIndexSQL(s.names, "'simple'::regconfig"),
		`UPDATE ` + pgvecIdent(pgvecMetaTable) + ` SET schema_version = 2 WHERE store = '` + strings.ReplaceAll(name, "'", "''") + `'`,
	}...) {
		if _, err := s.Pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	s.Close()

	var buf strings.Builder
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&pgLockedWriter{w: &buf}, nil)))
	up, err := NewPgvecStore(ctx, nil, name, newTestEmbedder(16), dsn, 16)
	slog.SetDefault(old)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if m := up.migrationInfo(); m.FromVersion != 2 || m.ToVersion != pgvecSchemaVersion() || m.Created {
		t.Errorf("Migration() = %+v, want 2 -> %d", m, pgvecSchemaVersion())
	}
	if !strings.Contains(buf.String(), "schema upgraded in place") || !strings.Contains(buf.String(), "v3 stored tsvector column") ||
		!strings.Contains(buf.String(), "v4 keyword posting") {
		t.Errorf("no upgrade log line:\n%s", buf.String())
	}
	var n int
	if err := up.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(up.Table())+` WHERE tsv @@ plainto_tsquery('english', 'upgraded')`).Scan(&n); err != nil || n != 30 {
		t.Errorf("tsv column matches %d of 30 old chunks, %v", n, err)
	}
	var exprIndex bool
	if err := up.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = $1)`, up.names.fts).Scan(&exprIndex); err != nil || exprIndex {
		t.Errorf("the old expression index is still there (%v, %v)", exprIndex, err)
	}
	got, err := up.KeywordSearch(ctx, "upgraded topic3", 5, nil, "", nil)
	if err != nil || len(got) != 5 {
		t.Errorf("keyword search after the upgrade: %d docs, %v", len(got), err)
	}
	pgTestCheckPostings(t, up, 30)
}

// pgTestDropV4 returns the statements that take a store's schema version 4
// objects away (posting and statistics tables, triggers, function).
func pgTestDropV4(s *PgvecStore) []string {
	return []string{
		`DROP TRIGGER askyourdocs_chunk_delete ON ` + pgvecIdent(s.Table()),
		`DROP TRIGGER askyourdocs_chunk_truncate ON ` + pgvecIdent(s.Table()),
		`DROP TABLE ` + pgvecIdent(s.names.kw),
		`DROP TABLE ` + pgvecIdent(s.names.kwDF),
		`DROP FUNCTION ` + pgvecIdent(s.names.kwSync),
	}
}

// pgTestCheckPostings checks that the store's frequency table counts
// chunks chunks and their summed length, that each chunk has its
// empty-term posting, that every posting belongs to a chunk, and that the
// frequency of every term is its number of postings.
func pgTestCheckPostings(t *testing.T, s *PgvecStore, chunks int) {
	t.Helper()
	ctx := context.Background()
	kw, df := pgvecIdent(s.names.kw), pgvecIdent(s.names.kwDF)
	var n, total, rows, sum, orphans, wrongDF int64
	err := s.Pool.QueryRow(ctx, `SELECT
		(SELECT coalesce(sum(df), 0) FROM `+df+` WHERE term = ''),
		(SELECT coalesce(sum(len), 0) FROM `+df+` WHERE term = ''),
		(SELECT count(*) FROM `+kw+` WHERE term = ''),
		(SELECT coalesce(sum(len), 0) FROM `+kw+` WHERE term = ''),
		(SELECT count(*) FROM `+kw+` k WHERE NOT EXISTS (SELECT 1 FROM `+pgvecIdent(s.Table())+` c WHERE c.id = replace(k.cid::text, '-', ''))),
		(SELECT count(*) FROM (SELECT term, count(*) AS n FROM `+kw+` GROUP BY term) a
			FULL JOIN (SELECT term, sum(df) AS n FROM `+df+` GROUP BY term HAVING sum(df) <> 0) b USING (term)
			WHERE a.n IS DISTINCT FROM b.n)`).Scan(&n, &total, &rows, &sum, &orphans, &wrongDF)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(chunks) || rows != int64(chunks) || total != sum || orphans != 0 || wrongDF != 0 || (chunks > 0 && total == 0) {
		t.Errorf("frequencies: n=%d total=%d, %d terms wrong; %d empty-term postings summing %d; %d orphan postings; want %d chunks",
			n, total, wrongDF, rows, sum, orphans, chunks)
	}
}

// TestKeywordSearchSQLScoreOrder checks the BM25-style order within the
// any-word stage: a chunk with the rare word beats chunks with only the
// common one, and of two chunks with the same words the shorter wins.
func TestKeywordSearchSQLScoreOrder(t *testing.T) {
	ctx := context.Background()
	s := pgTestStore(t, newTestEmbedder(16), 16)
	var docs []*ai.Document
	for i := range 40 {
		docs = append(docs, ai.DocumentFromText(fmt.Sprintf("common filler text number %d", i), map[string]any{MetaURL: fmt.Sprintf("f%d", i)}))
	}
	docs = append(docs,
		ai.DocumentFromText("zebra sighting", map[string]any{MetaURL: "rare"}),
		ai.DocumentFromText("common zebra with a lot of other words that make this chunk much longer than it needs to be for anyone", map[string]any{MetaURL: "long"}),
		ai.DocumentFromText("common zebra", map[string]any{MetaURL: "short"}),
	)
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	got, err := s.KeywordSearch(ctx, "zebra common", 4, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, d := range got {
		urls = append(urls, d.Metadata[MetaURL].(string))
	}
	// All words: short before long (length); then any word: the rare word
	// before the common one.
	if len(urls) != 4 || urls[0] != "short" || urls[1] != "long" || urls[2] != "rare" {
		t.Errorf("order = %q, want short, long, rare, then a common-only chunk", urls)
	}
}
