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
	"github.com/firebase/genkit/go/plugins/localvec"
	"github.com/jackc/pgx/v5"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// storeName is the name of the CLI's store: the LocalvecStore file is
// <data>/__db_askyourdocs.json, the PgvecStore table is named after it.
const storeName = "askyourdocs"

// manifestFile is the file next to the LocalvecStore database that records
// which embedder built the index.
const manifestFile = "askyourdocs-index.json"

// cliLocalEmbedderDim is the built-in embedder's dimension in the CLI: 1024
// rather than the engine's default 512, because fewer hash collisions
// lifted vector MRR@10 on the evaluation set from 0.899 to 0.922 (2048 gave
// no more); see README, Retrieval evaluation.
const cliLocalEmbedderDim = 1024

// pgManifestTable records the embedder of each PgvecStore the CLI built.
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

// cliStore is what the commands need from a store: the engine's write side
// plus vector and keyword search and the listing.
type cliStore interface {
	askyourdocs.VectorStore
	vectorSearch(ctx context.Context, q *ai.Document, k int) ([]*ai.Document, error)
	keywordSearch(ctx context.Context, q string, k int) ([]*ai.Document, error)
	listSources(ctx context.Context) ([]askyourdocs.Source, error)
	chunkCount(ctx context.Context) (int, error)
	describe() string
	// manifest returns the recorded embedder (ok false when none is).
	manifest(ctx context.Context) (m indexManifest, ok bool, err error)
	// saveManifest records the embedder that builds the index.
	saveManifest(ctx context.Context, m indexManifest) error
	// bulk runs fn as one indexing run: the local store writes its file
	// once at the end (and at each flush) instead of once per source.
	bulk(fn func() error) error
	// flush persists what a bulk run holds in memory so far.
	flush() error
}

// indexManifest records which embedder built an index.
type indexManifest struct {
	Embedder string    `json:"embedder"`
	Dim      int       `json:"dim"`
	Created  time.Time `json:"created"`
}

// localStore is the default store: a LocalvecStore in a directory. It
// embeds *LocalvecStore, so IndexSource diffs sources on it.
type localStore struct {
	*askyourdocs.LocalvecStore
	dir, name string
}

func (s *localStore) vectorSearch(ctx context.Context, q *ai.Document, k int) ([]*ai.Document, error) {
	resp, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: &localvec.RetrieverOptions{K: k}})
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return resp.Documents, nil
}

func (s *localStore) keywordSearch(ctx context.Context, q string, k int) ([]*ai.Document, error) {
	docs, err := s.KeywordSearch(ctx, q, k, cliStopWords, nil)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return docs, nil
}

func (s *localStore) listSources(ctx context.Context) ([]askyourdocs.Source, error) {
	return s.Sources(ctx)
}

func (s *localStore) chunkCount(context.Context) (int, error) { return s.Len(), nil }

func (s *localStore) describe() string { return s.Path() }

func (s *localStore) bulk(fn func() error) error { return s.Bulk(fn) }
func (s *localStore) flush() error               { return s.Flush() }

// manifestPath is askyourdocs-index.json for the default store name, else
// <name>.askyourdocs-index.json.
func (s *localStore) manifestPath() string {
	if s.name == storeName {
		return filepath.Join(s.dir, manifestFile)
	}
	return filepath.Join(s.dir, s.name+"."+manifestFile)
}

func (s *localStore) manifest(context.Context) (indexManifest, bool, error) {
	var m indexManifest
	b, err := os.ReadFile(s.manifestPath())
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read index manifest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("read index manifest %s: %w", s.manifestPath(), err)
	}
	return m, true, nil
}

func (s *localStore) saveManifest(_ context.Context, m indexManifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode index manifest: %w", err)
	}
	// A temporary file of its own: two index runs may start at once.
	p := s.manifestPath()
	tmp, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write index manifest: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write index manifest: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write index manifest: %w", err)
	}
	return nil
}

