package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/jackc/pgx/v5"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// storeName is the name of the CLI's store: the LocalvecStore file is
// <data>/__db_askyourdocs.json, the PgvecStore table is named after it.
const storeName = "askyourdocs"

// manifestFile is the file next to the database in which earlier versions
// recorded which embedder built the index; the store records it itself
// now (IndexInfo), and the file is migrated into it on open.
const manifestFile = "askyourdocs-index.json"

// cliLocalEmbedderDim is the built-in embedder's dimension in the CLI: 1024
// rather than the engine's default 512, because fewer hash collisions
// lifted vector MRR@10 on the evaluation set from 0.899 to 0.922 (2048 gave
// no more); see README, Retrieval evaluation.
const cliLocalEmbedderDim = 1024

// pgManifestTable is the table in which earlier versions recorded the
// embedder of each PgvecStore the CLI built; migrated into the store's own
// record on open.
const pgManifestTable = "askyourdocs_cli_index"

// errEmbedderMismatch is returned when the configured embedder is not the one
// that built the index: its vectors would not be comparable.
var errEmbedderMismatch = errors.New("index was built with another embedder")

// errNothingIndexed is returned by ask and search on an empty index.
var errNothingIndexed = errors.New("nothing is indexed yet: run 'askyourdocs index PATH|URL ...' first")

// errInterrupted is returned when Ctrl-C ended a command.
var errInterrupted = errors.New("interrupted")

// errHelpShown ends a command after -h printed its flags.
var errHelpShown = errors.New("help shown")

// commonFlags are the flags every command takes.
type commonFlags struct {
	data         string
	pg           string
	name         string
	allowPrivate bool
	json         bool
}

// newFlagSet returns a flag set for cmd with the common flags registered.
func (a *cliApp) newFlagSet(cmd string) (*flag.FlagSet, *commonFlags) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	cf := &commonFlags{}
	fs.StringVar(&cf.data, "data", ".askyourdocs", "index directory (SQLite database <name>.db)")
	fs.StringVar(&cf.pg, "pg", "", "PostgreSQL DSN of a pgvector database (default: env ASKYOURDOCS_DSN)")
	fs.BoolVar(&cf.allowPrivate, "allow-private", false, "allow fetching from private and loopback addresses")
	fs.BoolVar(&cf.json, "json", false, "machine-readable JSON output")
	fs.StringVar(&cf.name, "name", storeName, "store name (several indexes can share a --data directory or database)")
	return fs, cf
}

// parseArgs parses args with fs, allowing flags after positional arguments
// ("ask 'question' --json"); "--" ends flag parsing. It returns the
// positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelpShown
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at "--" too: then everything after it is positional.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// cliStore is what the commands need from a store: the engine's read
// interface (askyourdocs.Searcher, which Search runs on) and the record of
// its embedder (askyourdocs.IndexRecorder), plus the CLI's bookkeeping.
type cliStore interface {
	askyourdocs.Searcher
	askyourdocs.IndexRecorder
	chunkCount(ctx context.Context) (int, error)
	describe() string
	// legacyManifest returns the embedder record an earlier version kept
	// beside the store (ok false when there is none), and drop removes it
	// once the store records it itself.
	legacyManifest(ctx context.Context) (m indexManifest, ok bool, err error)
	dropLegacyManifest(ctx context.Context) error
	// bulk runs fn as one indexing run: the local store writes its file
	// once at the end (and at each flush) instead of once per source.
	bulk(fn func() error) error
	// flush persists what a bulk run holds in memory so far.
	flush() error
}

// indexManifest is the CLI's view of the embedder record (IndexInfo).
type indexManifest struct {
	Embedder string    `json:"embedder"`
	Dim      int       `json:"dim"`
	Created  time.Time `json:"created"`
}

// localStore names the index directory and store name of an embedded
// store (for messages, the crawl cache and the legacy manifest file).
type localStore struct {
	dir, name string
}

