package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// PgvecStore is a VectorStore in PostgreSQL with the pgvector extension. Each
// store keeps its chunks in its own table, named after the store (see
// Table), with an HNSW index for cosine similarity, a GIN full-text index
// and B-tree indexes on the "url" and "source" metadata values.
//
// Re-indexing is incremental: every chunk row carries a hash of its text and
// metadata and a stable ID, so a chunk that is already stored is neither
// embedded nor written again, and a chunk whose text equals a stored one
// reuses that embedding.
//
// A PgvecStore is safe for concurrent use, also by several processes: schema
// work runs under an advisory lock, and a source replacement is one
// transaction holding an advisory lock per source, so readers and a writer
// killed at any moment see a source wholly old or wholly new. It never holds
// a transaction open while it waits for the embedder. Bulk writes use COPY
// where the server takes it (see pgvecWriteMethod).
type PgvecStore struct {
	// Retriever runs a similarity search; it is registered in the Genkit
	// instance as "pgvector/<name>". Its request options may be nil (3
	// results), *localvec.RetrieverOptions, or a map (Genkit's JSON
	// config) of "k" (results), "source" (a MetaSource value to keep),
	// "urlPrefix" (a MetaURL prefix to keep) and "efSearch" (the store's
	// EfSearch for this request); SearchVector takes any Filter.
	Retriever ai.Retriever
	// Pool is the store's connection pool, for an app's own queries (see
	// Table for the table's name and columns). The pgvector types are
	// registered on every connection.
	Pool *pgxpool.Pool
	// Embedder embeds documents and queries.
	Embedder ai.Embedder

	name  string
	names pgvecNames
	dim   int
	// lang is the store's text search configuration and its analyzer;
	// langAuto is set while it follows the documents (pgstore_language.go).
	lang      atomic.Pointer[pgvecLanguage]
	langAuto  atomic.Bool
	vec       pgvecVectorSQL
	embName   string
	migration pgvecMigration
	closed    atomic.Bool
	replica   *pgvecReplica // nil without PgvecOptions.ReadDSN
	// info caches the IndexInfo record once read.
	info indexInfoCache
	// pages caches the pages for the list and long-page rules.
	pages pgvecPages

	writeMethod   pgvecWriteMethod
	noCopy        atomic.Bool // the server refused COPY (pgvecWriteAuto)
	efSearch      int
	iterativeScan string
	// replaceHook, when set (by tests), runs inside a source replacement's
	// transaction after its writes, before the commit.
	replaceHook func(ctx context.Context) error
	// bulk is the store's Bulk run in this process (pgstore_bulk.go).
	bulk pgvecBulkState
	// storedDim is the dimension of the stored vectors while it differs
	// from the embedder's (0 when they agree): writes and vector searches
	// check it (checkDim) until Reembed.
	storedDim atomic.Int64
	// reembedMu serialises this process's Reembed calls (the advisory lock
	// serialises processes); reembedSize is PgvecOptions.ReembedBatch.
	reembedMu   sync.Mutex
	reembedSize int
}

