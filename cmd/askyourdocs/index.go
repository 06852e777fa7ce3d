package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Chunk metadata keys besides askyourdocs.MetaURL and MetaSource: the
// engine's (FileSource writes them) and the CLI's own metaKind.
const (
	metaParentText = askyourdocs.MetaParentText
	metaPages      = askyourdocs.MetaPages
	metaBreadcrumb = askyourdocs.MetaBreadcrumb
	metaKind       = "kind"
)

// docSource is the IngestSource of one file or web page. The chunk
// metadata carries url (file path or page URL), source (what the user
// indexed: the file, the folder it was found in, the page or the crawl's
// first seed), parentText, pages, breadcrumb and headings (the engine's
// FileSource metadata).
type docSource struct {
	url    string // absolute file path or page URL
	source string
	kind   string // pdf, docx, html, web
	paras  []askyourdocs.Paragraph
	// fetch, when set, produces the paragraphs (files, single pages).
	fetch func(ctx context.Context) ([]askyourdocs.Paragraph, error)
	// maxChunks is the chunk limit IndexSource applies (MaxChunks).
	maxChunks int
	// ident is a file's identity when it was read, recorded on its
	// chunks (fileident.go).
	ident *fileIdentity
}

// MaxChunks returns the source's chunk limit for IndexSource (a
// ChunkLimiter): 0 is the engine's default (20,000), -1 no limit.
func (s *docSource) MaxChunks() int { return s.maxChunks }

func (s *docSource) Name() string { return s.url }

func (s *docSource) Fetch(ctx context.Context) ([]askyourdocs.Paragraph, error) {
	if s.fetch != nil {
		return s.fetch(ctx)
	}
	return s.paras, nil
}

func (s *docSource) Documents(chunks []askyourdocs.Chunk) []*ai.Document {
	// The engine's FileSource metadata (url, source, parent text, pages,
	// breadcrumb), for a web page too, plus the kind.
	docs := (&askyourdocs.FileSource{Path: s.url, Source: s.source}).Documents(chunks)
	for _, d := range docs {
		d.Metadata[metaKind] = s.kind
		if s.ident != nil {
			s.ident.metadata(d.Metadata)
		}
	}
	return docs
}

// DeleteStale removes the chunks of the previous version of this file or
// page (the stores turn this into a diff).
func (s *docSource) DeleteStale(ctx context.Context, store askyourdocs.VectorStore) (int, error) {
	return store.DeleteByURL(ctx, s.url)
}

// supportedExtList names the file types the CLI indexes, for messages.
const supportedExtList = ".pdf, .docx, .pptx, .xlsx, .odt, .ods, .odp, .epub, .md, .markdown, .txt, .html, .htm"

// fileKind returns the kind of a file the CLI indexes by its extension, ""
// when it is not supported.
func fileKind(path string) string {
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".html" || ext == ".htm" || ext == ".xhtml":
		return "html"
	case askyourdocs.SupportedDocumentExt(ext):
		return strings.TrimPrefix(ext, ".")
	case askyourdocs.SupportedImageExt(ext) && cliOCR() != nil:
		return strings.TrimPrefix(ext, ".") // a scan, read through OCR
	}
	return ""
}

// newFileSource returns the source for a file.
func newFileSource(abs, source, kind string) *docSource {
	s := &docSource{url: abs, source: source, kind: kind}
	// The engine's FileSource reads every format by its extension (HTML
	// through HTMLToStructuredText); the CLI adds its own metadata.
	fetch := (&askyourdocs.FileSource{Path: abs, OCR: cliOCR()}).Fetch
	s.fetch = func(ctx context.Context) ([]askyourdocs.Paragraph, error) {
		// The identity is taken before the text: a file changed in
		// between is refused by /files until it is indexed again, never
		// served as what was indexed. A file that cannot be read leaves
		// the error to the reader, which says it in its words.
		s.ident, _ = readFileIdentity(abs)
		return fetch(ctx)
	}
	return s
}

