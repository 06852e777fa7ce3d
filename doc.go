// Package engine is a small, reusable retrieval-augmented-generation engine
// for "ask your documents" apps: it parses PDF, .docx and web pages into
// paragraphs, groups them into overlapping chunks, indexes them into a vector
// store (a localvec-compatible file or PostgreSQL + pgvector), searches them
// (vector, keyword, fusion, rerank) and provides the small building blocks a
// question-answering app needs around that core.
//
// The import path's last element is not the package name; import it with an
// alias:
//
//	import askyourdocs "github.com/dbis-ilm/askyourdocs"
//
// The happy path, from a document on disk to the chunks to embed:
//
//	paras, err := askyourdocs.ExtractParagraphs("manual.pdf")
//	if err != nil {
//		return err
//	}
//	for _, c := range askyourdocs.BuildChunks(paras, 1200, 150) {
//		fmt.Println(c.Pages, c.Breadcrumb, c.Text)
//	}
//
// Indexing goes through an [IngestSource] and [IndexSource] into a
// [VectorStore] such as [LocalvecStore] or [PgvecStore].
//
// The package reads no environment variables except in the helpers whose
// names end in FromEnv and the SAVE_CRAWL_DATA switch of [RunCrawl]; it never
// configures logging except through [SetupLogging].
package engine