// manifestPath is the legacy manifest beside the database:
// askyourdocs-index.json for the default store name, else
// <name>.askyourdocs-index.json.
func (s *localStore) manifestPath() string {
	if s.name == storeName {
		return filepath.Join(s.dir, manifestFile)
	}
	return filepath.Join(s.dir, s.name+"."+manifestFile)
}

// sqliteStore is the default store: an SQLiteStore <data>/<name>.db. It
// embeds *SQLiteStore, so IndexSource diffs sources on it and Search runs
// on it; the store records its embedder in the database.
type sqliteStore struct {
	*askyourdocs.SQLiteStore
	manifests *localStore
}

func (s *sqliteStore) chunkCount(ctx context.Context) (int, error) { return s.Len(ctx) }
func (s *sqliteStore) describe() string                            { return s.Path() }

// bulk and flush: SQLite commits every source itself.
func (s *sqliteStore) bulk(fn func() error) error { return fn() }
func (s *sqliteStore) flush() error               { return nil }

func (s *sqliteStore) legacyManifest(context.Context) (indexManifest, bool, error) {
	var m indexManifest
	p := s.manifests.manifestPath()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read index manifest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("read index manifest %s: %w", p, err)
	}
	return m, true, nil
}

func (s *sqliteStore) dropLegacyManifest(context.Context) error {
	if err := os.Remove(s.manifests.manifestPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the migrated index manifest: %w", err)
	}
	return nil
}

// sqlitePath returns the SQLite database of the store called name in dir.
func sqlitePath(dir, name string) string { return filepath.Join(dir, name+".db") }

// jsonIndexPath returns the JSON (LocalvecStore) database of the store
// called name in dir, the format earlier versions wrote.
func jsonIndexPath(dir, name string) string { return filepath.Join(dir, "__db_"+name+".json") }

// absDir returns dir as an absolute path for messages (dir itself when that
// fails).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// openLocal opens the embedded store in cf.data: the SQLite database, after
// migrating a JSON index of an earlier version into it once (with a message
// on stderr). Without write, a directory holding no index is an error that
// names the directory; nothing is created.
func (a *cliApp) openLocal(ctx context.Context, b *backend, cf *commonFlags, write bool) (cliStore, error) {
	dbPath, jsonPath := sqlitePath(cf.data, cf.name), jsonIndexPath(cf.data, cf.name)
	_, dbErr := os.Stat(dbPath)
	_, jsonErr := os.Stat(jsonPath)
	if !write && dbErr != nil && jsonErr != nil {
		return nil, fmt.Errorf("%w (no index in %s)", errNothingIndexed, absDir(cf.data))
	}
	if err := os.MkdirAll(cf.data, 0o755); err != nil {
		return nil, err
	}
	ss, err := askyourdocs.NewSQLiteStore(ctx, b.g, b.emb, dbPath, &askyourdocs.SQLiteOptions{Name: cf.name})
	if err != nil {
		return nil, err
	}
	st := &sqliteStore{SQLiteStore: ss, manifests: &localStore{dir: cf.data, name: cf.name}}
	if jsonErr == nil {
		// Migrate while the database has never been written (generation
		// 0): a migration that was killed or failed committed nothing and
		// is retried; the import skips chunks already there, so another
		// process migrating at the same moment adds nothing twice.
		gen, err := ss.Generation(ctx)
		if err != nil {
			ss.Close()
			return nil, err
		}
		if gen > 0 {
			return st, nil
		}
		n, err := ss.ImportLocalvec(ctx, jsonPath)
		if err != nil {
			ss.Close()
			return nil, fmt.Errorf("migrate the JSON index %s: %w", jsonPath, err)
		}
		if n == 0 {
			return st, nil
		}
		fmt.Fprintf(a.stderr, "askyourdocs: migrated the JSON index %s (%d chunks) to %s; the JSON file is no longer updated "+
			"(askyourdocs export --genkit DIR writes a current one)\n", jsonPath, n, dbPath)
	}
	return st, nil
}

