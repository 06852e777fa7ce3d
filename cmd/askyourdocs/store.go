package main

import (
	"context"
	"path/filepath"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// storeName is the name of the CLI's store: the LocalvecStore file is
// <data>/__db_askyourdocs.json, the PgvecStore table is named after it.
const storeName = "askyourdocs"

// cliStore is what the commands need from a store: the engine's read
// interface (askyourdocs.Searcher, which Search runs on) and the record of
// its embedder (the stores' IndexInfo, which a store records at its first
// write), plus the CLI's bookkeeping.
type cliStore interface {
	askyourdocs.Searcher
	IndexInfo(ctx context.Context) (info askyourdocs.IndexInfo, found bool, err error)
	chunkCount(ctx context.Context) (int, error)
	describe() string
	// legacyManifest returns the embedder record an earlier version kept
	// beside the store (ok false when there is none), and drop removes it
	// once the store has a record of its own.
	legacyManifest(ctx context.Context) (m indexManifest, ok bool, err error)
	dropLegacyManifest(ctx context.Context) error
	// bulk runs fn as one indexing run, whose writes go through w: a
	// PgvecStore.Bulk run's writer (sources committed in batches), or the
	// SQLite store itself.
	bulk(fn func(w askyourdocs.VectorStore) error) error
	// saveChecks and loadChecks keep when each source was last read and
	// last changed (source_checks.go).
	saveChecks(ctx context.Context, checks []sourceCheck, gone []string) error
	loadChecks(ctx context.Context) (map[string]sourceCheck, error)
	// saveCrawlPages and loadCrawlPages keep what each crawl learnt about
	// its pages, for the next one to revalidate them (crawl_pages.go).
	saveCrawlPages(ctx context.Context, rows []crawlPageRow, gone []string) error
	loadCrawlPages(ctx context.Context, source string) ([]crawlPageRow, error)
}

// localStore names the index directory and store name of an embedded
// store (for messages, the crawl cache and the legacy manifest file).
type localStore struct {
	dir, name string
}

// sqliteStore is the default store: an SQLiteStore <data>/<name>.db. It
// embeds *SQLiteStore, so IndexSource diffs sources on it and Search runs
// on it; the store records its embedder in the database.
type sqliteStore struct {
	*askyourdocs.SQLiteStore
	manifests *localStore
}

// chunkCount adds up the chunks of the store's sources.
func (s *sqliteStore) chunkCount(ctx context.Context) (int, error) {
	srcs, err := s.Sources(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, src := range srcs {
		n += src.Chunks
	}
	return n, nil
}

func (s *sqliteStore) describe() string { return s.path() }

// path is the database file, <data>/<name>.db.
func (s *sqliteStore) path() string { return sqlitePath(s.manifests.dir, s.manifests.name) }

// bulk: SQLite commits every source in a transaction of its own, so a
// source the store refuses (a full disk) is reported as that file's
// failure while the others are saved. SQLiteStore.Bulk's batches would
// report it only after later files had been shown as indexed.
func (s *sqliteStore) bulk(fn func(w askyourdocs.VectorStore) error) error { return fn(s) }

// sqlitePath returns the SQLite database of the store called name in dir.
func sqlitePath(dir, name string) string { return filepath.Join(dir, name+".db") }

// jsonIndexPath returns the JSON (LocalvecStore) database of the store
// called name in dir, the format earlier versions wrote.
func jsonIndexPath(dir, name string) string { return filepath.Join(dir, "__db_"+name+".json") }
