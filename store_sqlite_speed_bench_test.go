package engine

import (
	"context"
	"database/sql"
	"flag"
	"html"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

var (
	sqliteSpeedPages     = flag.Int("sqlite-speed-pages", 500, "HTML pages of BenchmarkSQLiteKeywordVsFTS5 and BenchmarkSQLiteIndexVsJSON")
	sqliteSpeedManual    = flag.String("sqlite-speed-manual", "", "folder of HTML pages for the SQLite speed benchmarks (default: the Octave manual, else CMake's, else testdata/html)")
	sqliteSpeedQuestions = flag.Int("sqlite-speed-questions", 200, "questions of BenchmarkSQLiteKeywordVsFTS5")
)

// sqliteSpeedManuals are the HTML manuals the speed benchmarks read, the
// first one installed wins (none of the held-out manuals).
var sqliteSpeedManuals = []string{
	"/usr/share/doc/octave/octave.html",
	"/usr/share/doc/cmake-data/html",
	"testdata/html",
}

// sqliteSpeedPagesOf returns the first n HTML files (by path) under the
// benchmarks' manual and the manual's path.
func sqliteSpeedPagesOf(b *testing.B, n int) ([]string, string) {
	b.Helper()
	dirs := sqliteSpeedManuals
	if *sqliteSpeedManual != "" {
		dirs = []string{*sqliteSpeedManual}
	}
	for _, dir := range dirs {
		var pages []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isHTMLExt(filepath.Ext(p)) {
				pages = append(pages, p)
			}
			return nil
		})
		if len(pages) == 0 {
			continue
		}
		slices.Sort(pages)
		return pages[:min(n, len(pages))], dir
	}
	b.Skip("no HTML manual found")
	return nil, ""
}

var (
	sqliteSpeedHeadingRE = regexp.MustCompile(`(?is)<h[1-4][^>]*>(.*?)</h[1-4]>`)
	sqliteSpeedTagRE     = regexp.MustCompile(`(?s)<[^>]*>`)
	sqliteSpeedNumberRE  = regexp.MustCompile(`^[\d.A-Z]*\d[\d.]*\s+`)
)

// sqliteSpeedQuestionsOf returns up to n distinct questions: the headings
// of the pages (h1-h4, section numbers removed, at least two words), in
// page order, as the dev evaluation's questions are.
func sqliteSpeedQuestionsOf(pages []string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pages {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, m := range sqliteSpeedHeadingRE.FindAllSubmatch(raw, -1) {
			h := html.UnescapeString(sqliteSpeedTagRE.ReplaceAllString(string(m[1]), " "))
			h = strings.Join(strings.Fields(h), " ")
			h = sqliteSpeedNumberRE.ReplaceAllString(h, "")
			if len(strings.Fields(h)) < 2 || seen[strings.ToLower(h)] {
				continue
			}
			seen[strings.ToLower(h)] = true
			out = append(out, h)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

// sqliteSpeedIndex indexes pages into store as the CLI does: one
// IndexSource per file in order, with the CLI's chunking, while
// GOMAXPROCS workers extract up to 2 x GOMAXPROCS files ahead (the CLI's
// prefetchFiles). It returns the HTML bytes read.
func sqliteSpeedIndex(b *testing.B, store VectorStore, pages []string) int64 {
	b.Helper()
	ctx := context.Background()
	workers := runtime.GOMAXPROCS(0)
	srcs := make([]*sqliteSpeedSource, len(pages))
	for i, p := range pages {
		fs, err := NewFileSource(p)
		if err != nil {
			b.Fatal(err)
		}
		srcs[i] = &sqliteSpeedSource{FileSource: fs, done: make(chan struct{})}
	}
	window := make(chan struct{}, 2*workers)
	todo := make(chan *sqliteSpeedSource)
	go func() {
		defer close(todo)
		for _, src := range srcs {
			window <- struct{}{}
			todo <- src
		}
	}()
	for range workers {
		go func() {
			for src := range todo {
				src.paras, src.err = src.FileSource.Fetch(ctx)
				close(src.done)
			}
		}()
	}
	var bytes int64
	for i, src := range srcs {
		if _, _, err := IndexSource(ctx, store, src, 1200, 150, nil); err != nil {
			b.Fatal(err)
		}
		<-window
		if fi, err := os.Stat(pages[i]); err == nil {
			bytes += fi.Size()
		}
	}
	return bytes
}

// sqliteSpeedSource is a FileSource whose Fetch returns what a worker
// extracted ahead.
type sqliteSpeedSource struct {
	*FileSource
	done  chan struct{}
	paras []Paragraph
	err   error
}

func (s *sqliteSpeedSource) Fetch(ctx context.Context) ([]Paragraph, error) {
	<-s.done
	return s.paras, s.err
}

// sqliteSpeedFTS5 builds the anchor of BenchmarkSQLiteKeywordVsFTS5: a
// plain FTS5 table (porter stemmer over unicode61 tokens) of the chunk
// texts of store, in a database of its own.
func sqliteSpeedFTS5(b *testing.B, store *SQLiteStore) *sql.DB {
	b.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "fts5.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')`); err != nil {
		b.Fatal(err)
	}
	rows, err := store.DB().QueryContext(ctx, `SELECT text FROM chunks ORDER BY rid`)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			b.Fatal(err)
		}
		texts = append(texts, t)
	}
	rows.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range texts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t (body) VALUES (?)`, t); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t (t) VALUES ('optimize')`); err != nil {
		b.Fatal(err)
	}
	return db
}