// pageFetchTimeout bounds the fetch of one web page source (two minutes,
// as the engine's default Fetcher without a context of its own).
const pageFetchTimeout = 2 * time.Minute

// newPageFetcher returns the fetcher of web page sources: private targets
// refused unless allowPrivate (--allow-private), the default page limit.
func newPageFetcher(allowPrivate bool) *askyourdocs.Fetcher {
	return askyourdocs.NewFetcher(&askyourdocs.FetcherOptions{AllowPrivateTargets: allowPrivate})
}

// newPageSource returns the source for one web page, fetched with pages
// (following <meta refresh> stubs on the same host) until the indexing
// context ends.
func newPageSource(pages *askyourdocs.Fetcher, url string) *docSource {
	s := &docSource{url: url, source: url, kind: "web"}
	s.fetch = func(ctx context.Context) ([]askyourdocs.Paragraph, error) {
		ctx, cancel := context.WithTimeout(ctx, pageFetchTimeout)
		defer cancel()
		page, _, err := pages.FetchWebPageFollowingRefresh(ctx, url)
		if err != nil {
			return nil, err
		}
		return askyourdocs.HTMLToStructuredText(strings.NewReader(page))
	}
	return s
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// indexReport is the outcome of one index run (the --json output). Every
// key is always present.
type indexReport struct {
	Sources   int   `json:"sources"`
	Chunks    int   `json:"chunks"`
	Embedded  int64 `json:"embedded"` // chunks embedded for the sources kept (not those rolled back)
	Deleted   int   `json:"deleted"`
	Unchanged int   `json:"unchanged"`
	// Failed are the sources that could not be read (exit status 1).
	Failed []failedSource `json:"failed"`
	// Skipped counts files not indexed, by extension or reason
	// (".txt", "excluded", "symlink loop", ...).
	Skipped map[string]int `json:"skipped"`
	// BrokenLinks are crawled links whose pages answered 404 or 410:
	// warnings, not failures (the exit status stays 0 when nothing else
	// failed).
	BrokenLinks []failedSource `json:"brokenLinks"`
	// Empty are documents without text (empty, or a scan without a text
	// layer): reported, not failures.
	Empty []failedSource `json:"empty"`
	// Removed are the files that are gone from an indexed folder (or now
	// excluded) and were removed from the index.
	Removed     []removedSource `json:"removed"`
	Interrupted string          `json:"interrupted"`
	Seconds     float64         `json:"seconds"`
	Store       string          `json:"store"`
	Embedder    string          `json:"embedder"`
}

// removedSource is a file removed from the index because it is gone from
// its folder, or a page that now answers 404 or 410: its absolute path (as "url" everywhere in --json output) and
// the short form shown to people.
type removedSource struct {
	URL     string `json:"url"`
	Display string `json:"display"`
}

// newIndexReport returns an empty report whose lists are empty, not nil
// (every key of the JSON output is always present).
func newIndexReport() *indexReport {
	return &indexReport{Skipped: map[string]int{}, Failed: []failedSource{}, BrokenLinks: []failedSource{},
		Empty: []failedSource{}, Removed: []removedSource{}}
}

// failedSource is one file, page or crawl that failed or was skipped:
// source as the user gave it (or as found in a folder), url the absolute
// file path or page URL, as in the other commands' output.
type failedSource struct {
	Source string `json:"source"`
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// absoluteOf returns the absolute path of a file argument, a URL as it is.
func absoluteOf(s string) string {
	if isURL(s) {
		return s
	}
	if abs, err := filepath.Abs(s); err == nil {
		return abs
	}
	return s
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// indexJob is one file or page to index, or a folder to sync.
type indexJob struct {
	display string
	src     *docSource
	// folder, when set, is the absolute folder this job syncs with
	// askyourdocs.IndexFolder (src is nil then); changed, when set,
	// limits the sync to those paths (FolderOptions.Changed).
	folder  string
	changed []string
}

// defaultMaxChunks is --max-chunks' default: the engine's own limit when a
// source sets none (FileSource.ChunkLimit 0), shown in --help.
const defaultMaxChunks = 20_000

func (a *cliApp) cmdIndex(ctx context.Context, args []string) error {
	fset, cf := a.flags("index")
	crawl := fset.Bool("crawl", false, "crawl the sites of the URL arguments (same host, below the seed's path)")
	maxPages := fset.Int("max-pages", 100, "with --crawl: at most this many pages")
	maxDepth := fset.Int("max-depth", 5, "with --crawl: at most this many links away from a seed")
	delay := fset.Int("delay", 250, "with --crawl: milliseconds between two requests to the host")
	chunkSize := fset.Int("chunk-size", defaultChunkSize, "maximum chunk size in characters")
	overlap := fset.Int("chunk-overlap", defaultChunkOverlap, "characters carried over between chunks")
	maxChunks := fset.Int("max-chunks", defaultMaxChunks, "refuse a document that gives more chunks than this (0: no limit)")
	var excludes stringList
	fset.Var(&excludes, "exclude", "leave out files and folders matching this gitignore pattern, relative to the folder (repeatable)")
	outside := fset.Bool("follow-symlinks-outside", false, "also follow symlinks whose target lies outside the folder "+
		"(whoever may write to the folder can then make readers of the index see any file this process can read)")
	watch := fset.Bool("watch", false, "keep running after indexing: index each change of the folders as it happens "+
		"(new, edited and deleted files; Ctrl-C stops)")
	language := fset.String("keyword-language", "", "stem the index's keywords as this language: simple (no stemming), "+
		"english, german, french, ... (the index is re-analysed once when it changes); by default a new index "+
		"takes English stems when its first chunks are mostly English, else none")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("index", "index needs at least one file, folder or URL")
	}
	if *chunkSize < 100 || *overlap < 0 || *overlap >= *chunkSize {
		return usageError("index", "--chunk-size must be >= 100 and --chunk-overlap between 0 and the chunk size")
	}
	if *maxChunks < 0 {
		return usageError("index", "--max-chunks must be >= 0 (0: no limit)")
	}
	if *maxChunks == 0 {
		*maxChunks = -1 // no limit, in ChunkLimiter's terms
	}
	askyourdocs.SetAllowPrivateTargets(cf.allowPrivate) // the crawl's default Fetcher
	pages := newPageFetcher(cf.allowPrivate)

	start := time.Now()
	rep := newIndexReport()
	var jobs []indexJob
	var seeds []string
	var hints []string
	for _, p := range pos {
		switch {
		case isURL(p) && *crawl:
			seeds = append(seeds, p)
		case isURL(p):
			jobs = append(jobs, indexJob{display: p, src: newPageSource(pages, p)})
		default:
			job, err := collectArg(p, rep.Skipped)
			if err != nil {
				rep.Failed = append(rep.Failed, failedSource{Source: p, URL: absoluteOf(p), Reason: err.Error()})
				if h := errorHint(err); h != "" {
					hints = append(hints, h)
				}
				continue
			}
			if job != nil {
				jobs = append(jobs, *job)
			}
		}
	}
	if *crawl && len(seeds) == 0 {
		return usageError("index", "--crawl needs at least one http(s) URL")
	}

	b, err := a.open(ctx, cf, openOptions{write: true, keywordLanguage: *language})
	if err != nil {
		return err
	}
	defer b.Close()
	rep.Store, rep.Embedder = storeLabel(b.store), b.manifest.Embedder
	before, err := b.store.Sources(ctx)
	if err != nil {
		return err
	}
	oldChunks := chunksByURL(before)

	total := 0
	for _, j := range jobs {
		if j.folder == "" {
			total++ // a folder's files count once it is walked
		}
	}
	if len(seeds) > 0 {
		total += *maxPages
	}
	prog := newProgress(a.stderr, total, !cf.json && !a.quiet)
	if len(seeds) > 0 && len(jobs) == 0 {
		prog.unit, prog.units = "page", "pages"
	}
	ix := &indexer{b: b, rep: rep, prog: prog, chunkSize: *chunkSize, overlap: *overlap, maxChunks: *maxChunks, oldChunks: oldChunks,
		excludes: excludes, outside: *outside}

	// One bulk run: PostgreSQL commits the sources in batches and builds
	// its search indexes once; SQLite commits each source (store.go).
	runJobs := jobs
	if *watch {
		// The watch's first sync indexes the folders.
		runJobs = slices.DeleteFunc(slices.Clone(jobs), func(j indexJob) bool { return j.folder != "" })
	}
	if err := ix.inBulk(func() error {
		if err := ix.indexJobs(ctx, runJobs); err != nil {
			return err
		}
		if len(seeds) > 0 && ctx.Err() == nil && rep.Interrupted == "" {
			ix.crawl(ctx, seeds, *maxPages, *maxDepth, *delay)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("saving the index: %w", err)
	}
	ix.saveChecks(ctx)
	prog.finish()
	rep.Seconds = time.Since(start).Seconds()
	if *watch {
		switch {
		case len(runJobs) == 0 && len(seeds) == 0:
		case cf.json:
			printJSON(a.stdout, rep)
		default:
			a.printIndexSummary(rep)
		}
		return a.watchFolders(ctx, ix, jobs, cf.json)
	}

	if cf.json {
		if err := printJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		a.printIndexSummary(rep)
	}
	if len(hints) > 0 && len(rep.Failed) > 0 && rep.Sources == 0 && !cf.json {
		return withHint(fmt.Errorf("nothing could be indexed (see above)"), hints[0])
	}
	switch {
	case rep.Interrupted != "" || ctx.Err() != nil:
		return fmt.Errorf("%w: finished sources are kept; %s", errInterrupted, interruptedText(rep.Interrupted))
	case len(rep.Failed) > 0 && cf.json:
		return &quietError{fmt.Errorf("%d sources failed", len(rep.Failed))} // the report says which
	case len(rep.Failed) > 0:
		return fmt.Errorf("%d of %d sources could not be indexed (see above)", len(rep.Failed), len(rep.Failed)+rep.Sources)
	}
	return nil
}

func interruptedText(src string) string {
	if src == "" {
		return "nothing was in progress"
	}
	return src + " was rolled back to its previous state"
}

// Default chunking: ~1200 characters with 150 overlap, as in the spec's
// example.
const (
	defaultChunkSize    = 1200
	defaultChunkOverlap = 150
)

// indexer runs IndexSource for each source and fills the report.
type indexer struct {
	b                  *backend
	rep                *indexReport
	prog               *progress
	chunkSize, overlap int
	// maxChunks is the chunk limit per document, as ChunkLimiter reads
	// it: 0 (serve) the engine's default, -1 none (--max-chunks 0).
	maxChunks int
	// oldChunks is the number of chunks of each url before the run.
	oldChunks map[string]int
	// excludes and outside are the folder rules of --exclude and
	// --follow-symlinks-outside.
	excludes []string
	outside  bool
	// checks and gone are the source checks of the run (saved by
	// saveChecks): the sources read, and those that left the index.
	checks []sourceCheck
	gone   []string
	// w is what the run's writes go through while a bulk run is in
	// progress (its writer); nil: the store.
	w askyourdocs.VectorStore
}

// writer returns what a write of the run goes through.
func (ix *indexer) writer() askyourdocs.VectorStore {
	if ix.w != nil {
		return ix.w
	}
	return ix.b.store
}

// folderStore returns the store IndexFolder writes to: the PgvecStore
// itself, not the CLI's wrapper, so that IndexFolder's own Bulk run joins
// the run of inBulk and the folder's files are committed in its batches
// (given the wrapper, IndexFolder wrote each file in a transaction of its
// own).
func (ix *indexer) folderStore() askyourdocs.Searcher {
	if pg, ok := ix.b.store.(*pgStore); ok {
		return pg.PgvecStore
	}
	return ix.b.store
}

// inBulk runs fn as one bulk run of the store, its writes through the run.
func (ix *indexer) inBulk(fn func() error) error {
	return ix.b.store.bulk(func(w askyourdocs.VectorStore) error {
		ix.w = w
		defer func() { ix.w = nil }()
		return fn()
	})
}

// saveChecks records the run's source checks in the store; a failure
// costs only the dates `sources` shows, so it is logged, not fatal.
func (ix *indexer) saveChecks(ctx context.Context) {
	if len(ix.checks) == 0 && len(ix.gone) == 0 {
		return
	}
	if err := ix.b.store.saveChecks(context.WithoutCancel(ctx), ix.checks, ix.gone); err != nil {
		slog.Warn("index: the dates of the sources were not recorded", "err", err)
	}
	ix.checks, ix.gone = ix.checks[:0], ix.gone[:0]
}

// folderOptions are the options of the CLI's folder syncs: its folder
// rules and chunking, and its own file sources (kind and identity
// metadata).
func (ix *indexer) folderOptions() askyourdocs.FolderOptions {
	return askyourdocs.FolderOptions{
		Exclude: ix.excludes, FollowSymlinksOutside: ix.outside, ChunkSize: ix.chunkSize, ChunkOverlap: ix.overlap,
		OCR: cliOCR(), MaxChunks: ix.maxChunks,
		Source: func(p, folder string) askyourdocs.IngestSource {
			src := newFileSource(p, folder, fileKind(p))
			src.maxChunks = ix.maxChunks
			return src
		},
	}
}

// indexJobs runs jobs in order: files and pages through indexOne, folders
// through indexFolder. It stops at Ctrl-C and returns only a store error
// that ends the run.
func (ix *indexer) indexJobs(ctx context.Context, jobs []indexJob) error {
	for _, j := range jobs {
		if ctx.Err() != nil || ix.rep.Interrupted != "" {
			return nil
		}
		if j.folder == "" {
			ix.indexOne(ctx, j.display, j.src)
			continue
		}
		if err := ix.indexFolder(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

// indexFolder syncs one folder with askyourdocs.IndexFolder, reporting
// each file as indexOne does and each file gone from it as removed. A
// folder that cannot be walked is a failed source; a store that cannot
// remove a gone file ends the run.
func (ix *indexer) indexFolder(ctx context.Context, j indexJob) error {
	display := func(p string) string {
		if r, err := filepath.Rel(j.folder, p); err == nil {
			return filepath.Join(j.display, r)
		}
		return p
	}
	var paths []string
	next := 0
	embedded := ix.b.emb.docs.Load()
	opts := ix.folderOptions()
	opts.Changed = j.changed
	opts.OnWalk = func(files []string) {
		paths = files
		ix.prog.setTotal(ix.prog.total + len(files))
		if len(files) > 0 {
			ix.prog.begin(display(files[0]))
		}
	}
	opts.OnFile = func(f askyourdocs.FolderFile) {
		if f.Removed {
			ix.gone = append(ix.gone, f.Path)
			ix.rep.Deleted += f.Deleted
			ix.rep.Removed = append(ix.rep.Removed, removedSource{URL: f.Path, Display: shortPath(f.Path, j.folder)})
			ix.prog.note(fmt.Sprintf("removed %s (%s): no longer in %s", printable(shortPath(f.Path, j.folder)),
				count(f.Deleted, "chunk", "chunks"), printable(displayPath(j.folder))))
			return
		}
		now := ix.b.emb.docs.Load()
		ix.record(ctx, display(f.Path), f.Path, f.Chunks, f.Deleted, int(now-embedded), f.Err)
		embedded = now
		if next++; next < len(paths) {
			ix.prog.begin(display(paths[next]))
		}
	}
	res, err := askyourdocs.IndexFolder(ctx, ix.folderStore(), j.folder, &opts)
	if res != nil {
		for k, n := range res.Skipped {
			ix.rep.Skipped[k] += n
		}
		logSkippedLinks(res)
	}
	switch {
	case err == nil, ctx.Err() != nil:
		return nil
	case res == nil:
		ix.addFailureAt(j.display, j.folder, err.Error())
		return nil
	}
	return err
}

// indexOne indexes one file or page source and records its outcome.
func (ix *indexer) indexOne(ctx context.Context, display string, src *docSource) (int, error) {
	ix.prog.begin(display)
	src.maxChunks = ix.maxChunks
	before := ix.b.emb.docs.Load()
	n, deleted, err := askyourdocs.IndexSource(ctx, ix.writer(), src, ix.chunkSize, ix.overlap, nil)
	if err != nil && ctx.Err() == nil && (errors.Is(err, askyourdocs.ErrNoDocuments) || errors.Is(err, askyourdocs.ErrNoText)) {
		// Nothing to index, which stays so on every re-run: the old
		// chunks go (as IndexFolder does for a folder's files).
		if removed, derr := ix.writer().DeleteByURL(ctx, src.url); derr == nil {
			deleted = removed
		}
	}
	ix.record(ctx, display, src.url, n, deleted, int(ix.b.emb.docs.Load()-before), err)
	var status *askyourdocs.HTTPStatusError
	if src.kind == "web" && errors.As(err, &status) && (status.StatusCode == 404 || status.StatusCode == 410) {
		ix.removeGonePage(ctx, src.url, status.Error())
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// removeGonePage removes the chunks of a page indexed before this run
// that now answers 404 or 410: it is gone from the web, so it leaves the
// index (a 5xx or a time-out is transient: the page keeps its chunks).
func (ix *indexer) removeGonePage(ctx context.Context, pageURL, reason string) {
	if ix.oldChunks[pageURL] == 0 {
		return
	}
	n, err := ix.writer().DeleteByURL(ctx, pageURL)
	if err != nil {
		ix.addFailureAt(pageURL, pageURL, "removing the page, which "+reason+": "+err.Error())
		return
	}
	delete(ix.oldChunks, pageURL)
	ix.gone = append(ix.gone, pageURL)
	ix.rep.Deleted += n
	ix.rep.Removed = append(ix.rep.Removed, removedSource{URL: pageURL, Display: pageURL})
	ix.prog.note(fmt.Sprintf("removed %s (%s): it answers %s", printable(pageURL), count(n, "chunk", "chunks"), reason))
}

// record adds the outcome of one source (n chunks, deleted old ones,
// embedded of them newly embedded, or err) to the report and the
// progress: a failure is recorded, a document without text is reported
// as empty (its old chunks were removed), Ctrl-C marks the source as
// interrupted (IndexSource has rolled it back).
func (ix *indexer) record(ctx context.Context, display, url string, n, deleted, embedded int, err error) {
	if err != nil {
		if ctx.Err() != nil {
			ix.rep.Interrupted = display
			ix.prog.done(display, 0, "interrupted, rolled back")
			return
		}
		if errors.Is(err, askyourdocs.ErrNoDocuments) || errors.Is(err, askyourdocs.ErrNoText) {
			ix.checks = append(ix.checks, sourceCheckAt(url, time.Now(), deleted > 0))
			ix.rep.Deleted += deleted
			reason := explainIndexError(err)
			ix.rep.Empty = append(ix.rep.Empty, failedSource{Source: display, URL: url, Reason: reason})
			ix.prog.done(display, 0, "skipped: "+reason)
			return
		}
		ix.addFailureAt(display, url, explainIndexError(err))
		return
	}
	// The store reports every old chunk it rewrote as deleted, also those
	// whose text is unchanged (only their metadata moved); count what
	// really went: the old chunks whose text is no longer there.
	old, known := ix.oldChunks[url]
	removed := max(0, min(old-(n-embedded), deleted))
	// Only a source that was kept counts its embeddings: a failed or
	// interrupted one was rolled back, its vectors thrown away.
	ix.rep.Embedded += int64(embedded)
	ix.rep.Sources++
	ix.rep.Chunks += n
	ix.rep.Deleted += removed
	note := fmt.Sprintf("%s, %d embedded", count(n, "chunk", "chunks"), embedded)
	if removed > 0 {
		note += fmt.Sprintf(", %d removed", removed)
	}
	unchanged := embedded == 0 && removed == 0 && known && old == n
	if unchanged {
		ix.rep.Unchanged++
		note = count(n, "chunk", "chunks") + ", unchanged"
	}
	ix.checks = append(ix.checks, sourceCheckAt(url, time.Now(), !unchanged))
	ix.prog.done(display, n, note)
}

// chunksByURL returns the number of chunks of each source URL in sources,
// what indexOne compares a source's new chunks with: a source not in it is
// new, so a copy of an indexed file is not reported unchanged.
func chunksByURL(sources []askyourdocs.Source) map[string]int {
	out := make(map[string]int, len(sources))
	for _, s := range sources {
		out[s.URL] += s.Chunks
	}
	return out
}

// addFailure records a failed source once (a crawl may report one
// refusal through several paths).
func (ix *indexer) addFailure(src, reason string) {
	ix.addFailureAt(src, absoluteOf(src), reason)
}

// addFailureAt is addFailure for a source shown as display whose path or
// URL is url (an uploaded file is shown by its name, not where serve
// keeps it).
func (ix *indexer) addFailureAt(display, url, reason string) {
	for _, f := range ix.rep.Failed {
		if f.Source == display || strings.TrimSuffix(f.Source, "/") == strings.TrimSuffix(display, "/") {
			return
		}
	}
	ix.rep.Failed = append(ix.rep.Failed, failedSource{Source: display, URL: url, Reason: reason})
	ix.prog.fail(display, reason)
}

// crawl runs one crawl over seeds, indexing each page as its own source
// (source = the first seed).
func (ix *indexer) crawl(ctx context.Context, seeds []string, maxPages, maxDepth, delay int) {
	source := seeds[0]
	indexPage := func(ctx context.Context, pageURL string, paras []askyourdocs.Paragraph) (int, error) {
		return ix.indexOne(ctx, pageURL, &docSource{url: pageURL, source: source, kind: "web", paras: paras})
	}
	ix.prog.crawlStarted(maxPages)
	ix.prog.note("crawling " + strings.Join(seeds, ", "))
	failedBefore := len(ix.rep.Failed)
	res, err := askyourdocs.RunCrawl(ctx, askyourdocs.CrawlInput{
		SeedURLs: seeds, MaxPages: maxPages, MaxDepth: maxDepth, DelayMs: delay,
		Previous: ix.previousCrawl(ctx, source),
	}, filepath.Join(ix.dataDirForCache(), "crawl-cache"), indexPage, ix.prog.crawlMessage)
	// A refusal by the SSRF guard shows up several times (robots.txt,
	// the seed, the crawl's error): it is one failure of the crawl.
	for _, e := range res.Errors {
		if _, detail, ok := strings.Cut(e, askyourdocs.ErrPrivateTarget.Error()); ok {
			ix.addFailure(source, explainIndexError(fmt.Errorf("%w%s", askyourdocs.ErrPrivateTarget, detail)))
			ix.prog.setTotal(ix.prog.finished)
			return
		}
	}
	// Pages whose indexPage failed are already in Failed; the rest of
	// Errors are fetch problems.
	for _, e := range res.Errors {
		if ix.alreadyFailed(e) {
			continue
		}
		u, reason, ok := strings.Cut(e, ": ")
		if !ok {
			u, reason = source, e
		}
		if brokenLinkStatus.MatchString(reason) {
			ix.removeGonePage(ctx, u, reason) // indexed before, gone now
		}
		if isBrokenLink(u, reason, seeds) {
			ix.rep.BrokenLinks = append(ix.rep.BrokenLinks, failedSource{Source: u, URL: u, Reason: reason})
			continue
		}
		ix.addFailure(u, reason)
	}
	if err != nil && ctx.Err() == nil && len(ix.rep.Failed) == failedBefore {
		ix.addFailure(source, explainIndexError(err))
	}
	ix.recordCrawl(ctx, source, res)
	// The crawl used up fewer pages than --max-pages: settle the total.
	ix.prog.setTotal(ix.prog.finished)
}

// brokenLinkStatus matches the crawl's error for a page that is gone.
var brokenLinkStatus = regexp.MustCompile(`^HTTP status (404|410) `)

// isBrokenLink reports whether a crawl error is a linked page (not a
// seed) answering 404 Not Found or 410 Gone: a broken link of the site,
// not a failure of the crawl.
func isBrokenLink(u, reason string, seeds []string) bool {
	if !brokenLinkStatus.MatchString(reason) {
		return false
	}
	for _, s := range seeds {
		if strings.TrimSuffix(s, "/") == strings.TrimSuffix(u, "/") {
			return false
		}
	}
	return true
}

func (ix *indexer) dataDirForCache() string {
	if ss, ok := ix.b.store.(*sqliteStore); ok && ss.manifests != nil {
		return ss.manifests.dir
	}
	return os.TempDir()
}

func (ix *indexer) alreadyFailed(line string) bool {
	for _, f := range ix.rep.Failed {
		if strings.HasPrefix(line, f.Source+":") {
			return true
		}
	}
	return false
}

// printIndexSummary writes the human-readable summary of an index run.
func (a *cliApp) printIndexSummary(rep *indexReport) {
	w := a.stdout
	st := newStyle(w, a)
	fmt.Fprintf(w, "Indexed %s: %s (%d embedded, %d removed, %d unchanged) in %.1fs\n",
		count(rep.Sources, "source", "sources"), count(rep.Chunks, "chunk", "chunks"), rep.Embedded, rep.Deleted,
		rep.Unchanged, rep.Seconds)
	fmt.Fprintf(w, "Index: %s (embedder %s)\n", rep.Store, rep.Embedder)
	var files, pages []string
	for _, r := range rep.Removed {
		if isURL(r.URL) {
			pages = append(pages, printable(r.Display))
		} else {
			files = append(files, printable(r.Display))
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "Removed %s no longer in the folder: %s\n", count(len(files), "file", "files"), strings.Join(files, ", "))
	}
	if len(pages) > 0 {
		fmt.Fprintf(w, "Removed %s gone from the web (HTTP 404/410): %s\n", count(len(pages), "page", "pages"), strings.Join(pages, ", "))
	}
	if len(rep.Empty) > 0 {
		fmt.Fprintf(w, "Skipped %s without text:\n", count(len(rep.Empty), "document", "documents"))
		for _, f := range rep.Empty {
			fmt.Fprintf(w, "  %s: %s\n", printable(f.Source), printable(f.Reason))
		}
	}
	if n := sumCounts(rep.Skipped); n > 0 {
		keys := make([]string, 0, len(rep.Skipped))
		for k := range rep.Skipped {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, rep.Skipped[k])
		}
		fmt.Fprintf(w, "Skipped %s: %s\n", count(n, "file", "files"), strings.Join(parts, ", "))
	}
	if n := len(rep.BrokenLinks); n > 0 {
		fmt.Fprintf(w, "%s\n", st.yellow(fmt.Sprintf("Warning: %s (HTTP 404/410) skipped:", count(n, "broken link", "broken links"))))
		for i, f := range rep.BrokenLinks {
			if i == maxBrokenLinksShown && n > maxBrokenLinksShown+1 {
				fmt.Fprintf(w, "  ... and %d more (--json lists them all)\n", n-i)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", printable(f.Source), printable(f.Reason))
		}
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintf(w, "%s\n", st.red(fmt.Sprintf("Failed %d:", len(rep.Failed))))
		for _, f := range rep.Failed {
			fmt.Fprintf(w, "  %s: %s\n", printable(f.Source), printable(f.Reason))
		}
	}
	if rep.Interrupted != "" {
		fmt.Fprintf(w, "Interrupted while indexing %s: rolled back; everything before it is kept.\n", printable(rep.Interrupted))
	}
}

// maxBrokenLinksShown is how many broken links the summary lists.
const maxBrokenLinksShown = 10

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