// PgvecOptions are the optional settings of NewPgvecStoreWithOptions. The
// zero value (or nil) gives the defaults.
type PgvecOptions struct {
	// TextSearchConfig is the Postgres text search configuration of the
	// full-text column ("simple", "english", "german", ...). Empty keeps the
	// recorded one; a new store then follows the language detected in its
	// documents as the other stores do (SQLiteOptions.KeywordLanguage):
	// "english" while most of its chunks are English or of no known
	// language, "simple" otherwise, decided again as it grows until it
	// holds 10,000 chunks, so that the same chunks rank
	// alike in every store. For a language the other stores know (see
	// ErrUnknownLanguage), keyword search ranks with that language's
	// stemmer from the posting table (the BM25F of the other stores); for a
	// custom one, from the tsvector column. SearchText and KeywordSearchSQL
	// with language "" use the store's. Reopening a store with another
	// name keeps the stored configuration (logged, and reported by
	// Migration's TextSearchKept) unless RebuildTextSearch is set or the
	// store still follows its documents; naming one ends that.
	TextSearchConfig string
	// RebuildTextSearch lets a reopened store whose recorded configuration
	// differs from TextSearchConfig rebuild its full-text column, index and
	// postings for TextSearchConfig at start-up.
	RebuildTextSearch bool
	// DeleteOnDimensionChange makes start-up remove every chunk when the
	// store records another embedding dimension than the embedder's (the
	// documents must then be indexed again). By default start-up changes
	// nothing: the store keeps its vectors, writes and vector searches
	// fail with ErrDimensionMismatch (keyword search and Sources work)
	// until Reembed replaces them. See docs/postgres.md.
	DeleteOnDimensionChange bool
	// ReembedOnOpen makes start-up run Reembed itself when the store
	// records another embedding dimension than the embedder's, before
	// NewPgvecStoreWithOptions returns (blocking for as long as embedding
	// every chunk takes; resumed by the next start after a crash).
	ReembedOnOpen bool
	// ReembedBatch is the number of chunks a re-embedding migration embeds
	// and commits per transaction; 0 means pgvecReembedBatch.
	ReembedBatch int
	// ReembedProgress, when not nil, is called after every committed batch
	// of ReembedOnOpen's migration with the chunks done and the total.
	ReembedProgress func(done, total int)
	// writeMethod is how Index and source replacement write rows: COPY
	// through a staging table or multi-row INSERT. Apps get
	// pgvecWriteAuto (docs/postgres.md, "Writes"); the tests and
	// benchmarks set the others to compare them.
	writeMethod pgvecWriteMethod
	// EfSearch is hnsw.ef_search for similarity searches, the size of the
	// HNSW candidate list: higher finds more of the true nearest neighbours
	// and is slower (see docs/postgres.md for the measured curve). 0 means
	// pgvecDefaultEfSearch; a search for more than EfSearch results raises
	// it to k (at most 1000).
	EfSearch int
	// IterativeScan is hnsw.iterative_scan for filtered similarity searches
	// (SearchVector with a Filter, Retriever requests with a filter):
	// "relaxed_order" (default), "strict_order" or "off". With "off" a filter
	// that rejects most candidates can leave fewer than k results although k
	// match.
	IterativeScan string
	// Tracer, when not nil, receives the pool's trace calls (pgx.QueryTracer
	// and whichever of pgx's and pgxpool's other tracer interfaces it
	// implements, e.g. for OpenTelemetry); by default the store logs each
	// query's duration at debug level. The pool's ConnConfig.Tracer is the
	// store's own, which forwards to it and lets KeywordSearchSQL find the
	// store from the pool.
	Tracer pgx.QueryTracer
	// ReadDSN, when set, is a read replica of the database (a hot
	// standby): SearchVector, SearchText, Sources, the Retriever and the
	// keyword statistics read from it, every write and migration goes to
	// the primary (dsn). The store checks the replica every second: while
	// it does not answer, or its replay lag exceeds MaxReplicaLag, reads go
	// to the primary (a Warn line says so, OnReplicaChange is called), and
	// they return when it is back; a read that fails on it for a
	// connection reason is run again on the primary. A chunk written is
	// found through the replica once replayed. See docs/scaling.md.
	ReadDSN string
	// MaxReplicaLag bounds the replay lag (pg_last_xact_replay_timestamp)
	// reads accept from the replica; 0 means 10s.
	MaxReplicaLag time.Duration
	// OnReplicaChange, when not nil, is called with the replica's first
	// verdict and whenever reads move between the replica and the primary:
	// usable, and the reason when not (for readiness checks and metrics).
	// It must not block.
	OnReplicaChange func(usable bool, reason string)
}

const (
	// pgvecDefaultK is the Retriever's default result count (as localvec).
	pgvecDefaultK = 3
	// pgvecEmbedBatch is the number of documents per embedder call.
	pgvecEmbedBatch = 100
	// pgvecWriteBatch is the largest number of rows written with one
	// multi-row INSERT statement.
	pgvecWriteBatch = 5000
	// pgvecLookupBatch is the number of documents per lookup of stored
	// chunks and vectors.
	pgvecLookupBatch = 1000
	// pgvecDefaultEfSearch is the default hnsw.ef_search: 100 rather than
	// pgvector's 40, which gave recall@10 of 0.4 on clustered vectors (see
	// docs/postgres.md).
	pgvecDefaultEfSearch = 100
	// pgvecMinPoolConns is the smallest pool the store opens (a DSN's
	// pool_max_conns below it is raised).
	pgvecMinPoolConns = 4
)

// NewPgvecStore connects to the Postgres database at dsn (a pgx connection
// string or URL), creates or migrates the store's schema and returns the
// store; it is NewPgvecStoreWithOptions with default options.
//
// Deprecated: Use NewPgvecStoreWithOptions(ctx, g, name, emb, dsn,
// embeddingDim, nil), the same function (PgvecOptions adds a read
// replica, the pool size, the keyword language, …).
func NewPgvecStore(ctx context.Context, g *genkit.Genkit, name string, emb ai.Embedder, dsn string, embeddingDim int) (*PgvecStore, error) {
	return NewPgvecStoreWithOptions(ctx, g, name, emb, dsn, embeddingDim, nil)
}