// countingEmbedder counts the documents its embedder embeds, so the index
// summary can say how many chunks were actually embedded.
type countingEmbedder struct {
	ai.Embedder
	docs atomic.Int64
}

func (e *countingEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	if req != nil {
		e.docs.Add(int64(len(req.Input)))
	}
	return e.Embedder.Embed(ctx, req)
}

func (e *countingEmbedder) Register(r api.Registry) { e.Embedder.Register(r) }

// backend is everything a command works with: Genkit, the store, the
// embedder and the optional models.
type backend struct {
	g        *genkit.Genkit
	store    cliStore
	emb      *countingEmbedder
	manifest indexManifest // the embedder in use (name and dim)

	llm        ai.Model
	llmSpec    string
	rerank     ai.Model
	rerankSpec string
	genCfg     any
	rerankCfg  any
	// fallbackNote says why answers are extractive although LLM_MODEL is
	// set (its server is down); "" otherwise.
	fallbackNote string
	logCloser    io.Closer
}

// Close releases the store and restores logging.
func (b *backend) Close() error {
	var err error
	if b.store != nil {
		err = b.store.Close()
	}
	if b.logCloser != nil {
		b.logCloser.Close()
	}
	return err
}

// openOptions say what a command needs.
type openOptions struct {
	// write: the command indexes; a missing data directory is created and
	// the manifest written.
	write bool
	// models: resolve LLM_MODEL and RERANK_MODEL.
	models bool
}

// open sets up logging, models and the store for a command, and checks
// that the index was built with the configured embedder.
func (a *cliApp) open(ctx context.Context, cf *commonFlags, opts openOptions) (*backend, error) {
	b := &backend{}
	logCfg := askyourdocs.LogConfigFromEnv()
	if logCfg.Level == "" {
		logCfg.Level = a.logLevel() // keep the engine's log lines off the terminal
	}
	logCfg.Output = a.stderr
	closer, err := askyourdocs.SetupLogging(logCfg)
	if err != nil {
		return nil, err
	}
	b.logCloser = closer
	ok := false
	defer func() {
		if !ok {
			b.Close()
		}
	}()

	if err := a.checkModelEnv(); err != nil {
		return nil, err
	}
	embSpec := strings.TrimSpace(a.getenv("EMBEDDING_MODEL"))
	if opts.models {
		b.llmSpec = strings.TrimSpace(a.getenv("LLM_MODEL"))
		b.rerankSpec = strings.TrimSpace(a.getenv("RERANK_MODEL"))
	}
	pcfg, err := askyourdocs.ProviderConfigFromEnv()
	if err != nil {
		return nil, err
	}
	providers, err := askyourdocs.NewProviders(pcfg, nil, b.llmSpec, b.rerankSpec, embSpec)
	if err != nil {
		return nil, err
	}
	b.g = genkit.Init(ctx, genkit.WithPlugins(providers.Plugins()...))

	dim := 0
	if s := strings.TrimSpace(a.getenv("EMBEDDING_DIM")); s != "" {
		dim, err = strconv.Atoi(s)
		if err != nil || dim <= 0 {
			return nil, fmt.Errorf("EMBEDDING_DIM=%q: want a positive integer", s)
		}
	}
	var emb ai.Embedder
	if embSpec == "" {
		if dim == 0 {
			dim = cliLocalEmbedderDim
		}
		emb = askyourdocs.NewLocalEmbedder(dim)
		b.manifest.Embedder = askyourdocs.LocalEmbedderName(dim)
	} else {
		emb, err = providers.Embedder(b.g, embSpec, dim)
		if err != nil {
			return nil, err
		}
		b.manifest.Embedder = embSpec
	}
	b.emb = &countingEmbedder{Embedder: emb}

	if b.llmSpec != "" {
		if b.llm, err = providers.Model(b.g, b.llmSpec); err != nil {
			return nil, err
		}
		gopts, err := askyourdocs.GenerateOptionsFromEnv()
		if err != nil {
			return nil, err
		}
		b.genCfg = askyourdocs.GenerateConfig(b.llmSpec, gopts)
		b.rerankCfg = b.genCfg
	}
	if b.rerankSpec != "" {
		if b.rerank, err = providers.Model(b.g, b.rerankSpec); err != nil {
			return nil, err
		}
		gopts, err := askyourdocs.GenerateOptionsFromEnv()
		if err != nil {
			return nil, err
		}
		b.rerankCfg = askyourdocs.GenerateConfig(b.rerankSpec, gopts)
	}

	dsn := cf.pg
	if dsn == "" {
		dsn = strings.TrimSpace(a.getenv("ASKYOURDOCS_DSN"))
	}
	if dsn != "" {
		// NewPgvecStore re-embeds a table built with another dimension, so
		// the recorded embedder is checked before the store is opened.
		recorded, err := pgRecordedEmbedder(ctx, dsn, cf.name)
		if err != nil {
			return nil, err
		}
		if recorded != nil {
			if recorded.Embedder != b.manifest.Embedder || (dim > 0 && recorded.Dim != dim) {
				return nil, fmt.Errorf("%w: the PostgreSQL store %q has vectors of %s (dim %d), but this run embeds with %s%s; "+
					"set EMBEDDING_MODEL/EMBEDDING_DIM to match, or use another --name",
					errEmbedderMismatch, cf.name, recorded.Embedder, recorded.Dim, b.manifest.Embedder, dimSuffix(dim))
			}
			dim = recorded.Dim
		}
		if dim == 0 {
			// A PgvecStore needs the dimension up front: ask the model once.
			if dim, err = probeDim(ctx, b.emb); err != nil {
				return nil, err
			}
		}
		// The language of the embedded stores' keyword ranking, so that a
		// search ranks alike whichever store holds the chunks.
		ps, err := askyourdocs.NewPgvecStoreWithOptions(ctx, b.g, cf.name, b.emb, dsn, dim,
			&askyourdocs.PgvecOptions{TextSearchConfig: askyourdocs.DefaultTextSearchLanguage})
		if err != nil {
			return nil, err
		}
		b.store = &pgStore{PgvecStore: ps, name: cf.name}
	} else {
		st, err := a.openLocal(ctx, b, cf, opts.write)
		if err != nil {
			return nil, err
		}
		b.store = st
	}
	if err := b.checkManifest(ctx, dim, opts.write); err != nil {
		return nil, err
	}
	ok = true
	return b, nil
}

