package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteProvider is the provider part of SQLiteStore retriever names.
const sqliteProvider = "askyourdocs-sqlite"

// sqliteSchemaVersion is the schema SQLiteStore writes (meta key "schema").
// Version 1 indexed the texts as FTS5 trigrams; version 2 indexes their
// analyzer terms (chunk_terms, sqliteTermsSchema); version 3 adds the
// breadcrumb's terms to them; version 4 the merged headings' terms
// (MetaHeadings) and the heading pairs (bm25HeadingTerms); version 5 whole
// identifiers and CamelCase parts (text_analyze_ident.go); version 6
// may store a vector sparse (sqliteEncodeVec), which older versions would
// misread, so they refuse it; version 7 stores a chunk's text once (the
// document JSON leaves it to the text column, the cut column says how:
// store_sqlite_compact.go); version 8 re-analyses the keyword index for
// the analyzer's CJK bigrams and NFKC normalisation (text_analyze.go);
// version 9 for an acronym's plural as one word ("BIGNUMs" was the
// CamelCase parts "bignu" and "ms": textCamelParts).
// sqliteSchema's meta row says the same number.
const sqliteSchemaVersion = 9

// sqliteSchema creates the tables of an SQLiteStore database. chunks holds
// one row per chunk: its stable ID (see chunkID), its "url" and "source"
// metadata values byte for byte, the hash of its text (to reuse vectors),
// its text, the document as JSON (without the text, which cut says how to
// put back: sqliteCompactDoc) and its float32 vector (sqliteEncodeVec).
// qvecs holds each row's unit vector quantised to int8 with its scale: the
// compact form the vector scan reads. chunk_terms is the FTS5 index of the
// chunks' analyzer terms, kept in step by triggers (sqliteTermsSchema).
// meta holds the dimension, the schema version, the keyword language and
// the generation, a counter every write transaction increments so that
// readers notice changes with one cheap query.
const sqliteSchema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', 0), ('dim', 0), ('schema', 9), ('language', '` + defaultTextSearchLanguage + `');
CREATE TABLE IF NOT EXISTS chunks (
	rid INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	url TEXT NOT NULL,
	source TEXT NOT NULL,
	text_hash TEXT NOT NULL,
	text TEXT NOT NULL,
	doc BLOB NOT NULL,
	vec BLOB NOT NULL,
	cut INTEGER
);
CREATE INDEX IF NOT EXISTS chunks_url_source ON chunks (url, source);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks (source);
CREATE INDEX IF NOT EXISTS chunks_text_hash ON chunks (text_hash);
CREATE TABLE IF NOT EXISTS qvecs (rid INTEGER PRIMARY KEY, scale REAL NOT NULL, q BLOB NOT NULL);
` + sqliteTermsSchema

// SQLiteOptions configures NewSQLiteStore. A nil *SQLiteOptions and zero
// fields mean the defaults.
type SQLiteOptions struct {
	// Name names the store's retriever "askyourdocs-sqlite/<Name>";
	// default "askyourdocs".
	Name string
	// BusyTimeout is how long a write waits for another process's write
	// transaction to end before failing; default 30 s.
	BusyTimeout time.Duration
	// Rescore is how many candidates per requested result the int8 scan
	// keeps for exact float32 re-scoring; default 8 (at least 64 in total).
	Rescore int
	// KeywordLanguage is the language of keyword ranking's analyzer
	// ("simple", "english", "german", ...: see ErrUnknownLanguage). It is
	// recorded in the database; a different one rebuilds the keyword
	// index (once, when the store opens). Empty keeps the recorded one;
	// a new database then follows the language detected in its documents
	// (IndexSource's "language" metadata), counted again each time it
	// doubles until it holds 10,000 chunks: English stems when most chunks
	// are English or of no known language, no stemming ("simple")
	// otherwise, the keyword index rebuilt when the choice changes.
	KeywordLanguage string
	// MmapBytes is how much of the database file SQLite reads through a
	// memory map (PRAGMA mmap_size); default 1 GiB. A negative value
	// reads through SQLite's page cache only. The map makes a serving
	// process's searches faster (Django's manual, 8.6k chunks: warm
	// fusion p50 6.8 ms against 9.2 ms without), but every page a search
	// touches, and the pages the kernel maps around it, count in the
	// process's resident memory: a process that searches once and exits
	// (the CLI's search and ask) is half the size without it.
	MmapBytes int64
}

// sqliteDefaultMmapBytes is SQLiteOptions.MmapBytes's default.
const sqliteDefaultMmapBytes = 1 << 30

// SQLiteStore is a VectorStore in one SQLite database file (through the
// pure-Go modernc.org/sqlite driver, no cgo). Writes are incremental, and
// any number of processes may read and write one database at once (WAL
// journal, a busy timeout, one transaction per source replacement), so a
// reader never sees a source half replaced. Vector queries scan an
// in-memory int8 matrix kept current with the database before every query;
// keyword search ranks as LocalvecStore's BM25 index does, from an FTS5
// index. How: docs/api-reference.md.
//
// The "url" and "source" metadata values are stored byte for byte, so file
// names that are not valid UTF-8 round-trip. All methods are safe for
// concurrent use. After Close every method returns an error wrapping
// ErrStoreClosed.
type SQLiteStore struct {
	// Retriever retrieves the documents most similar to a query; its
	// options are read as LocalvecStore's (a "k", default 3).
	Retriever ai.Retriever

	path    string
	emb     ai.Embedder
	db      *sql.DB
	rescore int
	// an analyses keyword queries in the database's keyword language.
	an atomic.Pointer[textAnalyzer]
	// langAuto is set while the database's keyword language still follows
	// its documents (store_sqlite_language.go): searches read it anew.
	langAuto atomic.Bool
	closed   atomic.Bool
	// wrote records that this store committed a change, so Close brings
	// the vector cache file up to date.
	wrote atomic.Bool

	// info caches the IndexInfo record once read.
	info indexInfoCache

	// countMu guards count, the number of chunks at one generation
	// (keyword ranking's IDF needs it on every query).
	countMu sync.Mutex
	count   sqliteCount

	// postings caches the keyword postings of the current generation
	// (store_sqlite_postings.go).
	postings sqlitePostingCache

	// bulk holds the source replacements of a Bulk run.
	bulk sqliteBulkState

	// mu guards mat; refreshes take it exclusively.
	mu  sync.RWMutex
	mat sqliteMatrix
}

// sqliteCount is the number of chunks n at generation gen (ok: known).
type sqliteCount struct {
	ok  bool
	gen int64
	n   int
}

// NewSQLiteStore opens (or creates) the SQLite database at path and, when g
// is not nil, defines in g the retriever "askyourdocs-sqlite/<opts.Name>"
// (the store's Retriever field either way). emb embeds the documents and
// the queries; it must not be nil. The directory of path must exist. An
// empty path, or one containing '?' (the driver would read it as
// parameters), is refused, as is a second store of the same Name in one g.
// An existing database keeps its vectors whatever emb's dimension: Index
// refuses vectors of another one (ErrDimensionMismatch; see Reembed).
func NewSQLiteStore(ctx context.Context, g *genkit.Genkit, emb ai.Embedder, path string, opts *SQLiteOptions) (*SQLiteStore, error) {
	var o SQLiteOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "askyourdocs"
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 30 * time.Second
	}
	if o.Rescore <= 0 {
		o.Rescore = 8
	}
	switch {
	case emb == nil:
		return nil, errors.New("new sqlite store: embedder is nil")
	case path == "":
		return nil, errors.New("new sqlite store: empty path")
	case strings.ContainsRune(path, '?'):
		return nil, fmt.Errorf("new sqlite store: path %q contains '?', which the driver reads as parameters", path)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("new sqlite store: directory of %s: %w", path, errors.Join(err, errNotDir(fi)))
	}
	if o.KeywordLanguage != "" {
		if _, err := newTextAnalyzer(o.KeywordLanguage); err != nil {
			return nil, fmt.Errorf("new sqlite store: %w", err)
		}
	}
	if err := sqliteRegisterFuncs(); err != nil {
		return nil, fmt.Errorf("new sqlite store: register SQL functions: %w", err)
	}
	// mmap_size: queries read the database's pages from a memory map
	// rather than one pread call per page (SQLiteOptions.MmapBytes).
	mmap := int64(sqliteDefaultMmapBytes)
	switch {
	case o.MmapBytes < 0:
		mmap = 0
	case o.MmapBytes > 0:
		mmap = o.MmapBytes
	}
	dsn := fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=mmap_size(%d)",
		path, o.BusyTimeout.Milliseconds(), mmap)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("new sqlite store %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	s := &SQLiteStore{path: path, emb: emb, db: db, rescore: o.Rescore}
	if err := sqliteRetryBusy(ctx, o.BusyTimeout, func() error { return s.initSchema(ctx, o.KeywordLanguage) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("new sqlite store %s: %w", path, err)
	}
	r, err := pgvecDefineRetriever(g, sqliteProvider+"/"+o.Name, s.retrieve)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("new sqlite store %s: %w", path, err)
	}
	s.Retriever = r
	return s, nil
}

// sqliteRetryBusy runs fn until it does not fail with SQLITE_BUSY, for at
// most timeout. Opening a connection to a database that another process is
// creating at that moment can fail at once with SQLITE_BUSY: switching a new
// database to WAL (the journal_mode pragma of every connection) takes a lock
// for which SQLite does not call its busy handler, so the busy timeout does
// not cover it. Once the file is in WAL mode the pragma needs no such lock.
func sqliteRetryBusy(ctx context.Context, timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	for {
		err := fn()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// errNotDir returns an error for a FileInfo that is not a directory.
func errNotDir(fi os.FileInfo) error {
	if fi != nil && !fi.IsDir() {
		return errors.New("not a directory")
	}
	return nil
}

// initSchema creates the schema in one write transaction (so that two
// processes creating or migrating one database at once do not collide),
// checks the version, migrates an older one and rebuilds the keyword index
// when language (non-empty) differs from the recorded one.
func (s *SQLiteStore) initSchema(ctx context.Context, language string) error {
	return s.write(ctx, func(conn *sql.Conn) error {
		var v int
		created := false
		switch err := conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); {
		case err == nil:
			if v < 1 || v > sqliteSchemaVersion {
				return fmt.Errorf("database has schema version %d, this program knows %d", v, sqliteSchemaVersion)
			}
		case strings.Contains(err.Error(), "no such table"), errors.Is(err, sql.ErrNoRows):
			v, created = sqliteSchemaVersion, true // a new database
		default:
			return fmt.Errorf("read schema version: %w", err)
		}
		if _, err := conn.ExecContext(ctx, sqliteSchema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		lang, err := sqliteMigrateTerms(ctx, conn, s.path, v, language)
		if err != nil {
			return err
		}
		auto, err := sqliteInitLanguageAuto(ctx, conn, created && language == "", language != "")
		if err != nil {
			return err
		}
		an, err := sharedAnalyzer(lang)
		if err != nil {
			return err
		}
		s.an.Store(an)
		s.langAuto.Store(auto)
		return nil
	})
}

// KeywordLanguage returns the language of the store's keyword ranking, as
// recorded in the database (read anew while it follows the documents).
//
// Deprecated: store plumbing nothing calls (docs/api-style.md, "Surface
// size"): the language is the one SQLiteOptions.KeywordLanguage sets, and
// the database records it in its meta table (key 'language', read through
// DB()).
func (s *SQLiteStore) KeywordLanguage() string {
	if an, err := s.keywordAnalyzer(context.Background()); err == nil {
		return an.language()
	}
	return s.an.Load().language()
}

// DB returns the store's database handle, for an app's own read queries
// (the tables are described in the package source, sqliteSchema). Writes
// through it bypass the generation counter the vector cache and the
// keyword posting cache rely on.
func (s *SQLiteStore) DB() *sql.DB { return s.db }

func (s *SQLiteStore) checkOpen(op string) error {
	if s == nil || s.closed.Load() {
		return fmt.Errorf("sqlite store: %s: %w", op, ErrStoreClosed)
	}
	return nil
}

// write runs fn in a write transaction (BEGIN IMMEDIATE: the database's
// write lock is taken up front, waiting up to the busy timeout for other
// writers) on one connection, and commits when fn returns nil; otherwise it
// rolls back and nothing fn did remains.
func (s *SQLiteStore) write(ctx context.Context, fn func(conn *sql.Conn) error) error {
	return sqliteWriteTx(ctx, s.db, fn)
}

// sqliteRolledBackItself reports whether a failed ROLLBACK (rerr) only says
// that SQLite already ended the transaction: after a full disk, an I/O
// error or running out of memory (err) SQLite may roll back on its own, and
// our ROLLBACK then fails with SQLITE_ERROR ("cannot rollback - no
// transaction is active"). Nothing of the transaction remains either way.
func sqliteRolledBackItself(err, rerr error) bool {
	var se, re *sqlite.Error
	if !errors.As(err, &se) || !errors.As(rerr, &re) || re.Code()&0xff != sqlite3.SQLITE_ERROR {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM:
		return true
	}
	return false
}

// bumpGeneration increments the generation counter; every write
// transaction that changes chunks calls it.
func bumpGeneration(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = value + 1 WHERE key = 'generation'`); err != nil {
		return fmt.Errorf("bump generation: %w", err)
	}
	return nil
}