// NewPgvecStoreWithOptions connects to the Postgres database at dsn (a pgx
// connection string or URL; opts may be nil for the defaults), creates
// the vector extension if it is missing and creates or migrates the schema
// of the store called name, then returns the store.
//
// Schema work runs in one transaction under an advisory lock, so processes
// starting at the same time do not race. Opening does no long work: a
// store recorded with another embedding dimension keeps its vectors, and
// writes and vector searches return ErrDimensionMismatch until Reembed
// (or PgvecOptions.ReembedOnOpen, DeleteOnDimensionChange); only indexes a
// killed Bulk run left dropped are rebuilt first. The pool keeps at least
// 4 connections (a DSN's pool_max_conns below that is raised: a Bulk run
// holds one and commits and rebuilds on others). The Retriever is registered in g as
// "pgvector/<name>" (if g is nil it is created without registering).
// The caller must Close the store.
//
// embeddingDim 0 means the dimension the store records: an existing store
// opens with it (an app that does not know its model's dimension need not
// embed a probe), while for a store that does not exist the error wraps
// ErrIndexUnrecorded, since a new store needs a dimension, and nothing is
// created. A negative dimension is an error.
func NewPgvecStoreWithOptions(ctx context.Context, g *genkit.Genkit, name string, emb ai.Embedder, dsn string, embeddingDim int, opts *PgvecOptions) (*PgvecStore, error) {
	var o PgvecOptions
	if opts != nil {
		o = *opts
	}
	explicitTS := o.TextSearchConfig != ""
	if o.TextSearchConfig == "" {
		o.TextSearchConfig = defaultTextSearchLanguage // as the other stores
	}
	switch {
	case name == "":
		return nil, errors.New("new pgvector store: empty store name")
	case emb == nil:
		return nil, fmt.Errorf("new pgvector store %q: nil embedder", name)
	case embeddingDim < 0 || embeddingDim > pgvecMaxDim:
		return nil, fmt.Errorf("new pgvector store %q: embedding dimension %d out of range 1..%d (or 0: the recorded one)", name, embeddingDim, pgvecMaxDim)
	}
	if o.EfSearch == 0 {
		o.EfSearch = pgvecDefaultEfSearch
	}
	if o.IterativeScan == "" {
		o.IterativeScan = "relaxed_order"
	}
	switch {
	case o.EfSearch < 1 || o.EfSearch > 1000:
		return nil, fmt.Errorf("new pgvector store %q: EfSearch %d out of range 1..1000", name, o.EfSearch)
	case !pgvecIterativeScans[o.IterativeScan]:
		return nil, fmt.Errorf("new pgvector store %q: IterativeScan %q, want off, relaxed_order or strict_order", name, o.IterativeScan)
	case o.writeMethod < pgvecWriteAuto || o.writeMethod > pgvecWriteInsert:
		return nil, fmt.Errorf("new pgvector store %q: unknown %v", name, o.writeMethod)
	case o.ReembedBatch < 0:
		return nil, fmt.Errorf("new pgvector store %q: negative ReembedBatch %d", name, o.ReembedBatch)
	}
	if _, err := pgvecRegconfig(o.TextSearchConfig); err != nil {
		return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("new pgvector store %q: parse dsn: %w", name, err)
	}
	// A Bulk run holds a connection for its run while it commits batches
	// and rebuilds indexes (two side by side) on others: a smaller pool
	// would wait for itself.
	if cfg.MaxConns < pgvecMinPoolConns {
		cfg.MaxConns = pgvecMinPoolConns
	}
	s := &PgvecStore{
		Embedder: emb,
		name:     name,
		names:    pgvecTableNames(name),
		embName:  emb.Name(),

		writeMethod:   o.writeMethod,
		efSearch:      o.EfSearch,
		iterativeScan: o.IterativeScan,
		reembedSize:   cmp.Or(o.ReembedBatch, pgvecReembedBatch),
	}

	// The schema is made on a connection of its own: the pool's connections
	// register the vector type when they connect, which needs the extension.
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("new pgvector store %q: connect: %w", name, err)
	}
	s.migration, err = pgvecMigrate(ctx, conn, name, s.names, embeddingDim, &o, explicitTS)
	closeErr := conn.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
	}
	if closeErr != nil {
		return nil, fmt.Errorf("new pgvector store %q: close schema connection: %w", name, closeErr)
	}
	s.dim = s.migration.dim
	s.vec = pgvecVectorFor(s.dim)

	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if err := pgxvec.RegisterTypes(ctx, c); err != nil {
			return fmt.Errorf("register pgvector types: %w", err)
		}
		return nil
	}
	// The tracer carries the store, for KeywordSearchSQL (pgstore_tracer.go).
	cfg.ConnConfig.Tracer = &pgvecTracer{name: name, store: s, next: o.Tracer}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("new pgvector store %q: open pool: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
	}
	s.Pool = pool
	s.setLang(o.TextSearchConfig) // the stored one, unless rebuilt
	s.langAuto.Store(s.migration.languageAuto)
	// Indexes an interrupted bulk load dropped are rebuilt first.
	if err := s.recoverBulk(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
	}
	if s.migration.reembedPending {
		if err := s.reembed(ctx, o.ReembedProgress); err != nil {
			pool.Close()
			return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
		}
	}
	if s.migration.dimMismatch {
		s.storedDim.Store(int64(s.migration.PreviousDim))
	}

	s.Retriever, err = pgvecDefineRetriever(g, "pgvector/"+name, s.retrieve)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
	}
	if o.ReadDSN != "" {
		if err := s.openReplica(ctx, &o); err != nil {
			pool.Close()
			return nil, fmt.Errorf("new pgvector store %q: %w", name, err)
		}
	}
	slog.Info("pgvector store ready", "store", name, "table", s.names.table, "dim", s.dim,
		"schema_version", s.migration.ToVersion, "created", s.migration.Created)
	return s, nil
}

