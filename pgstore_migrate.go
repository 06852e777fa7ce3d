package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
)

// pgvecMetaTable is the table, shared by all PgvecStores of a database, that
// records each store's chunk table, schema version, embedding dimension and
// text search configuration.
const pgvecMetaTable = "askyourdocs_pgvec_stores"

// pgvecSchemaLockKey is the key of the transaction-scoped advisory lock held
// while a PgvecStore creates or migrates its schema, so that processes
// starting at the same time never race on DDL ("aydpgvec" in ASCII).
const pgvecSchemaLockKey int64 = 0x6179647067766563

// pgvecMaxDim is pgvector's limit for the vector type.
const pgvecMaxDim = 16000

// pgvecMigration reports what NewPgvecStore found in the database and what
// it changed there; the open logs what it reports (RemovedChunks: the store was
// emptied (DeleteOnDimensionChange) and its documents must be indexed
// again.
type pgvecMigration struct {
	// Created reports that this call created the store's table.
	Created bool
	// FromVersion and ToVersion are the store's schema version before (0
	// for a new store) and after start-up.
	FromVersion, ToVersion int
	// DimensionChanged reports that the embedding dimension recorded in the
	// database differed from the one NewPgvecStore was called with: the old
	// vectors, which cannot be compared with new ones, were replaced by
	// re-embedding (Reembedded) or, with DeleteOnDimensionChange,
	// removed with their chunks (RemovedChunks).
	DimensionChanged bool
	// Reembedded counts the chunks this start-up re-embedded (a resumed
	// migration counts only what was left).
	Reembedded int
	// ReembedResumed reports that a re-embedding migration an earlier
	// start-up left unfinished was continued.
	ReembedResumed bool
	// PreviousDim is the dimension recorded before start-up (0 for a new
	// store).
	PreviousDim int
	// RemovedChunks counts the chunks removed because the dimension changed.
	RemovedChunks int
	// TextSearchChanged reports that the full-text index was rebuilt for a
	// different text search configuration (PgvecOptions.RebuildTextSearch).
	TextSearchChanged bool
	// TextSearchKept is the recorded text search configuration the store
	// kept although NewPgvecStore was given another (TextSearchRequested)
	// without RebuildTextSearch; "" when there was no such difference.
	TextSearchKept, TextSearchRequested string
	// dim is the embedding dimension the store opens with: the one
	// NewPgvecStoreWithOptions was given, or with 0 the recorded one.
	dim int

	// reembedPending tells NewPgvecStore to run the re-embedding migration
	// the schema transaction set up (PgvecOptions.ReembedOnOpen).
	reembedPending bool
	// dimMismatch: the stored vectors (PreviousDim) differ from the
	// embedder's dimension and start-up left them (Reembed replaces them).
	dimMismatch bool
	// languageAuto: the store's text search configuration follows its
	// documents (the meta table's ts_auto; pgstore_language.go).
	languageAuto bool
}

// pgvecNames holds a store's table and index names (unquoted).
type pgvecNames struct {
	table, hnsw, fts, urlSource, source, textHash, trgm, tsv string
	// kw and kwDF are the posting and frequency tables of keyword ranking,
	// kwSync the function of their triggers (schema version 4).
	kw, kwDF, kwSync string
}

// pgvecPlainName matches store names used as they are in table names.
var pgvecPlainName = lazyRegexp(`^[a-z0-9_]{1,28}$`)

// pgvecTableNames derives the table and index names of the store called
// name. Plain short names are kept ("docs" -> askyourdocs_docs); any other
// name is reduced to a slug plus a hash of the full name, so that distinct
// names ("my/docs", "my_docs") never share a table and every derived name
// stays within Postgres' 63-byte identifier limit.
func pgvecTableNames(name string) pgvecNames {
	slug := name
	if !pgvecPlainName().MatchString(name) {
		var b strings.Builder
		for _, r := range strings.ToLower(name) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
			if b.Len() >= 19 {
				break
			}
		}
		sum := sha256.Sum256([]byte(name))
		slug = b.String() + "_" + hex.EncodeToString(sum[:4])
	}
	t := "askyourdocs_" + slug
	return pgvecNames{
		table:     t,
		hnsw:      t + "_embedding_hnsw",
		fts:       t + "_content_fts",
		urlSource: t + "_url_source",
		source:    t + "_source",
		textHash:  t + "_text_hash",
		trgm:      t + "_content_trgm",
		tsv:       t + "_tsv",
		kw:        t + "_kw",
		kwDF:      t + "_kwdf",
		kwSync:    t + "_kw_sync",
	}
}