// storedDim returns the dimension recorded in the database (0: no vectors
// yet).
func (s *SQLiteStore) storedDim(ctx context.Context, q sqliteQuerier) (int, error) {
	var dim int
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dim'`).Scan(&dim); err != nil {
		return 0, fmt.Errorf("read dimension: %w", err)
	}
	return dim, nil
}

// sqliteQuerier is what *sql.DB, *sql.Conn and *sql.Tx have in common.
type sqliteQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Sources returns the stored chunks grouped by their "url" and "source"
// metadata values (missing values count as ""), sorted by URL, then Source,
// byte-wise. It reads the (url, source) index and one chunk per source
// (for its Language).
func (s *SQLiteStore) Sources(ctx context.Context) ([]Source, error) {
	if err := s.checkOpen("sources"); err != nil {
		return nil, err
	}
	// The language: one document per source, its first chunk's (by
	// rowid, no scan).
	rows, err := s.db.QueryContext(ctx, `SELECT g.url, g.source, g.n, coalesce(json_extract(CAST(c.doc AS TEXT), '$.metadata.`+metaLanguage+`'), '')
		FROM (SELECT url, source, count(*) AS n, min(rid) AS first FROM chunks INDEXED BY chunks_url_source GROUP BY url, source) AS g
		JOIN chunks AS c ON c.rid = g.first ORDER BY g.url, g.source`)
	if err != nil {
		return nil, fmt.Errorf("sqlite sources: %w", err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		var src Source
		if err := rows.Scan(&src.URL, &src.Source, &src.Chunks, &src.Language); err != nil {
			return nil, fmt.Errorf("sqlite sources: %w", err)
		}
		out = append(out, src)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite sources: %w", err)
	}
	return out, nil
}

// Len returns the number of chunks stored.
//
// Deprecated: Use Sources, as on every store, and add up its Chunks.
func (s *SQLiteStore) Len(ctx context.Context) (int, error) {
	if err := s.checkOpen("len"); err != nil {
		return 0, err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite len: %w", err)
	}
	return n, nil
}

// Generation returns the database's generation counter: every committed
// write that changed chunks (from any process) increments it, so 0 means
// nothing was ever written, and an app can poll it to notice changes.
func (s *SQLiteStore) Generation(ctx context.Context) (int64, error) {
	if err := s.checkOpen("generation"); err != nil {
		return 0, err
	}
	gen, _, err := sqliteGeneration(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("sqlite generation: %w", err)
	}
	return gen, nil
}

// Close brings the vector cache file up to date if this store wrote
// anything (so that the next process starts without reading vectors from
// the database), then closes the database. Later calls of other methods
// return ErrStoreClosed; closing again returns nil.
func (s *SQLiteStore) Close() error {
	if s == nil || s.closed.Load() {
		return nil
	}
	// Sources a Bulk run still holds are committed, not dropped.
	flushErr := s.flushBulkFor(context.Background(), replaceScope{}, true)
	if s.closed.Swap(true) {
		return nil
	}
	if s.wrote.Load() {
		if err := s.saveVectorCache(context.Background()); err != nil {
			// The cache is an optimisation: the next reader rebuilds it.
			slog.Warn("sqlite store: vector cache not saved", "path", s.path, "err", err)
		}
	}
	s.mu.Lock()
	s.mat.release()
	s.mu.Unlock()
	return errors.Join(flushErr, s.db.Close())
}