// pgvecDefineRetriever defines the store's retriever, registered in g when g
// is not nil. A name that is already registered gives an error, not
// Genkit's panic.
func pgvecDefineRetriever(g *genkit.Genkit, name string, fn ai.RetrieverFunc) (r ai.Retriever, err error) {
	opts := &ai.RetrieverOptions{
		Label:        name,
		ConfigSchema: core.InferSchemaMap(pgvecRetrieverOptions{}),
	}
	if g == nil {
		return ai.NewRetriever(name, opts, fn), nil
	}
	if genkit.LookupRetriever(g, name) != nil {
		return nil, fmt.Errorf("retriever %q is already defined in this Genkit instance", name)
	}
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("define retriever %q: %v", name, p)
		}
	}()
	return genkit.DefineRetriever(g, name, opts, fn), nil
}

// Table returns the unquoted name of the store's chunk table, for an app's
// own queries; quote it with pgx.Identifier{s.Table()}.Sanitize(). Its
// columns: id text (stable chunk ID), content text, metadata jsonb, url and
// source text (generated from metadata "url"/"source", "" when absent),
// content_hash, text_hash, embedder text, embedding vector(dim) and
// created_at timestamptz.
func (s *PgvecStore) Table() string { return s.names.table }

// migrationInfo reports what NewPgvecStore found and changed in the schema,
// including whether a dimension change removed the old chunks.
func (s *PgvecStore) migrationInfo() pgvecMigration { return s.migration }

func (s *PgvecStore) checkOpen(op string) error {
	if s == nil || s.closed.Load() {
		return fmt.Errorf("pgvector store: %s: %w", op, ErrStoreClosed)
	}
	return nil
}

// Close closes the store's connections. Blocks until the pool's connections
// are closed; later calls of other methods return ErrStoreClosed, later
// calls of Close return nil.
func (s *PgvecStore) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	if s.replica != nil {
		s.replica.close()
	}
	if s.Pool != nil {
		s.Pool.Close()
	}
	return nil
}

// pgvecScanDocs reads (content, metadata) rows into documents.
func pgvecScanDocs(rows pgx.Rows) ([]*ai.Document, error) {
	defer rows.Close()
	var docs []*ai.Document
	for rows.Next() {
		var content string
		var meta map[string]any
		if err := rows.Scan(&content, &meta); err != nil {
			return nil, err
		}
		docs = append(docs, ai.DocumentFromText(content, meta))
	}
	return docs, rows.Err()
}