// pgvecIdent quotes a name as a Postgres identifier.
func pgvecIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// pgvecTSConfigRE matches a text search configuration name that may be
// interpolated into SQL: a plain identifier, optionally schema-qualified.
var pgvecTSConfigRE = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// errPgvecLanguage is wrapped by the error for a text search configuration
// name that is not a plain identifier.
var errPgvecLanguage = errors.New("text search configuration must be a plain identifier such as simple, english or german")

// pgvecRegconfig validates a text search configuration name and returns it
// as a SQL literal cast to regconfig. Validation makes the interpolation
// safe: the name can contain neither quotes nor anything but letters,
// digits, underscores and one dot.
func pgvecRegconfig(language string) (string, error) {
	if !pgvecTSConfigRE().MatchString(language) {
		return "", fmt.Errorf("%w: got %q", errPgvecLanguage, language)
	}
	return "'" + language + "'::regconfig", nil
}

// pgvecVectorSQL describes how a store of a given dimension stores and
// searches its vectors. pgvector's HNSW index handles vector up to 2000
// dimensions and halfvec up to 4000; above that the store searches exactly.
type pgvecVectorSQL struct {
	// column is the embedding column's type.
	column string
	// indexExpr is the HNSW index's column expression and operator class
	// ("" when no ANN index is possible).
	indexExpr string
	// order is the ORDER BY expression for a query vector bound as $1.
	order string
}

func pgvecVectorFor(dim int) pgvecVectorSQL {
	v := pgvecVectorSQL{column: fmt.Sprintf("vector(%d)", dim)}
	switch {
	case dim <= 2000:
		v.indexExpr = "embedding vector_cosine_ops"
		v.order = "embedding <=> $1::vector"
	case dim <= 4000:
		half := fmt.Sprintf("halfvec(%d)", dim)
		v.indexExpr = "(embedding::" + half + ") halfvec_cosine_ops"
		v.order = "embedding::" + half + " <=> $1::vector::" + half
	default:
		v.order = "embedding <=> $1::vector"
	}
	return v
}

// pgvecMigrationStep is one versioned change to a store's schema. Steps run
// in order inside the start-up transaction; a store records the highest
// version applied, so a later release appends a step instead of editing one.
type pgvecMigrationStep struct {
	version int
	what    string
	apply   func(ctx context.Context, tx pgx.Tx, n pgvecNames, dim int, regconfig, language string) error
}

// pgvecMigrations is the ordered list of schema versions.
var pgvecMigrations = []pgvecMigrationStep{
	{version: 1, what: "create chunk table and indexes", apply: pgvecCreateV1},
	{version: 2, what: "trigram index on content", apply: pgvecCreateV2},
	{version: 3, what: "stored tsvector column with its GIN index", apply: pgvecCreateV3},
	{version: 4, what: "keyword posting and frequency tables (BM25F ranking)", apply: pgvecCreateV4},
	{version: 5, what: "keyword postings with whole identifiers (analyzer change)", apply: pgvecCreateV5},
	{version: 6, what: "index of chunk lengths (keyword threshold search)", apply: pgvecCreateV6},
	{version: 7, what: "impact index with term frequencies and lengths (index-only keyword scoring)", apply: pgvecCreateV7},
	{version: 8, what: "keyword postings with CJK bigrams and NFKC text (analyzer change)", apply: pgvecCreateV8},
	{version: 9, what: "keyword postings with acronym plurals as one word (analyzer change)", apply: pgvecCreateV9},
}

// pgvecCreateV7 rebuilds the impact index (term, w DESC, cid DESC) with
// INCLUDE (tf, len), under the same name: a keyword stage that scores
// every posting of its terms (search_sql_full.go) then reads them from the
// index alone instead of one heap row each.
func pgvecCreateV7(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, _ string) error {
	name := pgvecIdent(n.kw + "_rank")
	for _, q := range []string{
		`DROP INDEX IF EXISTS ` + name,
		`CREATE INDEX ` + name + ` ON ` + pgvecIdent(n.kw) + ` (term, w DESC, cid DESC) INCLUDE (tf, len)`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("rebuild impact index: %w", err)
		}
	}
	return nil
}

