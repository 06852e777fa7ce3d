package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Chunk metadata keys besides askyourdocs.MetaURL and MetaSource.
const (
	metaParentText = "parentText"
	metaPages      = "pages"
	metaBreadcrumb = "breadcrumb"
	metaKind       = "kind"
)

// docSource is the IngestSource of one file or web page. The chunk
// metadata carries url (file path or page URL), source (what the user
// indexed: the file, the folder it was found in, the page or the crawl's
// first seed), parentText, pages and breadcrumb.
type docSource struct {
	url    string // absolute file path or page URL
	source string
	kind   string // pdf, docx, html, web
	paras  []askyourdocs.Paragraph
	// fetch, when set, produces the paragraphs (files, single pages).
	fetch func(ctx context.Context) ([]askyourdocs.Paragraph, error)
}

func (s *docSource) Name() string { return s.url }

func (s *docSource) Fetch(ctx context.Context) ([]askyourdocs.Paragraph, error) {
	if s.fetch != nil {
		return s.fetch(ctx)
	}
	return s.paras, nil
}

func (s *docSource) Documents(chunks []askyourdocs.Chunk) []*ai.Document {
	docs := make([]*ai.Document, 0, len(chunks))
	for _, c := range chunks {
		meta := map[string]any{
			askyourdocs.MetaURL:    s.url,
			askyourdocs.MetaSource: s.source,
			metaParentText:         c.ParentText,
			metaKind:               s.kind,
		}
		if c.Pages != "" {
			meta[metaPages] = c.Pages
		}
		if c.Breadcrumb != "" {
			meta[metaBreadcrumb] = c.Breadcrumb
		}
		docs = append(docs, ai.DocumentFromText(c.Text, meta))
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
	}
	return ""
}

// newFileSource returns the source for a file.
func newFileSource(abs, source, kind string) *docSource {
	s := &docSource{url: abs, source: source, kind: kind}
	s.fetch = func(context.Context) ([]askyourdocs.Paragraph, error) {
		if kind != "html" {
			return askyourdocs.ExtractParagraphs(abs)
		}
		f, err := os.Open(abs)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		paras, err := askyourdocs.HTMLToStructuredText(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", abs, err)
		}
		return paras, nil
	}
	return s
}