// Sources lists what the store holds: the number of chunks per ("url",
// "source") metadata pair, ordered by source and URL. It reads the B-tree
// index on (url, source) and one chunk per source (for its Language).
func (s *PgvecStore) Sources(ctx context.Context) ([]Source, error) {
	if err := s.checkOpen("sources"); err != nil {
		return nil, err
	}
	out, err := pgvecRead(ctx, s, func(ctx context.Context) ([]Source, error) {
		t := pgvecIdent(s.names.table)
		rows, err := s.readPool(ctx).Query(ctx, `SELECT g.url, g.source, g.n,
			coalesce((SELECT metadata->>'`+metaLanguage+`' FROM `+t+` AS c WHERE c.url = g.url AND c.source = g.source LIMIT 1), '')
			FROM (SELECT url, source, count(*) AS n FROM `+t+` GROUP BY url, source) AS g ORDER BY g.source, g.url`)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Source, error) {
			var src Source
			var n int64
			err := r.Scan(&src.URL, &src.Source, &n, &src.Language)
			src.Chunks = int(n)
			return src, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector sources: %w", err)
	}
	return out, nil
}

// DeleteByURL deletes the chunks whose "url" metadata value is url and
// returns how many it deleted.
func (s *PgvecStore) DeleteByURL(ctx context.Context, url string) (int, error) {
	return s.deleteWhere(ctx, "delete by url", "url", url)
}

// DeleteBySource deletes the chunks whose "source" metadata value is
// sourceName and returns how many it deleted.
func (s *PgvecStore) DeleteBySource(ctx context.Context, sourceName string) (int, error) {
	return s.deleteWhere(ctx, "delete by source", "source", sourceName)
}

func (s *PgvecStore) deleteWhere(ctx context.Context, op, column, value string) (int, error) {
	if err := s.checkOpen(op); err != nil {
		return 0, err
	}
	tag, err := s.Pool.Exec(ctx, `DELETE FROM `+pgvecIdent(s.names.table)+` WHERE `+pgvecIdent(column)+` = $1`, value)
	if err != nil {
		return 0, fmt.Errorf("pgvector %s %q: %w", op, value, err)
	}
	return int(tag.RowsAffected()), nil
}

// pgvecRow is a document on its way into the table.
type pgvecRow struct {
	doc                               *ai.Document
	id, content, meta, hash, textHash string
	vec                               []float32
	terms                             *pgvecTerms   // keyword postings, see analyzeTerms
	termsAn                           *textAnalyzer // the analyzer of terms
}

// pgvecPrepare validates docs and computes their rows. A nil document or
// one without text is an error wrapping ErrEmptyDocument.
func pgvecPrepare(docs []*ai.Document) ([]pgvecRow, error) {
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("document %d is nil: %w", i, ErrEmptyDocument)
		}
		if strings.TrimSpace(DocText(d)) == "" {
			return nil, fmt.Errorf("document %d: %w", i, ErrEmptyDocument)
		}
	}
	ids, err := documentIdentities(docs)
	if err != nil {
		return nil, err
	}
	rows := make([]pgvecRow, len(docs))
	for i, d := range docs {
		meta := d.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		mj, err := json.Marshal(meta)
		if err != nil {
			return nil, fmt.Errorf("document %d: metadata is not JSON-encodable: %w", i, err)
		}
		// Postgres text holds neither NUL nor invalid UTF-8.
		content := strings.ToValidUTF8(strings.ReplaceAll(DocText(d), "\x00", ""), "\uFFFD")
		rows[i] = pgvecRow{doc: d, id: ids[i].id, content: content, meta: string(mj), hash: ids[i].hash, textHash: ids[i].textHash}
	}
	return rows, nil
}

// pgvecExecer is what insert needs: a pool or a transaction.
type pgvecExecer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Index embeds and stores docs. Documents already stored unchanged (same
// text, metadata, "url" and "source", embedded by the same embedder) are
// skipped without embedding; a text already stored reuses its vector. The
// call is atomic: on error (an embedder failure, a vector of the wrong
// dimension, a cancelled ctx) nothing of docs is written. A nil document or
// one without text gives an error wrapping ErrEmptyDocument, a vector of the
// wrong length one wrapping ErrDimensionMismatch, a closed store one
// wrapping ErrStoreClosed. An empty docs does nothing.
func (s *PgvecStore) Index(ctx context.Context, docs []*ai.Document) error {
	if err := s.checkOpen("index"); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	if err := s.checkDim(ctx, "index"); err != nil {
		return err
	}
	if _, _, err := writeDocs(ctx, s, writeNow, replaceScope{}, docs, nil); err != nil {
		return fmt.Errorf("pgvector index: %w", err)
	}
	return nil
}