// pgvecCreateV6 indexes the chunk lengths (the empty term's postings), so
// that the threshold search reads the shortest length with one probe
// (pgvecShareBound).
func pgvecCreateV6(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, _ string) error {
	if _, err := tx.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+pgvecIdent(n.kw+"_len")+` ON `+pgvecIdent(n.kw)+` (len) WHERE term = ''`); err != nil {
		return fmt.Errorf("create chunk length index: %w", err)
	}
	return nil
}

// pgvecCreateV5 rebuilds the postings: from version 5 the analyzer also
// indexes identifiers whole ("max_log_file_size", "--allow-private") and
// the parts of CamelCase words (text_analyze_ident.go).
func pgvecCreateV5(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, language string) error {
	return pgvecRebuildTerms(ctx, tx, n, language)
}

// pgvecCreateV8 rebuilds the postings: from version 8 the analyzer reads
// text in NFKC and cuts runs of Han, kana and Hangul characters into
// overlapping bigrams (text_analyze.go).
func pgvecCreateV8(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, language string) error {
	return pgvecRebuildTerms(ctx, tx, n, language)
}

// pgvecCreateV9 rebuilds the postings: from version 9 the analyzer reads
// an acronym's plural ("BIGNUMs", "URLs") as one word, not as the
// CamelCase parts "bignu" and "ms" (textCamelParts).
func pgvecCreateV9(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, language string) error {
	return pgvecRebuildTerms(ctx, tx, n, language)
}

// pgvecSchemaVersion is the schema version this code writes.
func pgvecSchemaVersion() int { return pgvecMigrations[len(pgvecMigrations)-1].version }

// pgvecCreateV1 creates the chunk table: content and metadata as written,
// url and source generated from the metadata (so an app that edits metadata
// keeps them right), the hashes that make re-indexing incremental, the name
// of the embedder that made the vector, and the vector itself; plus the
// HNSW, full-text and B-tree indexes.
func pgvecCreateV1(ctx context.Context, tx pgx.Tx, n pgvecNames, dim int, regconfig string, _ string) error {
	vs := pgvecVectorFor(dim)
	t := pgvecIdent(n.table)
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (
			id           text PRIMARY KEY,
			content      text NOT NULL,
			metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
			url          text GENERATED ALWAYS AS (coalesce(metadata->>'url', '')) STORED,
			source       text GENERATED ALWAYS AS (coalesce(metadata->>'source', '')) STORED,
			content_hash text NOT NULL,
			text_hash    text NOT NULL,
			embedder     text NOT NULL,
			embedding    ` + vs.column + ` NOT NULL,
			created_at   timestamptz NOT NULL DEFAULT now()
		)`,
		`CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.urlSource) + ` ON ` + t + ` (url, source)`,
		`CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.source) + ` ON ` + t + ` (source)`,
		`CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.textHash) + ` ON ` + t + ` (text_hash)`,
		pgvecFTSIndexSQL(n, regconfig),
	}
	if s := pgvecHNSWIndexSQL(n, dim); s != "" {
		stmts = append(stmts, s)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// pgvecCreateV2 adds a pg_trgm GIN index on content, which the ILIKE stages
// of KeywordSearchSQL use instead of scanning the table. It creates the
// pg_trgm extension when missing; where that is not allowed (or the index
// cannot be built) it logs a warning and leaves the store without the
// index: keyword search gives the same results, only slower. Both attempts
// run in a savepoint so that a failure does not abort the start-up
// transaction.
func pgvecCreateV2(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, _ string) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("savepoint for pg_trgm: %w", err)
	}
	var have bool
	err = sp.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')`).Scan(&have)
	if err == nil && !have {
		_, err = sp.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm`)
	}
	if err == nil {
		_, err = sp.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+pgvecIdent(n.trgm)+` ON `+pgvecIdent(n.table)+
			` USING gin (content gin_trgm_ops)`)
	}
	if err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return fmt.Errorf("roll back pg_trgm savepoint: %w (after %w)", rbErr, err)
		}
		slog.Warn("pgvector store: no pg_trgm trigram index, keyword search scans the table for substring matches; "+
			"have a superuser run CREATE EXTENSION pg_trgm and create the index", "table", n.table, "index", n.trgm, "err", err)
		return nil
	}
	return sp.Commit(ctx)
}

func pgvecFTSIndexSQL(n pgvecNames, regconfig string) string {
	return `CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.fts) + ` ON ` + pgvecIdent(n.table) +
		` USING gin (to_tsvector(` + regconfig + `, content))`
}