// newPageSource returns the source for one web page, fetched through the
// SSRF-safe fetcher (following <meta refresh> stubs on the same host).
func newPageSource(url string) *docSource {
	s := &docSource{url: url, source: url, kind: "web"}
	s.fetch = func(context.Context) ([]askyourdocs.Paragraph, error) {
		page, _, err := askyourdocs.FetchWebPageFollowingRefresh(url)
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

// indexReport is the outcome of one index run (the --json output).
type indexReport struct {
	Sources     int            `json:"sources"`
	Chunks      int            `json:"chunks"`
	Embedded    int64          `json:"embedded"`
	Deleted     int            `json:"deleted"`
	Unchanged   int            `json:"unchanged"`
	Failed      []failedSource `json:"failed,omitempty"`
	Skipped     map[string]int `json:"skipped,omitempty"`
	Interrupted string         `json:"interrupted,omitempty"`
	Seconds     float64        `json:"seconds"`
	Store       string         `json:"store"`
	Embedder    string         `json:"embedder"`
}

// failedSource is one file, page or crawl error.
type failedSource struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// indexJob is one file or page to index.
type indexJob struct {
	display string
	src     *docSource
}

func (a *cliApp) cmdIndex(ctx context.Context, args []string) error {
	fset, cf := a.newFlagSet("index")
	crawl := fset.Bool("crawl", false, "crawl the sites of the URL arguments (same host, below the seed's path)")
	maxPages := fset.Int("max-pages", 100, "with --crawl: at most this many pages")
	maxDepth := fset.Int("max-depth", 5, "with --crawl: at most this many links away from a seed")
	delay := fset.Int("delay", 250, "with --crawl: milliseconds between two requests to the host")
	chunkSize := fset.Int("chunk-size", defaultChunkSize, "maximum chunk size in characters")
	overlap := fset.Int("chunk-overlap", defaultChunkOverlap, "characters carried over between chunks")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: index needs at least one file, folder or URL", errUsage)
	}
	if *chunkSize < 100 || *overlap < 0 || *overlap >= *chunkSize {
		return fmt.Errorf("%w: --chunk-size must be >= 100 and --chunk-overlap between 0 and the chunk size", errUsage)
	}
	askyourdocs.SetAllowPrivateTargets(cf.allowPrivate)

	start := time.Now()
	rep := &indexReport{Skipped: map[string]int{}}
	var jobs []indexJob
	var seeds []string
	for _, p := range pos {
		switch {
		case isURL(p) && *crawl:
			seeds = append(seeds, p)
		case isURL(p):
			jobs = append(jobs, indexJob{display: p, src: newPageSource(p)})
		default:
			found, err := collectFiles(p, rep.Skipped)
			if err != nil {
				rep.Failed = append(rep.Failed, failedSource{Source: p, Reason: err.Error()})
				continue
			}
			jobs = append(jobs, found...)
		}
	}
	if *crawl && len(seeds) == 0 {
		return fmt.Errorf("%w: --crawl needs at least one http(s) URL", errUsage)
	}

	b, err := a.open(ctx, cf, openOptions{write: true})
	if err != nil {
		return err
	}
	defer b.Close()
	rep.Store, rep.Embedder = b.store.describe(), b.manifest.Embedder
	embeddedBefore := b.emb.docs.Load()

	total := len(jobs)
	if len(seeds) > 0 {
		total += *maxPages
	}
	prog := newProgress(a.stderr, total, !cf.json)
	ix := &indexer{b: b, rep: rep, prog: prog, chunkSize: *chunkSize, overlap: *overlap, lastFlush: time.Now()}

	// One bulk run: the local store writes its file once at the end (and
	// every flushInterval, bounding what a crash could lose) instead of once
	// per source, which made large folders quadratic.
	if err := b.store.bulk(func() error {
		for _, j := range jobs {
			if ctx.Err() != nil {
				break
			}
			ix.indexOne(ctx, j.display, j.src)
		}
		if len(seeds) > 0 && ctx.Err() == nil && rep.Interrupted == "" {
			ix.crawl(ctx, seeds, *maxPages, *maxDepth, *delay)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("saving the index: %w", err)
	}
	prog.finish()
	rep.Embedded = b.emb.docs.Load() - embeddedBefore
	rep.Seconds = time.Since(start).Seconds()

	if cf.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		a.printIndexSummary(rep)
	}
	switch {
	case rep.Interrupted != "" || ctx.Err() != nil:
		return fmt.Errorf("%w: finished sources are kept; %s", errInterrupted, interruptedText(rep.Interrupted))
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
	lastFlush          time.Time
}

// flushInterval is how often a long index run persists what it has done.
const flushInterval = 30 * time.Second

// indexOne indexes one source; a failure is recorded, Ctrl-C marks the
// source as interrupted (IndexSource has rolled it back).
func (ix *indexer) indexOne(ctx context.Context, display string, src *docSource) (int, error) {
	ix.prog.begin(display)
	if time.Since(ix.lastFlush) > flushInterval {
		// A failed intermediate save is a reported failure (exit 1), and
		// the source is still indexed: the final save writes it.
		if err := ix.b.store.flush(); err != nil {
			ix.rep.Failed = append(ix.rep.Failed, failedSource{Source: "(saving the index before " + display + ")", Reason: err.Error()})
		}
		ix.lastFlush = time.Now()
	}
	before := ix.b.emb.docs.Load()
	n, deleted, err := askyourdocs.IndexSource(ctx, ix.b.store, src, ix.chunkSize, ix.overlap, nil)
	embedded := ix.b.emb.docs.Load() - before
	if err != nil {
		if ctx.Err() != nil {
			ix.rep.Interrupted = display
			ix.prog.done(display, 0, "interrupted, rolled back")
			return 0, err
		}
		reason := explainIndexError(err)
		ix.rep.Failed = append(ix.rep.Failed, failedSource{Source: display, Reason: reason})
		ix.prog.fail(display, reason)
		return 0, err
	}
	ix.rep.Sources++
	ix.rep.Chunks += n
	ix.rep.Deleted += deleted
	note := fmt.Sprintf("%d chunks, %d embedded", n, embedded)
	if embedded == 0 && deleted == 0 {
		ix.rep.Unchanged++
		note = fmt.Sprintf("%d chunks, unchanged", n)
	}
	ix.prog.done(display, n, note)
	return n, nil
}

// crawl runs one crawl over seeds, indexing each page as its own source
// (source = the first seed).
func (ix *indexer) crawl(ctx context.Context, seeds []string, maxPages, maxDepth, delay int) {
	source := seeds[0]
	indexPage := func(ctx context.Context, pageURL string, paras []askyourdocs.Paragraph) (int, error) {
		return ix.indexOne(ctx, pageURL, &docSource{url: pageURL, source: source, kind: "web", paras: paras})
	}
	ix.prog.note("crawling " + strings.Join(seeds, ", "))
	res, err := askyourdocs.RunCrawl(ctx, askyourdocs.CrawlInput{
		SeedURLs: seeds, MaxPages: maxPages, MaxDepth: maxDepth, DelayMs: delay,
	}, filepath.Join(ix.dataDirForCache(), "crawl-cache"), indexPage, nil)
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
		ix.rep.Failed = append(ix.rep.Failed, failedSource{Source: u, Reason: reason})
		ix.prog.fail(u, reason)
	}
	if err != nil && ctx.Err() == nil {
		reason := explainIndexError(err)
		ix.rep.Failed = append(ix.rep.Failed, failedSource{Source: source, Reason: reason})
		ix.prog.fail(source, reason)
	}
	// The crawl used up fewer pages than --max-pages: settle the total.
	ix.prog.setTotal(ix.prog.finished)
}

func (ix *indexer) dataDirForCache() string {
	if ls, ok := ix.b.store.(*localStore); ok {
		return ls.dir
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

// explainIndexError turns an indexing error into a reason with a hint.
func explainIndexError(err error) string {
	msg := err.Error()
	// Drop the "index source ...: fetch: extract pdf PATH: " prefix before a
	// known cause: the source is printed beside the reason anyway.
	for _, sentinel := range []error{askyourdocs.ErrPDFEncrypted, askyourdocs.ErrPDFNoText, askyourdocs.ErrPDFMalformed,
		askyourdocs.ErrInvalidDocx, askyourdocs.ErrNoDocuments, askyourdocs.ErrPrivateTarget} {
		if errors.Is(err, sentinel) {
			if i := strings.Index(msg, sentinel.Error()); i > 0 {
				msg = msg[i:]
			}
			break
		}
	}
	switch {
	case errors.Is(err, askyourdocs.ErrPrivateTarget):
		return "refused by the SSRF guard (" + msg + "); pass --allow-private to index local or intranet sites you trust"
	case errors.Is(err, askyourdocs.ErrPDFEncrypted):
		return "encrypted PDF, needs a password (" + msg + ")"
	case errors.Is(err, askyourdocs.ErrPDFNoText):
		return "PDF without a text layer, e.g. a scan: run OCR first (" + msg + ")"
	case errors.Is(err, askyourdocs.ErrPDFMalformed):
		return "unreadable PDF (" + msg + ")"
	case errors.Is(err, askyourdocs.ErrInvalidDocx):
		return "unreadable .docx (" + msg + ")"
	case errors.Is(err, askyourdocs.ErrNoDocuments):
		return "no text found (" + msg + ")"
	}
	return msg
}

// collectFiles returns the jobs for a file or a directory (recursively);
// unsupported files are counted by extension in skipped. Hidden
// directories (.git, .askyourdocs) are not entered.
func collectFiles(arg string, skipped map[string]int) ([]indexJob, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such file or directory")
		}
		return nil, err
	}
	if !info.IsDir() {
		kind := fileKind(abs)
		if kind == "" && filepath.Ext(abs) == "" {
			kind = "txt" // a file without extension, given explicitly: plain text
		}
		if kind == "" {
			return nil, fmt.Errorf("unsupported file type %q (supported: %s)", filepath.Ext(abs), supportedExtList)
		}
		return []indexJob{{display: arg, src: newFileSource(abs, abs, kind)}}, nil
	}
	var jobs []indexJob
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped["unreadable"]++
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != abs && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		kind := fileKind(p)
		if kind == "" {
			ext := strings.ToLower(filepath.Ext(p))
			if ext == "" {
				ext = "(no extension)"
			}
			skipped[ext]++
			return nil
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			rel = p
		}
		jobs = append(jobs, indexJob{display: filepath.Join(arg, rel), src: newFileSource(p, abs, kind)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// printIndexSummary writes the human-readable summary of an index run.
func (a *cliApp) printIndexSummary(rep *indexReport) {
	w := a.stdout
	fmt.Fprintf(w, "Indexed %d %s: %d chunks (%d embedded, %d removed, %d %s unchanged) in %.1fs\n",
		rep.Sources, plural(rep.Sources, "source", "sources"), rep.Chunks, rep.Embedded, rep.Deleted,
		rep.Unchanged, plural(rep.Unchanged, "source", "sources"), rep.Seconds)
	fmt.Fprintf(w, "Store: %s (embedder %s)\n", rep.Store, rep.Embedder)
	if n := sumCounts(rep.Skipped); n > 0 {
		exts := make([]string, 0, len(rep.Skipped))
		for ext := range rep.Skipped {
			exts = append(exts, ext)
		}
		sort.Strings(exts)
		parts := make([]string, len(exts))
		for i, ext := range exts {
			parts[i] = fmt.Sprintf("%s %d", ext, rep.Skipped[ext])
		}
		fmt.Fprintf(w, "Skipped %d unsupported %s: %s\n", n, plural(n, "file", "files"), strings.Join(parts, ", "))
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintf(w, "Failed %d:\n", len(rep.Failed))
		for _, f := range rep.Failed {
			fmt.Fprintf(w, "  %s: %s\n", f.Source, f.Reason)
		}
	}
	if rep.Interrupted != "" {
		fmt.Fprintf(w, "Interrupted while indexing %s: rolled back; everything before it is kept.\n", rep.Interrupted)
	}
}

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
