package main

import (
	"cmp"
	"fmt"
	"os"
)

// row is one line of scripts/bench's table: a piece of work measured by a
// Go benchmark next to its anchor in the same benchmark run.
type row struct {
	// ID selects the row on the command line (scripts/bench ID...).
	ID string
	// Group is "issue" for the rows of issue 26's table (run by default)
	// and "more" for the other side-by-side figures of docs/
	// (run by scripts/bench more or all).
	Group string
	// Work is the table's first column.
	Work string
	// Pkg is the package directory ("." or "./cmd/askyourdocs") and Bench
	// the benchmark function (TestRowsNameBenchmarksThatExist keeps it true).
	Pkg, Bench string
	// Inv names the row's invocation when it is not Bench's own (the same
	// benchmark run with other arguments); rows of one invocation share its run.
	Inv string
	// Ours and Anchor are templates: {metric} is the metric of the result
	// line the table row is made of, {sub:metric} the metric of the
	// sub-benchmark sub (relative to Bench) of the same run.
	Ours, Anchor string
	// Ratio is the ratio column: a metric ({ratio}) or a division of two
	// placeholders ({a}/{b}); "" leaves the column empty.
	Ratio string
	// Key, when set, makes one table row per result line that reports
	// this metric (e.g. one per store size); otherwise the row is one
	// table row of the whole run.
	Key string
	// Goal is the goal in words ("" when it sets none) and Met
	// decides it from the row's metrics (nil: no goal).
	Goal string
	Met  func(m metrics) (bool, bool)
}

// inv returns the key of the row's invocation.
func (r row) inv() string { return cmp.Or(r.Inv, r.Bench) }

// invocation is how one benchmark runs: rows of the same Bench share one
// run.
type invocation struct {
	Pkg, Bench string
	// Pattern is the -bench regular expression (default ^Bench$).
	Pattern   string
	Benchtime string
	Timeout   string
	// Args are extra test flags; Env are environment defaults (a variable
	// already set keeps its value).
	Args []string
	Env  []string
	// PG: the benchmark needs ASKYOURDOCS_TEST_DSN.
	PG bool
}

// env returns the value of an environment variable or def.
func env(name, def string) string { return cmp.Or(os.Getenv(name), def) }