// pgvecCreateV3 stores each chunk's tsvector in a generated column "tsv"
// (computed once per write, not per row and query as the expression index
// of version 1 needed for ranking) with a GIN index, and drops the
// expression index. An existing table is upgraded in place: adding the
// column computes it for every row, inside the start-up transaction.
func pgvecCreateV3(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, regconfig string, _ string) error {
	for _, s := range []string{
		`DROP INDEX IF EXISTS ` + pgvecIdent(n.fts),
		pgvecTSVColumnSQL(n, regconfig),
		pgvecTSVIndexSQL(n),
	} {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// pgvecTSVColumnSQL adds the generated tsvector column.
func pgvecTSVColumnSQL(n pgvecNames, regconfig string) string {
	return `ALTER TABLE ` + pgvecIdent(n.table) + ` ADD COLUMN IF NOT EXISTS tsv tsvector GENERATED ALWAYS AS (to_tsvector(` +
		regconfig + `, content)) STORED`
}

// pgvecTSVIndexSQL creates the GIN index on the tsvector column.
func pgvecTSVIndexSQL(n pgvecNames) string {
	return `CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.tsv) + ` ON ` + pgvecIdent(n.table) + ` USING gin (tsv)`
}

func pgvecHNSWIndexSQL(n pgvecNames, dim int) string {
	vs := pgvecVectorFor(dim)
	if vs.indexExpr == "" {
		return ""
	}
	return `CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.hnsw) + ` ON ` + pgvecIdent(n.table) +
		` USING hnsw (` + vs.indexExpr + `)`
}

// pgvecMigrate creates or migrates the schema of the store called name on
// conn, in one transaction holding pgvecSchemaLockKey: a second process
// starting at the same time waits for the first and then finds the schema
// done. A dimension change removes the old chunks in that same transaction.
//
// The text search configuration o names is replaced by the recorded one
// unless o.RebuildTextSearch; explicitTS says the caller named one (the
// difference is then a warning, not an info line).
//
// dim 0 means the dimension the store records (m.dim): a store that does
// not exist is then an error wrapping ErrIndexUnrecorded, found under the
// lock before anything is created.
func pgvecMigrate(ctx context.Context, conn *pgx.Conn, name string, n pgvecNames, dim int, o *PgvecOptions, explicitTS bool) (pgvecMigration, error) {
	var m pgvecMigration
	language := o.TextSearchConfig
	regconfig, err := pgvecRegconfig(language)
	if err != nil {
		return m, err
	}
	var oldTS string
	var pendingDim *int
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgvecSchemaLockKey); err != nil {
			return fmt.Errorf("take schema lock: %w", err)
		}
		if dim == 0 {
			var err error
			if dim, err = pgvecRecordedDim(ctx, tx, name); err != nil {
				return err
			}
		}
		var haveVector bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')`).Scan(&haveVector); err != nil {
			return fmt.Errorf("look for the vector extension: %w", err)
		}
		if !haveVector {
			if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
				return fmt.Errorf("create extension vector (install pgvector or have a superuser run CREATE EXTENSION vector): %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+pgvecIdent(pgvecMetaTable)+` (
			store          text PRIMARY KEY,
			chunk_table    text NOT NULL,
			schema_version integer NOT NULL,
			embedding_dim  integer NOT NULL,
			ts_config      text NOT NULL,
			updated_at     timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("create %s: %w", pgvecMetaTable, err)
		}
		// The store's IndexInfo (JSON), added after the table's first
		// version.
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgvecIdent(pgvecMetaTable)+` ADD COLUMN IF NOT EXISTS index_info jsonb`); err != nil {
			return fmt.Errorf("add index_info to %s: %w", pgvecMetaTable, err)
		}
		// The target dimension of an unfinished re-embedding migration.
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgvecIdent(pgvecMetaTable)+` ADD COLUMN IF NOT EXISTS reembed_dim integer`); err != nil {
			return fmt.Errorf("add reembed_dim to %s: %w", pgvecMetaTable, err)
		}
		// The indexes a bulk load dropped and has not rebuilt yet
		// (pgstore_bulk.go).
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgvecIdent(pgvecMetaTable)+` ADD COLUMN IF NOT EXISTS bulk_rebuild jsonb`); err != nil {
			return fmt.Errorf("add bulk_rebuild to %s: %w", pgvecMetaTable, err)
		}
		// Whether the configuration follows the documents
		// (pgstore_language.go); false for the stores made before.
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgvecIdent(pgvecMetaTable)+` ADD COLUMN IF NOT EXISTS ts_auto boolean NOT NULL DEFAULT false,
			ADD COLUMN IF NOT EXISTS ts_checked integer NOT NULL DEFAULT 0`); err != nil {
			return fmt.Errorf("add ts_auto to %s: %w", pgvecMetaTable, err)
		}

		var oldAuto bool
		err := tx.QueryRow(ctx, `SELECT schema_version, embedding_dim, ts_config, reembed_dim, ts_auto FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name).
			Scan(&m.FromVersion, &m.PreviousDim, &oldTS, &pendingDim, &oldAuto)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			m.Created = true
		case err != nil:
			return fmt.Errorf("read schema version: %w", err)
		}
		// Without a configuration named, a new store follows its documents
		// and one that does keeps doing so, and a store keeps the recorded
		// one; a named one ends that, and is taken even without
		// RebuildTextSearch while the store followed its documents (it
		// holds few chunks).
		m.languageAuto = !explicitTS && (m.Created || oldAuto)
		if !explicitTS && !m.Created && !o.RebuildTextSearch {
			language = oldTS
			if regconfig, err = pgvecRegconfig(language); err != nil {
				return fmt.Errorf("recorded text search configuration: %w", err)
			}
		}
		if !m.Created && oldTS != language && !o.RebuildTextSearch && !oldAuto {
			m.TextSearchKept, m.TextSearchRequested = oldTS, language
			language = oldTS
			if regconfig, err = pgvecRegconfig(language); err != nil {
				return fmt.Errorf("recorded text search configuration: %w", err)
			}
		}
		if m.FromVersion > pgvecSchemaVersion() {
			return fmt.Errorf("store %q has schema version %d, newer than this library's %d: upgrade askyourdocs", name, m.FromVersion, pgvecSchemaVersion())
		}
		for _, step := range pgvecMigrations {
			if step.version <= m.FromVersion {
				continue
			}
			if err := step.apply(ctx, tx, n, dim, regconfig, language); err != nil {
				return fmt.Errorf("migrate to schema version %d (%s): %w", step.version, step.what, err)
			}
		}
		m.ToVersion = pgvecSchemaVersion()

		recordedDim := dim
		switch {
		case m.Created || m.PreviousDim == dim:
		case o.DeleteOnDimensionChange:
			if err := pgvecDropReembed(ctx, tx, n, name); err != nil {
				return err
			}
			if err := pgvecChangeDimension(ctx, tx, n, dim, &m); err != nil {
				return err
			}
		case !o.ReembedOnOpen:
			// Nothing changes: writes and vector searches refuse the new
			// dimension until Reembed (an unfinished migration of an
			// earlier ReembedOnOpen start waits for it too).
			m.dimMismatch = true
			recordedDim = m.PreviousDim
		default:
			// The old vectors and dimension stay recorded until the swap.
			m.DimensionChanged, m.reembedPending = true, true
			recordedDim = m.PreviousDim
			if m.ReembedResumed, err = pgvecBeginReembed(ctx, tx, n, name, dim, pendingDim); err != nil {
				return err
			}
		}
		if !m.Created && oldTS != language {
			m.TextSearchChanged = true
			if err := pgvecSwitchTextSearch(ctx, tx, n, language, true); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+pgvecIdent(pgvecMetaTable)+` (store, chunk_table, schema_version, embedding_dim, ts_config, ts_auto)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (store) DO UPDATE SET chunk_table = EXCLUDED.chunk_table, schema_version = EXCLUDED.schema_version,
				embedding_dim = EXCLUDED.embedding_dim, ts_config = EXCLUDED.ts_config, ts_auto = EXCLUDED.ts_auto, updated_at = now()`,
			name, n.table, m.ToVersion, recordedDim, language, m.languageAuto); err != nil {
			return fmt.Errorf("record schema version: %w", err)
		}
		return nil
	})
	if err != nil {
		return pgvecMigration{}, err
	}
	if m.TextSearchKept != "" {
		log := slog.Info
		if explicitTS {
			log = slog.Warn
		}
		log("pgvector store: keeping the recorded text search configuration; set PgvecOptions.RebuildTextSearch to change it",
			"store", name, "recorded", m.TextSearchKept, "requested", m.TextSearchRequested)
	}
	o.TextSearchConfig = language
	m.dim = dim
	if m.dimMismatch {
		slog.Warn("pgvector store: the stored vectors have another dimension than the embedder's; writes and vector searches fail with ErrDimensionMismatch until Reembed",
			"store", name, "stored", m.PreviousDim, "embedder", dim)
	}
	if m.DimensionChanged && !m.reembedPending {
		slog.Warn("pgvector store: embedding dimension changed, old chunks removed (DeleteOnDimensionChange); index the documents again",
			"store", name, "table", n.table, "from", m.PreviousDim, "to", dim, "removed", m.RemovedChunks)
	}
	if !m.Created && m.FromVersion < m.ToVersion {
		var steps []string
		for _, st := range pgvecMigrations[m.FromVersion:] {
			steps = append(steps, fmt.Sprintf("v%d %s", st.version, st.what))
		}
		slog.Info("pgvector store: schema upgraded in place", "store", name, "table", n.table,
			"from", m.FromVersion, "to", m.ToVersion, "steps", strings.Join(steps, "; "))
	}
	if m.TextSearchChanged {
		slog.Info("pgvector store: full-text index rebuilt", "store", name, "from", oldTS, "to", language)
	}
	if vs := pgvecVectorFor(dim); vs.indexExpr == "" {
		slog.Warn("pgvector store: no HNSW index above 4000 dimensions, searches scan every chunk", "store", name, "dim", dim)
	}
	return m, nil
}

// pgvecRecordedDim returns the embedding dimension recorded for the store
// called name; a store that does not exist is an error wrapping
// ErrIndexUnrecorded.
func pgvecRecordedDim(ctx context.Context, tx pgx.Tx, name string) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgvecIdent(pgvecMetaTable)).Scan(&exists); err != nil {
		return 0, fmt.Errorf("look for %s: %w", pgvecMetaTable, err)
	}
	var dim int
	if exists {
		err := tx.QueryRow(ctx, `SELECT embedding_dim FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name).Scan(&dim)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			exists = false
		case err != nil:
			return 0, fmt.Errorf("read the recorded embedding dimension: %w", err)
		}
	}
	if !exists {
		return 0, fmt.Errorf("store %q does not exist, and a new store needs an embedding dimension (0 given): %w", name, ErrIndexUnrecorded)
	}
	return dim, nil
}

