// Package engine is a reusable retrieval-augmented-generation engine for
// "ask your documents" apps: it reads PDF, .docx, .pptx, .xlsx,
// OpenDocument, EPUB, Markdown, text and web pages into paragraphs, groups
// them into overlapping chunks, indexes them into a vector store (embedded
// SQLite, a Genkit localvec file, or PostgreSQL + pgvector), searches them
// (vector, BM25 keyword, fusion, rerank) and provides the building blocks a
// question-answering app needs around that core.
//
// The import path's last element is not the package name; import it with an
// alias:
//
//	import askyourdocs "github.com/dbis-ilm/askyourdocs"
//
// The happy path, from a folder of documents to the passages that answer a
// question (Example_askYourDocuments runs it in full):
//
//	store, err := askyourdocs.NewSQLiteStore(ctx, g, askyourdocs.NewLocalEmbedder(0), "index.db", nil)
//	src, err := askyourdocs.NewFileSource("manual.pdf")
//	_, _, err = askyourdocs.IndexSource(ctx, store, src, 1200, 150, nil)
//	found, err := askyourdocs.Search(ctx, store, q, nil) // found.Hits: vector + keyword, fused, best first
//
// The package reads no environment variables except in the helpers whose
// names end in FromEnv and the SAVE_CRAWL_DATA switch of [RunCrawl]; it never
// configures logging except through [SetupLogging].
//
// # Map of the code
//
// One flat package, one concept per file, split by prefix when a file grows
// (README.md has the same map):
//
//   - doc.go: this documentation
//   - document*.go: [Paragraph], [ExtractParagraphs] and format dispatch;
//     document_pdf*.go the PDF reader (lexer, fonts, layout, guards)
//   - docx*.go: the .docx reader (body, styles, tables, notes, properties)
//   - pptx.go, xlsx.go, odf*.go, epub.go, markdown*.go, text.go: the other formats
//   - zipguard*.go: the zip-bomb, size and XML-depth guard shared by zip-based formats
//   - ocr*.go: [OCR], scanned PDF pages and images through tesseract
//   - table_*.go: table rows as labelled paragraphs, kept sparse by cell
//   - web*.go: [FetchWebPage] and the SSRF guard (web_guard.go),
//     [HTMLToStructuredText] (web_html*.go)
//   - crawl*.go: [RunCrawl]: fetching, links, URLs, robots.txt, sitemaps, boilerplate, cache, revalidation
//   - chunk*.go: the builder behind [BuildChunks] (declared, with [Chunk], in document.go)
//   - ingest*.go: [IngestSource], [IndexSource], [FileSource], [IndexFolder], [WatchFolder]
//   - embed*.go: embedding helpers, prefixes, [NewLocalEmbedder]
//   - store.go: the [VectorStore] interface and shared store helpers
//   - write_path.go: the one write path every store writes through (plan, vectors by text, embedding; the store applies)
//   - store_bulk.go: the writer a Bulk run hands its function (writes held for the run's batches)
//   - store_searcher.go: the [Searcher] read interface every store implements
//   - index_info.go: [IndexInfo], the embedder and fusion an index records (a store records them at its first write)
//   - store_localvec*.go: [LocalvecStore]
//   - store_sqlite*.go: [SQLiteStore]
//   - pgstore*.go: [PgvecStore] (migrations, writes, retrieval, the read replica)
//   - search*.go, text_analyze*.go, text_language.go: [Search], the hybrid pipeline; keyword search (BM25
//     index, SQL search, the stemming text analyzer); the language detected in each chunk
//   - retrieve.go: HyDE, fusion, rerank
//   - answer*.go: [Answer], the one answer path: passages, quotes, generation
//   - conversation*.go: multi-turn helpers
//   - safety*.go, injection.go: prompt-injection hardening, answer sanitising
//   - provider*.go: model providers, generation, retries
//   - flow.go, jobs*.go, feedback*.go, id.go, logging.go: app blocks
//   - eval*.go: retrieval metrics, eval sets, evaluators, eval HTTP routes
//   - mcp*.go: the MCP server and tool handlers
//   - cmd/askyourdocs: the reference CLI and web app; cmd/evalset: eval
//     datasets from a running app; cmd/chunk: how a document is chunked
//   - examples/: runnable programs; scripts/: tests, databases, evaluations
package engine