// invocations returns how each benchmark of the rows runs at the sizes
// the environment chooses (see scripts/bench's header).
func invocations() map[string]invocation {
	return map[string]invocation{
		"BenchmarkPgvecBulkIngest": {Pkg: ".", Bench: "BenchmarkPgvecBulkIngest", Benchtime: "1x", Timeout: "30m", PG: true},
		"BenchmarkPgvecRetrieveRoundTrip": {Pkg: ".", Bench: "BenchmarkPgvecRetrieveRoundTrip", Benchtime: env("BENCH_PG_RETRIEVE_TIME", "5x"),
			Timeout: "30m", PG: true},
		"BenchmarkPgvecKeywordSearch": {Pkg: ".", Bench: "BenchmarkPgvecKeywordSearch", Benchtime: env("BENCH_PG_KW_TIME", "3x"), Timeout: "40m",
			Env: []string{"ASKYOURDOCS_BENCH_KW_ROWS=" + env("BENCH_PG_KW_ROWS", "50000,100000")}, PG: true},
		"BenchmarkSQLiteKeywordVsFTS5": {Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5", Benchtime: "1x", Timeout: "20m"},
		"BenchmarkSQLiteKeywordVsFTS5/manual": {Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5", Benchtime: "2x", Timeout: "30m",
			Args: []string{"-sqlite-speed-manual=" + env("BENCH_MANUAL", "/usr/share/doc/python-django-doc/html"), "-sqlite-speed-pages=1000"}},
		"BenchmarkColdSearch": {Pkg: "./cmd/askyourdocs", Bench: "BenchmarkColdSearch", Benchtime: "1x", Timeout: "30m",
			Args: []string{"-cli-index-manual=" + env("BENCH_MANUAL", "/usr/share/doc/python-django-doc/html")}},
		"BenchmarkSQLiteIndexVsJSON": {Pkg: ".", Bench: "BenchmarkSQLiteIndexVsJSON", Benchtime: "1x", Timeout: "20m"},
		"BenchmarkIndexPgVsSQLite": {Pkg: ".", Bench: "BenchmarkIndexPgVsSQLite", Benchtime: "1x", Timeout: "30m", PG: true,
			Args: []string{"-sqlite-speed-manual=" + env("BENCH_PG_INDEX_MANUAL", "/usr/share/doc/python-django-doc/html"), "-sqlite-speed-pages=1000"}},
		"BenchmarkIndexPgVsEmbedded": {Pkg: "./cmd/askyourdocs", Bench: "BenchmarkIndexPgVsEmbedded", Benchtime: "1x", Timeout: "30m", PG: true,
			Args: []string{"-cli-index-manual=" + env("BENCH_PG_INDEX_MANUAL", "/usr/share/doc/python-django-doc/html")}},
		"BenchmarkDotKernels":       {Pkg: ".", Bench: "BenchmarkDotKernels", Benchtime: env("BENCH_KERNEL_TIME", "5x"), Timeout: "10m"},
		"BenchmarkLocalvecVsGenkit": {Pkg: ".", Bench: "BenchmarkLocalvecVsGenkit", Benchtime: "1x", Timeout: "20m"},
		"BenchmarkServeAskConcurrency": {Pkg: "./cmd/askyourdocs", Bench: "BenchmarkServeAskConcurrency", Benchtime: "1x", Timeout: "20m",
			Args: []string{"-serve-ask-n=" + env("BENCH_SERVE_ASKS", "600")}},
		// More side-by-side figures of docs/.
		"BenchmarkExtractPDF": {Pkg: ".", Bench: "BenchmarkExtractPDF", Benchtime: env("BENCH_PDF_TIME", "30x"), Timeout: "10m"},
		"BenchmarkSearch": {Pkg: ".", Bench: "BenchmarkSearch", Benchtime: env("BENCH_SEARCH_TIME", "200x"), Timeout: "40m",
			Args: []string{"-search-bench-sizes=" + env("BENCH_SEARCH_SIZES", "10000,100000")}, PG: true},
		"BenchmarkFeedbackAppend": {Pkg: ".", Bench: "BenchmarkFeedbackAppend", Benchtime: env("BENCH_FEEDBACK_TIME", "300x"), Timeout: "20m", PG: true},
		"BenchmarkServeAsksAfterLog": {Pkg: "./cmd/askyourdocs", Bench: "BenchmarkServeAsksAfterLog", Benchtime: "1x", Timeout: "30m",
			Args: []string{"-serve-log-answers=" + env("BENCH_SERVE_LOG_ANSWERS", "20000")}},
		"BenchmarkPgvecScale": {Pkg: ".", Bench: "BenchmarkPgvecScale", Pattern: "^BenchmarkPgvecScale$/^(retrieve|filtered)",
			Benchtime: env("BENCH_PG_HNSW_TIME", "2x"), Timeout: "60m", PG: true,
			Env: []string{"ASKYOURDOCS_BENCH_ROWS=" + env("BENCH_PG_HNSW_ROWS", "100000"), "ASKYOURDOCS_BENCH_DIM=768"}},
		"BenchmarkEmbedderDefineOverhead": {Pkg: ".", Bench: "BenchmarkEmbedderDefineOverhead", Benchtime: env("BENCH_EMBEDDER_TIME", "1s"), Timeout: "10m"},
		"BenchmarkExtractFormats":         {Pkg: ".", Bench: "BenchmarkExtractFormats", Benchtime: env("BENCH_FORMATS_TIME", "1s"), Timeout: "10m"},
		"BenchmarkBuildChunks":            {Pkg: ".", Bench: "BenchmarkBuildChunks", Benchtime: env("BENCH_CHUNKS_TIME", "2s"), Timeout: "10m"},
		"BenchmarkHTMLToStructuredText":   {Pkg: ".", Bench: "BenchmarkHTMLToStructuredText", Benchtime: env("BENCH_HTML_TIME", "2s"), Timeout: "10m"},
		"BenchmarkRunCrawl":               {Pkg: ".", Bench: "BenchmarkRunCrawl", Benchtime: env("BENCH_CRAWL_TIME", "3x"), Timeout: "10m"},
		"BenchmarkDetectInjection":        {Pkg: ".", Bench: "BenchmarkDetectInjection", Benchtime: env("BENCH_INJECTION_TIME", "1s"), Timeout: "10m"},
		"BenchmarkRerankScoresOverhead":   {Pkg: ".", Bench: "BenchmarkRerankScoresOverhead", Benchtime: env("BENCH_RERANK_TIME", "1s"), Timeout: "10m"},
		"BenchmarkEvalJobHandlerFlood":    {Pkg: ".", Bench: "BenchmarkEvalJobHandlerFlood", Benchtime: "1x", Timeout: "10m"},
	}
}

// atLeast and atMost are Met functions on one metric.
func atLeast(name string, goal float64) func(metrics) (bool, bool) {
	return func(m metrics) (bool, bool) {
		v, ok := m.get(name)
		return ok && v >= goal, ok
	}
}

func atMost(name string, goal float64) func(metrics) (bool, bool) {
	return func(m metrics) (bool, bool) {
		v, ok := m.get(name)
		return ok && v <= goal, ok
	}
}

// rows is the table, in order: first issue 26's rows, then the others.
var rows = []row{
	{ID: "pg-ingest", Group: "issue", Work: "PostgreSQL first index, bulk (PgvecStore)", Pkg: ".", Bench: "BenchmarkPgvecBulkIngest",
		Ours:   "{rows} chunks x 1024: {ours_rows/s} rows/s to the end of the load; with the HNSW build after it ({hnsw_build_s} s) {ours_total_rows/s} rows/s, {ratio_total}x",
		Anchor: "hand-written `COPY` of the same rows, no index: {copy_rows/s} rows/s",
		Ratio:  "{ratio}", Goal: ">= 0.5x", Met: atLeast("ratio", 0.5)},
	{ID: "pg-retrieve", Group: "issue", Work: "`PgvecStore` Retrieve top 10, warm", Pkg: ".", Bench: "BenchmarkPgvecRetrieveRoundTrip",
		Ours:   "{rows} x 768, ef_search 40: p50 {ours_p50_ms} ms, p95 {ours_p95_ms} ms",
		Anchor: "raw `SELECT … ORDER BY embedding <=> $1 LIMIT 10`, `ef_search` set once per connection: p50 {raw_p50_ms} ms, p95 {raw_p95_ms} ms",
		Ratio:  "{ratio}", Goal: "<= 1.1x", Met: atMost("ratio", 1.1)},
	{ID: "pg-keyword", Group: "issue", Work: "PostgreSQL keyword search, p50 / p95", Pkg: ".", Bench: "BenchmarkPgvecKeywordSearch",
		Ours: "{ours_p50_ms} / {ours_p95_ms} ms", Anchor: "`tsvector @@` AND + GIN: {gin_p50_ms} / {gin_p95_ms} ms",
		Ratio: "{p95_ratio}", Key: "ours_p95_ms", Goal: "p95 <= 50 ms at 50k, <= 80 ms at 100k",
		Met: func(m metrics) (bool, bool) {
			p95, ok := m.get("ours_p95_ms")
			n, nok := m.size()
			if !ok || !nok {
				return false, false
			}
			if n <= 50000 {
				return p95 <= 50, true
			}
			return p95 <= 80, true
		}},
	{ID: "sqlite-keyword", Group: "issue", Work: "embedded keyword search, warm p50", Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5",
		Ours: "{ours_keyword_p50_ms} ms ({questions} questions, {chunks} chunks)", Anchor: "SQLite FTS5 `bm25()` over the same pages: {fts5_p50_ms} ms",
		Ratio: "{keyword_ratio}", Goal: "<= 1.5x", Met: atMost("keyword_ratio", 1.5)},
	{ID: "sqlite-keyword-uncached", Group: "more", Work: "embedded keyword search, p50 with the posting cache emptied before each question", Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5",
		Ours: "{ours_keyword_uncached_p50_ms} ms (first ask, the cache holding earlier questions' terms: {ours_keyword_first_p50_ms} ms)", Anchor: "SQLite FTS5 `bm25()` over the same pages: {fts5_p50_ms} ms",
		Ratio: "{keyword_uncached_ratio}", Goal: "<= 1.5x", Met: atMost("keyword_uncached_ratio", 1.5)},
	{ID: "sqlite-fusion", Group: "issue", Work: "embedded fusion, warm p50", Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5",
		Ours: "{ours_fusion_p50_ms} ms", Anchor: "the same FTS5 query: {fts5_p50_ms} ms",
		Ratio: "{fusion_ratio}", Goal: "<= 2x", Met: atMost("fusion_ratio", 2)},
	{ID: "sqlite-index", Group: "issue", Work: "embedded indexing of an HTML manual", Pkg: ".", Bench: "BenchmarkSQLiteIndexVsJSON",
		Ours: "{pages} pages: {sqlite_pages/s} pages/s, index {db_mb} MB (vectors {vectors_mb} MB)", Anchor: "the old JSON path: {json_pages/s} pages/s; the HTML {html_mb} MB",
		Ratio: "{ratio}", Goal: ">= 1x (and the index smaller than its HTML where possible)", Met: atLeast("ratio", 1)},
	{ID: "pg-index", Group: "more", Work: "`index --pg` of a whole HTML manual next to the embedded `index` (issue 37)", Pkg: ".", Bench: "BenchmarkIndexPgVsSQLite",
		Ours:   "{pages} pages, {chunks} chunks into PgvecStore: {pg_s} s (the search indexes' rebuild after the load {pg_index_build_s} s, HNSW {pg_hnsw_build_s} s of it)",
		Anchor: "the same pages into SQLiteStore: {sqlite_s} s",
		Ratio:  "{pg_over_sqlite}", Goal: "<= 2x", Met: atMost("pg_over_sqlite", 2)},
	{ID: "manual-keyword", Group: "more", Work: "embedded keyword search on a whole manual, warm p50 (issue 37, at about 11k chunks)", Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5", Inv: "BenchmarkSQLiteKeywordVsFTS5/manual",
		Ours: "{ours_keyword_p50_ms} ms ({questions} questions, {chunks} chunks; first ask {ours_keyword_first_p50_ms} ms)", Anchor: "SQLite FTS5 `bm25()` over the same pages: {fts5_p50_ms} ms",
		Ratio: "{keyword_ratio}", Goal: "<= 1.5x", Met: atMost("keyword_ratio", 1.5)},
	{ID: "manual-fusion", Group: "more", Work: "embedded fusion on a whole manual, warm p50 (issue 37)", Pkg: ".", Bench: "BenchmarkSQLiteKeywordVsFTS5", Inv: "BenchmarkSQLiteKeywordVsFTS5/manual",
		Ours: "{ours_fusion_p50_ms} ms", Anchor: "the same FTS5 query: {fts5_p50_ms} ms",
		Ratio: "{fusion_ratio}", Goal: "<= 2x", Met: atMost("fusion_ratio", 2)},
	{ID: "cold-search", Group: "more", Work: "a cold `askyourdocs search` (a new process) on a whole manual's index (issue 37)", Pkg: "./cmd/askyourdocs", Bench: "BenchmarkColdSearch",
		Ours: "{chunks} chunks: wall p50 {wall_p50_ms} ms, max RSS p50 {rss_p50_mb} MB (max {rss_max_mb} MB)", Anchor: "the benchmark's own process, which bounds every figure from below (Linux charges a parent's peak to a child it starts): {bench_process_mb} MB",
		Goal: "<= 60 MB RSS", Met: atMost("rss_p50_mb", 60)},
	{ID: "pg-index-cli", Group: "more", Work: "the CLI's `index --pg` of a whole HTML manual next to its embedded `index` (issue 37; OCR of the manual's images on both sides when tesseract is installed)", Pkg: "./cmd/askyourdocs", Bench: "BenchmarkIndexPgVsEmbedded",
		Ours:   "`askyourdocs index --pg` into a new database: {pg-s} s",
		Anchor: "`askyourdocs index` into a new --data directory: {embedded-s} s",
		Ratio:  "{pg_over_embedded}", Goal: "<= 2x", Met: atMost("pg_over_embedded", 2)},
	{ID: "kernel", Group: "issue", Work: "int8 vector kernel, per 1024-dimension row", Pkg: ".", Bench: "BenchmarkDotKernels",
		Ours: "{int8_ns_per_row} ns/row (the pure-Go fallback: {int8_go_ns_per_row} ns/row, {ratio_go}x)", Anchor: "float32 kernel: {f32_ns_per_row} ns/row",
		Ratio: "{ratio}", Goal: "<= 0.6x", Met: atMost("ratio", 0.6)},
	{ID: "localvec-ingest", Group: "issue", Work: "LocalvecStore index vs Genkit's localvec (ratio: Genkit / ours)", Pkg: ".", Bench: "BenchmarkLocalvecVsGenkit",
		Ours:   "6,000 chunks x 768: {ours_ingest_s} s (the first keyword search after it, which builds the keyword index: {ours_first_keyword_ms} ms)",
		Anchor: "Genkit's localvec, one `localvec.Index` per batch of 100: {genkit_ingest_s} s",
		Ratio:  "{ingest_ratio}", Goal: ">= 22x", Met: atLeast("ingest_ratio", 22)},
	{ID: "localvec-query", Group: "issue", Work: "LocalvecStore query vs Genkit's localvec (ratio: Genkit / ours)", Pkg: ".", Bench: "BenchmarkLocalvecVsGenkit",
		Ours: "top 10, query embedding included: {ours_query_ms} ms", Anchor: "Genkit's localvec retriever, same store contents and queries: {genkit_query_ms} ms",
		Ratio: "{query_ratio}", Goal: ">= 10x", Met: atLeast("query_ratio", 10)},
	{ID: "serve", Group: "issue", Work: "serve `/api/ask` at c=1/4/16, empty feedback log, no LLM", Pkg: "./cmd/askyourdocs", Bench: "BenchmarkServeAskConcurrency",
		Ours:   "{c1_asks/s} / {c4_asks/s} / {c16_asks/s} asks/s, p50 {c1_p50_ms} / {c4_p50_ms} / {c16_p50_ms} ms, p99 {c1_p99_ms} / {c4_p99_ms} / {c16_p99_ms} ms",
		Anchor: "in-process `eval` fusion p50 {inproc_p50_ms} ms (serve's answer path without HTTP: {inproc_ask_p50_ms} ms)",
		Ratio:  "{ratio}"},

	{ID: "pg-hnsw", Group: "more", Work: "PgvecStore HNSW top 10, recall and latency by `ef_search`", Pkg: ".", Bench: "BenchmarkPgvecScale",
		Ours:   "{rows} x 768: recall@10 {recall@10}, p50 {p50-ms} ms, p95 {p95-ms} ms (HNSW build {hnsw-build-s} s)",
		Anchor: "the exact top 10, computed in Go (recall 1)", Ratio: "{recall@10}", Key: "recall@10"},
	{ID: "embedder-define", Group: "more", Work: "an embedder registered with `genkit.DefineEmbedder`, per 768-d vector", Pkg: ".", Bench: "BenchmarkEmbedderDefineOverhead",
		Ours: "{DefineEmbedder:ms/vector} ms", Anchor: "the same function called directly: {direct:ms/vector} ms",
		Ratio: "{DefineEmbedder:ms/vector}/{direct:ms/vector}"},
	{ID: "pdf", Group: "more", Work: "PDF `ExtractParagraphs`, 100-page fixture, CPU per file", Pkg: ".", Bench: "BenchmarkExtractPDF",
		Ours: "{engine:cpu-ms/op} ms ({engine:pages/s} pages/s)", Anchor: "`pdftotext`: {pdftotext:cpu-ms/op} ms ({pdftotext:pages/s} pages/s)",
		Ratio: "{engine:cpu-ms/op}/{pdftotext:cpu-ms/op}"},
	{ID: "search", Group: "more", Work: "`Search` p50 next to its two lists", Pkg: ".", Bench: "BenchmarkSearch",
		Ours: "{search-p50-ms} ms", Anchor: "vector {vector-p50-ms} ms + keyword {text-p50-ms} ms",
		Ratio: "{search/lists-sum}", Key: "search/lists-sum"},
	{ID: "feedback", Group: "more", Work: "one feedback write at 100k entries, median", Pkg: ".", Bench: "BenchmarkFeedbackAppend",
		Ours: "{µs-median@100000} µs", Anchor: "at 0 entries: {µs-median@0} µs",
		Ratio: "{x-vs-empty@100000}", Key: "x-vs-empty@100000"},
	{ID: "serve-log", Group: "more", Work: "serve asks/s after 20,000 logged answers, 8 askers", Pkg: "./cmd/askyourdocs", Bench: "BenchmarkServeAsksAfterLog",
		Ours: "{asks/s-after} asks/s", Anchor: "a fresh server: {asks/s-fresh} asks/s", Ratio: "{after/fresh}"},
	{ID: "formats", Group: "more", Work: "format readers, MB/s from memory", Pkg: ".", Bench: "BenchmarkExtractFormats",
		Ours:   "md {md:MB/s}, txt {txt:MB/s}, pptx {pptx:MB/s}, xlsx {xlsx:MB/s}, odt {odt:MB/s}, epub {epub:MB/s}",
		Anchor: "the .docx reader: {docx:MB/s} MB/s", Ratio: "{md:MB/s}/{docx:MB/s}"},
	{ID: "chunks", Group: "more", Work: "`BuildChunks`, 1000/150, 4.3 MB of prose", Pkg: ".", Bench: "BenchmarkBuildChunks",
		Ours: "{max=1000:MB/s} MB/s, {max=1000:chunks/op} chunks, {max=1000:allocs/op} allocs", Anchor: "a bare paragraph packer: {baseline=packer:MB/s} MB/s",
		Ratio: "{max=1000:MB/s}/{baseline=packer:MB/s}"},
	{ID: "html", Group: "more", Work: "`HTMLToStructuredText`, a 266 KB page", Pkg: ".", Bench: "BenchmarkHTMLToStructuredText",
		Ours:   "{rustc-warn-by-default.html/HTMLToStructuredText:MB/s} MB/s, {rustc-warn-by-default.html/HTMLToStructuredText:allocs/op} allocs",
		Anchor: "`html.Parse` alone: {rustc-warn-by-default.html/html.Parse:MB/s} MB/s, {rustc-warn-by-default.html/html.Parse:allocs/op} allocs",
		Ratio:  "{rustc-warn-by-default.html/HTMLToStructuredText:MB/s}/{rustc-warn-by-default.html/html.Parse:MB/s}"},
	{ID: "crawl", Group: "more", Work: "crawl of 500 loopback pages, 4 workers, 2 ms server latency", Pkg: ".", Bench: "BenchmarkRunCrawl",
		Ours:   "{latency=2ms/workers=4:pages/s} pages/s (no latency: {latency=0s/workers=4:pages/s})",
		Anchor: "1 worker: {latency=2ms/workers=1:pages/s} pages/s (no latency: {latency=0s/workers=1:pages/s})",
		Ratio:  "{latency=2ms/workers=4:pages/s}/{latency=2ms/workers=1:pages/s}"},
	{ID: "injection", Group: "more", Work: "`DetectInjection`, 1.5 KB of benign prose", Pkg: ".", Bench: "BenchmarkDetectInjection",
		Ours: "{german:ns/op} ns", Anchor: "every pattern run (no prefilter): {german-no-prefilter:ns/op} ns",
		Ratio: "{german:ns/op}/{german-no-prefilter:ns/op}"},
	{ID: "rerank", Group: "more", Work: "`RerankScores` own overhead per candidate (instant model)", Pkg: ".", Bench: "BenchmarkRerankScoresOverhead",
		Ours: "{own:ns/candidate} ns", Anchor: "through a Genkit prompt + `DefineModel` fake: {genkit:ns/candidate} ns",
		Ratio: "{own:ns/candidate}/{genkit:ns/candidate}"},
	{ID: "eval-flood", Group: "more", Work: "1,000 concurrent eval POSTs of 1 MiB, worker busy", Pkg: ".", Bench: "BenchmarkEvalJobHandlerFlood",
		Ours:   "{1MiB:accepted} accepted, {1MiB:refused} refused, heap {1MiB:heap-MB} MB",
		Anchor: "1,000 small valid POSTs: {small:accepted} accepted, heap {small:heap-MB} MB",
		Ratio:  "{1MiB:heap-MB}/{small:heap-MB}"},
}

// rowByID returns the row with the id.
func rowByID(id string) (row, error) {
	for _, r := range rows {
		if r.ID == id {
			return r, nil
		}
	}
	return row{}, fmt.Errorf("no row %q", id)
}

// landing lists the benchmarks of rows that concurrent work is adding
// (issue 26); until they exist their rows print "missing", and
// TestRowsNameBenchmarksThatExist accepts their absence. Take a benchmark
// off once it has landed, so a later rename fails the test.
var landing = map[string]bool{}