// pgvecChangeDimension removes every chunk (their vectors cannot be compared
// with the new embedder's), changes the column type and rebuilds the HNSW
// index, inside the caller's transaction.
func pgvecChangeDimension(ctx context.Context, tx pgx.Tx, n pgvecNames, dim int, m *pgvecMigration) error {
	t := pgvecIdent(n.table)
	tag, err := tx.Exec(ctx, `DELETE FROM `+t)
	if err != nil {
		return fmt.Errorf("remove chunks of dimension %d: %w", m.PreviousDim, err)
	}
	m.RemovedChunks = int(tag.RowsAffected())
	m.DimensionChanged = true
	stmts := []string{
		`DROP INDEX IF EXISTS ` + pgvecIdent(n.hnsw),
		`ALTER TABLE ` + t + ` ALTER COLUMN embedding TYPE ` + pgvecVectorFor(dim).column,
	}
	if s := pgvecHNSWIndexSQL(n, dim); s != "" {
		stmts = append(stmts, s)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("change embedding dimension from %d to %d: %w", m.PreviousDim, dim, err)
		}
	}
	return nil
}

// pgvecLockKey maps a name to an advisory lock key (the first 8 bytes of
// its SHA-256).
func pgvecLockKey(name string) int64 {
	sum := sha256.Sum256([]byte(name))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// withSchemaLock runs fn in a transaction holding the advisory lock under
// which every PgvecStore creates and migrates its schema, and commits when
// fn returns nil. fn must not keep tx.
func (s *PgvecStore) withSchemaLock(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if err := s.checkOpen("schema lock"); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgvecSchemaLockKey); err != nil {
			return fmt.Errorf("take schema lock: %w", err)
		}
		return fn(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("pgvector store %q: %w", s.name, err)
	}
	return nil
}