var sqliteSpeedWordRE = regexp.MustCompile(`\w+`)

// sqliteSpeedFTS5Query runs the anchor query for question: an OR of its
// words ranked by bm25(), the first k rows with their texts (what the
// dev evaluation's FTS5 baseline, scripts/dev-eval/bm25.py, asks).
func sqliteSpeedFTS5Query(ctx context.Context, db *sql.DB, question string, k int) (int, error) {
	words := sqliteSpeedWordRE.FindAllString(strings.ToLower(question), -1)
	if len(words) == 0 {
		return 0, nil
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid, body FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?`, strings.Join(words, " OR "), k)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var rid int64
		var body string
		if err := rows.Scan(&rid, &body); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}

// BenchmarkSQLiteKeywordVsFTS5 indexes the first -sqlite-speed-pages
// pages of an HTML manual (the Octave manual when installed) into an
// SQLiteStore with the CLI's embedder and chunking, and the same chunk
// texts into a plain FTS5 table; it then times, per question (the pages'
// headings, -sqlite-speed-questions of them), the store's keyword list
// (SearchText, defaultSearchDepth results), the FTS5 anchor (an OR of the
// question's words ranked by bm25(), as many rows with their texts) and
// the store's fusion (Search with nil options), all warm (after one round
// over every question); one iteration asks every question once. It
// reports the p50 of each and our p50s as ratios of the anchor's, and the
// keyword list's p50 in two first rounds: with SQLiteStore's posting
// cache emptied before each question (uncached: a question of new
// terms) and emptied once before the round (first ask: each question
// asked once, as the CLI's eval asks, the cache holding the terms of the
// questions before it). The warm rounds repeat questions the cache has
// seen.
func BenchmarkSQLiteKeywordVsFTS5(b *testing.B) {
	ctx := context.Background()
	sqliteSpeedQuiet(b)
	pages, manual := sqliteSpeedPagesOf(b, *sqliteSpeedPages)
	questions := sqliteSpeedQuestionsOf(pages, *sqliteSpeedQuestions)
	if len(questions) == 0 {
		b.Skip("no headings to ask in " + manual)
	}
	store, err := NewSQLiteStore(ctx, genkit.Init(ctx), NewLocalEmbedder(searchBenchDim), filepath.Join(b.TempDir(), "askyourdocs.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	sqliteSpeedIndex(b, store, pages)
	fts := sqliteSpeedFTS5(b, store)
	chunks := storedChunks(b, store)
	// Two first rounds: each question with the posting cache emptied
	// (uncached), then each question once after emptying it once (first
	// ask: the cache holds the terms of the questions before it).
	var uncached, first []time.Duration
	timeText := func(q string, into *[]time.Duration) {
		start := time.Now()
		if _, err := store.SearchText(ctx, q, defaultSearchDepth, nil); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	for _, q := range questions {
		if _, err := sqliteSpeedFTS5Query(ctx, fts, q, defaultSearchDepth); err != nil {
			b.Fatal(err)
		}
		store.postings.reset()
		timeText(q, &uncached)
	}
	store.postings.reset()
	for _, q := range questions {
		timeText(q, &first)
		if _, err := searchHits(Search(ctx, store, q, nil)); err != nil {
			b.Fatal(err)
		}
	}
	var ours, anchor, fusion []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for _, q := range questions {
			sqliteSpeedAsk(b, ctx, store, fts, q, &ours, &anchor, &fusion)
		}
	}
	ko, ka, kf := sqliteSpeedP50(ours), sqliteSpeedP50(anchor), sqliteSpeedP50(fusion)
	ku, k1 := sqliteSpeedP50(uncached), sqliteSpeedP50(first)
	b.ReportMetric(ku, "ours_keyword_uncached_p50_ms")
	b.ReportMetric(ku/ka, "keyword_uncached_ratio")
	b.ReportMetric(k1, "ours_keyword_first_p50_ms")
	b.ReportMetric(k1/ka, "keyword_first_ratio")
	b.ReportMetric(ko, "ours_keyword_p50_ms")
	b.ReportMetric(ka, "fts5_p50_ms")
	b.ReportMetric(ko/ka, "keyword_ratio")
	b.ReportMetric(kf, "ours_fusion_p50_ms")
	b.ReportMetric(kf/ka, "fusion_ratio")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(len(questions)), "questions")
}

// sqliteSpeedAsk times one question three ways (see
// BenchmarkSQLiteKeywordVsFTS5), appending each latency.
func sqliteSpeedAsk(b *testing.B, ctx context.Context, store *SQLiteStore, fts *sql.DB, q string, ours, anchor, fusion *[]time.Duration) {
	start := time.Now()
	if _, err := store.SearchText(ctx, q, defaultSearchDepth, nil); err != nil {
		b.Fatal(err)
	}
	*ours = append(*ours, time.Since(start))
	start = time.Now()
	if _, err := sqliteSpeedFTS5Query(ctx, fts, q, defaultSearchDepth); err != nil {
		b.Fatal(err)
	}
	*anchor = append(*anchor, time.Since(start))
	start = time.Now()
	if _, err := searchHits(Search(ctx, store, q, nil)); err != nil {
		b.Fatal(err)
	}
	*fusion = append(*fusion, time.Since(start))
}

// sqliteSpeedP50 returns the median of lat in milliseconds.
func sqliteSpeedP50(lat []time.Duration) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// BenchmarkSQLiteIndexVsJSON indexes the first -sqlite-speed-pages pages
// of an HTML manual (as BenchmarkSQLiteKeywordVsFTS5) as the CLI does, one
// IndexSource per file with the CLI's embedder, into a new SQLiteStore
// inside one Bulk (closed at the end, which writes its vector cache) and, in the same
// iteration, into a new LocalvecStore (the JSON path, inside one Bulk as
// the CLI runs it). It reports the pages per second of each, their ratio,
// the size of the SQLite database (db_mb, the database file after Close;
// vectors_mb the vector cache beside it) and of the HTML read. cpu_ratio
// is the same comparison in CPU time (user + system of the process, JSON
// over SQLite, on Unix), which a loaded machine disturbs less than wall
// time; the SQLite side's writer goroutine overlaps its other work, so
// its wall time can beat its CPU time on an idle machine.
func BenchmarkSQLiteIndexVsJSON(b *testing.B) {
	ctx := context.Background()
	sqliteSpeedQuiet(b)
	pages, _ := sqliteSpeedPagesOf(b, *sqliteSpeedPages)
	emb := NewLocalEmbedder(searchBenchDim)
	var sqliteTime, jsonTime, sqliteCPU, jsonCPU time.Duration
	var htmlBytes, dbBytes, vecBytes int64
	for b.Loop() {
		dir := b.TempDir()
		path := filepath.Join(dir, "askyourdocs.db")
		start, cpu := time.Now(), sqliteSpeedCPU()
		htmlBytes = sqliteSpeedIndexNew(b, emb, path, pages)
		sqliteTime += time.Since(start)
		sqliteCPU += sqliteSpeedCPU() - cpu
		dbBytes, vecBytes = sqliteSpeedFileSize(path), sqliteSpeedFileSize(path+".vectors")
		dbBytes += sqliteSpeedFileSize(path + "-wal")

		start, cpu = time.Now(), sqliteSpeedCPU()
		l, err := NewLocalvecStore(genkit.Init(ctx), "bench", emb, dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Bulk(ctx, func(bt VectorStore) error {
			sqliteSpeedIndex(b, bt, pages)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		jsonTime += time.Since(start)
		jsonCPU += sqliteSpeedCPU() - cpu
	}
	n := float64(b.N * len(pages))
	sp, jp := n/sqliteTime.Seconds(), n/jsonTime.Seconds()
	b.ReportMetric(sp, "sqlite_pages/s")
	b.ReportMetric(jp, "json_pages/s")
	b.ReportMetric(sp/jp, "ratio")
	if sqliteCPU > 0 {
		b.ReportMetric(sqliteCPU.Seconds()/float64(b.N), "sqlite_cpu_s")
		b.ReportMetric(jsonCPU.Seconds()/float64(b.N), "json_cpu_s")
		b.ReportMetric(jsonCPU.Seconds()/sqliteCPU.Seconds(), "cpu_ratio")
	}
	b.ReportMetric(float64(dbBytes)/1e6, "db_mb")
	b.ReportMetric(float64(vecBytes)/1e6, "vectors_mb")
	b.ReportMetric(float64(htmlBytes)/1e6, "html_mb")
	b.ReportMetric(float64(len(pages)), "pages")
}

// sqliteSpeedIndexNew indexes pages into a new SQLiteStore at path in one
// Bulk run and closes it (which writes its vector cache), as the CLI's
// first index does; it returns the bytes of HTML read.
func sqliteSpeedIndexNew(b *testing.B, emb ai.Embedder, path string, pages []string) int64 {
	b.Helper()
	ctx := context.Background()
	s, err := NewSQLiteStore(ctx, nil, emb, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	var html int64
	if err := s.Bulk(ctx, func(bt VectorStore) error {
		html = sqliteSpeedIndex(b, bt, pages)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return html
}

// sqliteSpeedQuiet drops log records (IndexSource logs every source)
// until the benchmark ends, so they do not mix with its result line.
func sqliteSpeedQuiet(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	b.Cleanup(func() { slog.SetDefault(prev) })
}

// sqliteSpeedFileSize returns the size of the file at path (0 when
// missing).
func sqliteSpeedFileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// BenchmarkIndexPgVsSQLite indexes the first -sqlite-speed-pages pages of
// an HTML manual as the CLI's `index` does (one IndexSource per file,
// files extracted ahead, the CLI's embedder, one Bulk run) into a new
// SQLiteStore (the embedded default) and, in the same iteration, into a
// new PgvecStore with the CLI's options (`index --pg`): issue 37's "index
// --pg <= 2x the embedded index time". It reports each side's seconds and
// pages per second, pg_over_sqlite (the ratio of the times), the chunks
// written, and the PostgreSQL side's rebuild of its search indexes after
// the bulk load (pg_index_build_s, of it the HNSW index pg_hnsw_build_s). PgvecStore needs ASKYOURDOCS_TEST_DSN.
func BenchmarkIndexPgVsSQLite(b *testing.B) {
	ctx := context.Background()
	sqliteSpeedQuiet(b)
	pages, _ := sqliteSpeedPagesOf(b, *sqliteSpeedPages)
	emb := NewLocalEmbedder(searchBenchDim)
	var sqliteTime, pgTime, rebuild, hnsw time.Duration
	chunks := 0
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "askyourdocs.db")
		start := time.Now()
		sqliteSpeedIndexNew(b, emb, path, pages)
		sqliteTime += time.Since(start)

		start = time.Now()
		p := pgTestStoreWith(b, emb, searchBenchDim, &PgvecOptions{TextSearchConfig: "english"})
		st, err := p.bulkWithStats(ctx, func(bt VectorStore) error {
			sqliteSpeedIndex(b, bt, pages)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		pgTime += time.Since(start)
		rebuild += st.IndexBuild
		hnsw += st.HNSWBuild
		srcs, err := p.Sources(ctx)
		if err != nil {
			b.Fatal(err)
		}
		chunks = 0
		for _, src := range srcs {
			chunks += src.Chunks
		}
	}
	n := float64(b.N)
	b.ReportMetric(sqliteTime.Seconds()/n, "sqlite_s")
	b.ReportMetric(pgTime.Seconds()/n, "pg_s")
	b.ReportMetric(n*float64(len(pages))/sqliteTime.Seconds(), "sqlite_pages/s")
	b.ReportMetric(n*float64(len(pages))/pgTime.Seconds(), "pg_pages/s")
	b.ReportMetric(pgTime.Seconds()/sqliteTime.Seconds(), "pg_over_sqlite")
	b.ReportMetric(rebuild.Seconds()/n, "pg_index_build_s")
	b.ReportMetric(hnsw.Seconds()/n, "pg_hnsw_build_s")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(len(pages)), "pages")
}