// sqliteStore is the default store: an SQLiteStore <data>/<name>.db. It
// embeds *SQLiteStore, so IndexSource diffs sources on it. The manifest is
// the same file beside it as for the JSON store.
type sqliteStore struct {
	*askyourdocs.SQLiteStore
	manifests *localStore
}

func (s *sqliteStore) vectorSearch(ctx context.Context, q *ai.Document, k int) ([]*ai.Document, error) {
	docs, err := s.Retrieve(ctx, q, k)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return docs, nil
}

func (s *sqliteStore) keywordSearch(ctx context.Context, q string, k int) ([]*ai.Document, error) {
	docs, err := s.KeywordSearch(ctx, q, k, cliStopWords, nil)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return docs, nil
}

func (s *sqliteStore) listSources(ctx context.Context) ([]askyourdocs.Source, error) {
	return s.Sources(ctx)
}

func (s *sqliteStore) chunkCount(ctx context.Context) (int, error) { return s.Len(ctx) }
func (s *sqliteStore) describe() string                            { return s.Path() }

// bulk and flush: SQLite commits every source itself.
func (s *sqliteStore) bulk(fn func() error) error { return fn() }
func (s *sqliteStore) flush() error               { return nil }

func (s *sqliteStore) manifest(ctx context.Context) (indexManifest, bool, error) {
	return s.manifests.manifest(ctx)
}

func (s *sqliteStore) saveManifest(ctx context.Context, m indexManifest) error {
	return s.manifests.saveManifest(ctx, m)
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
		// NewPgvecStore empties a table built with another dimension, so
		// the recorded embedder is checked before the store is opened.
		recorded, err := pgRecordedManifest(ctx, dsn, cf.name)
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

// checkManifest compares the recorded embedder with the configured one.
// For the local embedder the dimension is known; for a model the recorded
// dimension is trusted unless EMBEDDING_DIM says otherwise (the provider
// then rejects vectors of another length).
func (b *backend) checkManifest(ctx context.Context, dim int, write bool) error {
	m, found, err := b.store.manifest(ctx)
	if err != nil {
		return err
	}
	if found {
		if m.Embedder != b.manifest.Embedder || (dim > 0 && m.Dim != dim) {
			return fmt.Errorf("%w: %s has vectors of %s (dim %d), but this run embeds with %s%s; "+
				"set EMBEDDING_MODEL/EMBEDDING_DIM to match, or index into another --data directory",
				errEmbedderMismatch, b.store.describe(), m.Embedder, m.Dim, b.manifest.Embedder, dimSuffix(dim))
		}
		b.manifest = m
		return nil
	}
	if !write {
		return nil
	}
	if dim == 0 {
		if dim, err = probeDim(ctx, b.emb); err != nil {
			return err
		}
	}
	b.manifest.Dim = dim
	if c, ok := b.store.(manifestClaimer); ok {
		// Another process may be checking at the same moment: check and
		// record in one step; a record it made first is checked as above.
		b.manifest.Created = time.Now().UTC().Truncate(time.Second)
		if found, err := c.claimManifest(ctx, b.manifest); err != nil || !found {
			return err
		}
		return b.checkManifest(ctx, dim, write)
	}
	n, err := b.store.chunkCount(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		// An index built by another program: its embedder is unknown, so
		// mixing vectors would give garbage. Refuse rather than guess.
		return fmt.Errorf("%w: %s holds %d chunks but no record of the embedder that built them; index into another --data directory",
			errEmbedderMismatch, b.store.describe(), n)
	}
	b.manifest.Dim = dim
	b.manifest.Created = time.Now().UTC().Truncate(time.Second)
	return b.store.saveManifest(ctx, b.manifest)
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

// pgRecordedManifest reads the recorded embedder of the store called name
// with a connection of its own, before NewPgvecStore touches the schema; nil
// when nothing is recorded.
func pgRecordedManifest(ctx context.Context, dsn, name string) (*indexManifest, error) {
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