// checkManifest compares the embedder the store records (IndexInfo) with
// the configured one, first moving a record an earlier version kept
// beside the store into it. For the local embedder the dimension is known;
// for a model the recorded dimension is trusted unless EMBEDDING_DIM says
// otherwise (the provider then rejects vectors of another length). A
// write records the embedder, with the fusion it implies, in an empty
// store, in one step across processes.
func (b *backend) checkManifest(ctx context.Context, dim int, write bool) error {
	info, found, err := b.store.IndexInfo(ctx)
	if err != nil {
		return err
	}
	if !found {
		if m, ok, err := b.store.legacyManifest(ctx); err != nil {
			return err
		} else if ok {
			fusion := askyourdocs.FusionDefaults(m.Embedder)
			if info, _, err = b.store.RecordIndexInfo(ctx, askyourdocs.IndexInfo{Embedder: m.Embedder, Dim: m.Dim, Created: m.Created, Fusion: &fusion}, false); err != nil {
				return err
			}
			if err := b.store.dropLegacyManifest(ctx); err != nil {
				return err
			}
			found = true
		}
	}
	if found {
		return b.matchManifest(info, dim)
	}
	if !write {
		return nil
	}
	if dim == 0 {
		if dim, err = probeDim(ctx, b.emb); err != nil {
			return err
		}
	}
	fusion := askyourdocs.FusionDefaults(b.manifest.Embedder)
	want := askyourdocs.IndexInfo{Embedder: b.manifest.Embedder, Dim: dim, Created: time.Now().UTC().Truncate(time.Second), Fusion: &fusion}
	// Another process may be checking at the same moment: RecordIndexInfo
	// checks and records in one step; a record it made first is checked.
	info, existed, err := b.store.RecordIndexInfo(ctx, want, true)
	if errors.Is(err, askyourdocs.ErrIndexUnrecorded) {
		// An index built by another program: its embedder is unknown, so
		// mixing vectors would give garbage. Refuse rather than guess.
		return fmt.Errorf("%w: %s holds chunks but no record of the embedder that built them; index into another --data directory",
			errEmbedderMismatch, b.store.describe())
	}
	if err != nil {
		return err
	}
	if existed {
		return b.matchManifest(info, dim)
	}
	b.manifest = indexManifest{Embedder: info.Embedder, Dim: info.Dim, Created: info.Created}
	return nil
}

