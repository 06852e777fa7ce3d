package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// cliLocalEmbedderDim is the built-in embedder's dimension in the CLI: 1024
// rather than the engine's default 512, because fewer hash collisions
// lifted vector MRR@10 on the evaluation set from 0.899 to 0.922 (2048 gave
// no more); see README, Retrieval evaluation.
const cliLocalEmbedderDim = 1024

// errNothingIndexed is returned by ask and search on an empty index.
var errNothingIndexed = errors.New("nothing is indexed yet: run 'askyourdocs index PATH|URL ...' first")

// absDir returns dir as an absolute path for messages (dir itself when that
// fails).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// localStoreOptions returns the embedded store's options: its name and
// keyword language, and for a command that asks once (openOptions.once)
// no memory map.
func localStoreOptions(name, language string, once bool) *askyourdocs.SQLiteOptions {
	o := &askyourdocs.SQLiteOptions{Name: name, KeywordLanguage: language}
	if once {
		o.MmapBytes = -1
	}
	return o
}

// openLocal opens the embedded store in cf.data: the SQLite database, after
// migrating a JSON index of an earlier version into it once (with a message
// on stderr). Without write, a directory holding no index is an error that
// names the directory; nothing is created.
func (a *cliApp) openLocal(ctx context.Context, b *backend, cf *commonFlags, write, once bool, language string) (cliStore, error) {
	dbPath, jsonPath := sqlitePath(cf.data, cf.name), jsonIndexPath(cf.data, cf.name)
	_, dbErr := os.Stat(dbPath)
	_, jsonErr := os.Stat(jsonPath)
	if !write && dbErr != nil && jsonErr != nil {
		return nil, fmt.Errorf("%w (no index in %s)", errNothingIndexed, absDir(cf.data))
	}
	if err := os.MkdirAll(cf.data, 0o755); err != nil {
		return nil, err
	}
	ss, err := askyourdocs.NewSQLiteStore(ctx, b.g, b.emb, dbPath, localStoreOptions(cf.name, language, once))
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
	// legacyPending: the embedder check went by an earlier version's
	// record (legacyManifest), to drop once the store records its own.
	legacyPending bool

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
	// replica is the state of the store's read replica (--pg-read); nil
	// without one.
	replica *replicaState
}

// replicaState is what the PgvecStore last said of its read replica; each
// move of the reads is a line on out (the engine's own log lines stay
// off the terminal).
type replicaState struct {
	out    io.Writer
	mu     sync.Mutex
	known  bool
	usable bool
	reason string
}

func (r *replicaState) set(usable bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !usable:
		fmt.Fprintf(r.out, "askyourdocs: warning: searches read from the primary, not the read replica (--pg-read): %s\n", reason)
	case r.known:
		fmt.Fprintln(r.out, "askyourdocs: reads are on the read replica (--pg-read) again")
	}
	r.known, r.usable, r.reason = true, usable, reason
}

// get returns whether reads use the replica and, when not, why.
func (r *replicaState) get() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.known {
		return false, "not checked yet"
	}
	return r.usable, r.reason
}

// Close drops an earlier version's record the store has replaced with its
// own (a write recorded it), releases the store and restores logging.
func (b *backend) Close() error {
	var err error
	if b.store != nil {
		err = errors.Join(b.dropMigratedManifest(context.Background()), b.store.Close())
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
	// keywordLanguage is the embedded store's keyword language (index
	// --keyword-language); "" keeps the recorded one.
	keywordLanguage string
	// reads: the command answers questions, so it reads from --pg-read
	// (a read replica) when one is given; index and the maintenance
	// commands read what they are about to change from the primary.
	reads bool
	// once: the command answers one question and exits (search, ask),
	// so the embedded store reads its database without a memory map:
	// the map's pages would count in the process's resident memory for
	// one query (SQLiteOptions.MmapBytes).
	once bool
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
		b.manifest.Embedder = askyourdocs.NewLocalEmbedder(dim).Name()
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
	readDSN := cf.pgRead
	if readDSN == "" {
		readDSN = strings.TrimSpace(a.getenv("ASKYOURDOCS_READ_DSN"))
	}
	if readDSN != "" && dsn == "" {
		return nil, fmt.Errorf("%w: --pg-read (ASKYOURDOCS_READ_DSN) names a read replica of --pg's database: give --pg (or ASKYOURDOCS_DSN) too", errUsage)
	}
	if dsn != "" {
		// The keyword language as the embedded store has it: the one
		// --keyword-language names, else the recorded one, a new store's
		// following its documents, so that a search ranks alike whichever
		// store holds the chunks.
		po := &askyourdocs.PgvecOptions{TextSearchConfig: opts.keywordLanguage}
		if opts.reads && readDSN != "" {
			b.replica = &replicaState{out: a.stderr}
			po.ReadDSN, po.OnReplicaChange = readDSN, b.replica.set
		}
		// Dimension 0 (a model, EMBEDDING_DIM unset) opens the store with
		// the dimension it records; a store that does not exist yet needs
		// the model's: ask the model once. The embedder check follows
		// (checkManifest).
		ps, err := askyourdocs.NewPgvecStoreWithOptions(ctx, b.g, cf.name, b.emb, dsn, dim, po)
		if dim == 0 && errors.Is(err, askyourdocs.ErrIndexUnrecorded) {
			if dim, err = probeDim(ctx, b.emb); err != nil {
				return nil, err
			}
			ps, err = askyourdocs.NewPgvecStoreWithOptions(ctx, b.g, cf.name, b.emb, dsn, dim, po)
		}
		if err != nil {
			return nil, err
		}
		b.store = &pgStore{PgvecStore: ps, name: cf.name}
	} else {
		st, err := a.openLocal(ctx, b, cf, opts.write, opts.once, opts.keywordLanguage)
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

// openIndexed is open for a command that reads the index (search, chat,
// eval, mcp): an empty store is errNothingIndexed, with the backend closed.
func (a *cliApp) openIndexed(ctx context.Context, cf *commonFlags, opts openOptions) (*backend, error) {
	b, err := a.open(ctx, cf, opts)
	if err != nil {
		return nil, err
	}
	if err := b.requireIndexed(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
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