// matchManifest checks a recorded embedder against the configured one and
// adopts the record.
func (b *backend) matchManifest(info askyourdocs.IndexInfo, dim int) error {
	if info.Embedder != b.manifest.Embedder || (dim > 0 && info.Dim != dim) {
		return fmt.Errorf("%w: %s has vectors of %s (dim %d), but this run embeds with %s%s; "+
			"set EMBEDDING_MODEL/EMBEDDING_DIM to match, or index into another --data directory",
			errEmbedderMismatch, b.store.describe(), info.Embedder, info.Dim, b.manifest.Embedder, dimSuffix(dim))
	}
	b.manifest = indexManifest{Embedder: info.Embedder, Dim: info.Dim, Created: info.Created}
	return nil
}

func dimSuffix(dim int) string {
	if dim <= 0 {
		return ""
	}
	return fmt.Sprintf(" (dim %d)", dim)
}

// probeDim embeds one short text to learn the embedder's dimension.
func probeDim(ctx context.Context, emb ai.Embedder) (int, error) {
	resp, err := emb.Embed(ctx, &ai.EmbedRequest{Input: []*ai.Document{ai.DocumentFromText("dimension probe", nil)}})
	if err != nil {
		return 0, fmt.Errorf("probe embedding dimension: %w", err)
	}
	if len(resp.Embeddings) != 1 || len(resp.Embeddings[0].Embedding) == 0 {
		return 0, errors.New("probe embedding dimension: the embedder returned no vector")
	}
	return len(resp.Embeddings[0].Embedding), nil
}

// requireIndexed returns errNothingIndexed for an empty store.
func (b *backend) requireIndexed(ctx context.Context) error {
	n, err := b.store.chunkCount(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w (the index %s is empty)", errNothingIndexed, b.store.describe())
	}
	return nil
}

// pgRecordedEmbedder reads the embedder recorded for the store called name
// before NewPgvecStore touches the schema: the store's own record, else the
// table an earlier version of the CLI kept; nil when nothing is recorded.
func pgRecordedEmbedder(ctx context.Context, dsn, name string) (*indexManifest, error) {
	info, found, err := askyourdocs.ReadPgvecIndexInfo(ctx, dsn, name)
	if err != nil {
		return nil, err
	}
	if found {
		return &indexManifest{Embedder: info.Embedder, Dim: info.Dim, Created: info.Created}, nil
	}
	return pgLegacyManifest(ctx, dsn, name)
}

// pgLegacyManifest reads the record of the table askyourdocs_cli_index an
// earlier version of the CLI kept, with a connection of its own; nil when
// there is none.
func pgLegacyManifest(ctx context.Context, dsn, name string) (*indexManifest, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgManifestTable).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for %s: %w", pgManifestTable, err)
	}
	if !exists {
		return nil, nil
	}
	var m indexManifest
	err = conn.QueryRow(ctx, "SELECT embedder, dim, created FROM "+pgManifestTable+" WHERE store = $1", name).Scan(&m.Embedder, &m.Dim, &m.Created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", pgManifestTable, err)
	}
	return &m, nil
}
