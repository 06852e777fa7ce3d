package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// CrawlInput configures RunCrawl. Zero values take the defaults.
type CrawlInput struct {
	// SeedURLs are the absolute http(s) URLs the crawl starts from. All
	// must be on one host (the first valid seed's); each seed also sets a
	// path prefix the crawl stays under (see RunCrawl).
	SeedURLs []string `json:"seedUrls"`
	// MaxPages caps the pages fetched (robots.txt not counted); 0 means
	// 100.
	MaxPages int `json:"maxPages,omitempty"`
	// MaxDepth caps the link distance from a seed (a seed has depth 0); 0
	// means 5, a negative value fetches the seeds only.
	MaxDepth int `json:"maxDepth,omitempty"`
	// DelayMs is the minimum time between the starts of two requests to
	// the host, in milliseconds, whatever the number of fetch workers; 0
	// (or negative) means no delay.
	DelayMs int `json:"delayMs,omitempty"`
	// Fetcher fetches the crawl's pages and robots.txt with its own limits
	// and private-target policy; nil means the default Fetcher (the one
	// SetMaxPageBytes and SetAllowPrivateTargets configure). Not JSON.
	Fetcher *Fetcher `json:"-"`
	// Previous are the Pages of an earlier crawl of the site: each is
	// fetched conditionally, and one that has not changed is not indexed
	// again (see CrawlPage). Pages it lists that no link reaches any more
	// are revalidated too, so that one now gone (404, 410) is reported.
	// Not JSON (an app keeps them where it keeps its index).
	Previous []CrawlPage `json:"-"`
}

// CrawlResult reports what RunCrawl did.
type CrawlResult struct {
	// PagesVisited counts the pages fetched, including those that failed.
	PagesVisited int `json:"pagesVisited"`
	// PagesSaved counts the pages written to the Markdown cache
	// (SAVE_CRAWL_DATA=1).
	PagesSaved int `json:"pagesSaved"`
	// PagesIndexed counts the pages for which indexPage returned no error.
	PagesIndexed int `json:"pagesIndexed"`
	// PagesUnchanged counts the pages of CrawlInput.Previous that had not
	// changed (a 304 answer, or an older sitemap <lastmod>): not extracted
	// and not passed to indexPage.
	PagesUnchanged int `json:"pagesUnchanged,omitempty"`
	// Errors holds one human-readable line per problem ("URL: reason"):
	// refused seeds, failed pages, refused redirects, failed indexPage
	// calls. They do not stop the crawl.
	Errors []string `json:"errors,omitempty"`
	// Pages describe the pages read or revalidated whose outcome is
	// settled: indexed, unchanged, or not to be indexed (noindex, a
	// canonical or refresh stub, only boilerplate). A page whose indexPage
	// failed, or that the crawl did not reach before ctx ended, is not in
	// it, so the next crawl reads it whole. Pass them as the next crawl's
	// CrawlInput.Previous.
	Pages []CrawlPage `json:"-"`
}

// ReindexResult reports what ReindexCrawlData did.
type ReindexResult struct {
	// FilesProcessed counts the cache files tried, usable or not.
	FilesProcessed int `json:"filesProcessed"`
	// PagesIndexed counts the pages for which indexPage returned no error.
	PagesIndexed int `json:"pagesIndexed"`
	// Errors holds one human-readable line per skipped file or failed
	// indexPage call.
	Errors []string `json:"errors,omitempty"`
}

// IndexPageFunc indexes one crawled page: pageURL is the page's final URL
// (after redirects, without fragment) and paras its paragraphs with
// boilerplate removed, never empty. It returns the number of chunks it
// indexed, which only goes into progress messages.
//
// A typical implementation wraps the page in an IngestSource and calls
// IndexSource, adding whatever metadata the app wants; an error is recorded
// in the result's Errors and the crawl goes on with the next page. It is
// called from one goroutine at a time, in crawl order.
type IndexPageFunc func(ctx context.Context, pageURL string, paras []Paragraph) (int, error)

// Errors of RunCrawl and ReindexCrawlData; callers test them with errors.Is.
var (
	// ErrInvalidCrawlInput is wrapped by the errors RunCrawl and
	// ReindexCrawlData return for unusable arguments: no seed URL, no valid
	// seed, a nil indexPage, or SAVE_CRAWL_DATA=1 without an output directory.
	ErrInvalidCrawlInput = errors.New("invalid crawl input")

	// ErrCrawlCacheFormat is wrapped by the errors ReindexCrawlData reports for
	// cache files it cannot read as crawl Markdown (no front matter, no url,
	// broken markers). Such files are skipped; the replay goes on.
	ErrCrawlCacheFormat = errors.New("not a crawl cache file")
)

const (
	crawlDefaultMaxPages = 100
	crawlDefaultMaxDepth = 5
	// crawlWorkers is the number of concurrent fetches.
	crawlWorkers = 4
	// crawlPageTimeout bounds one page fetch.
	crawlPageTimeout = 60 * time.Second
	// crawlSaveEnv turns the Markdown cache on.
	crawlSaveEnv = "SAVE_CRAWL_DATA"
)

// crawlOptions are the replaceable parts of a crawl (tests inject them).
type crawlOptions struct {
	workers     int
	pageTimeout time.Duration
	fetch       func(ctx context.Context, rawURL string, opts fetchOptions) (*fetchedPage, error)
	getenv      func(string) string
}

func defaultCrawlOptions() crawlOptions {
	return crawlOptions{workers: crawlWorkers, pageTimeout: crawlPageTimeout, fetch: fetchPage, getenv: os.Getenv}
}

// RunCrawl crawls a site breadth-first from cfg.SeedURLs (their host, under
// their path prefix, up to cfg.MaxDepth and cfg.MaxPages) and calls
// indexPage for every page found, with boilerplate removed, in crawl order
// once all pages are fetched. It honours robots.txt and <meta name=robots>,
// fetches at most four pages at once, cfg.DelayMs apart, each through
// cfg.Fetcher (nil: the default Fetcher, whose limits and policy
// SetAllowPrivateTargets and SetMaxPageBytes set) and bounded by one
// minute. With SAVE_CRAWL_DATA=1 (or true) each cleaned page is also
// written to outputDir as Markdown (see ReindexCrawlData). progress, if non-nil, receives human-readable messages.
// Scope, normalisation, order and boilerplate rules: docs/api-reference.md.
//
// RunCrawl blocks until the crawl and indexing end. Single-page failures go
// into the result's Errors (a non-2xx page as an *HTTPStatusError) and the
// crawl goes on. It returns an error wrapping ErrInvalidCrawlInput for
// unusable input, one wrapping the seeds' fetch error when no seed could be
// crawled (for example ErrPrivateTarget), and ctx's error when ctx ends;
// the result then holds what was done so far.
func RunCrawl(ctx context.Context, cfg CrawlInput, outputDir string, indexPage IndexPageFunc, progress func(string)) (CrawlResult, error) {
	opts := defaultCrawlOptions()
	if cfg.Fetcher != nil && cfg.Fetcher.w != nil {
		opts.fetch = cfg.Fetcher.w.fetch
	}
	return runCrawl(ctx, cfg, outputDir, indexPage, progress, opts)
}

// crawlPage is a crawled page waiting for boilerplate removal and indexing.
type crawlPage struct {
	url   string
	paras []Paragraph
	state CrawlPage // goes to CrawlResult.Pages once the page is indexed
}

// crawlRun is the state of one RunCrawl.
type crawlRun struct {
	cfg      CrawlInput
	opts     crawlOptions
	progress func(string)

	host     string   // the crawl's host (normalised, with non-default port)
	scheme   string   // scheme of the first seed, for robots.txt
	prefixes []string // path prefixes in scope
	robots   *crawlRobots
	gate     *crawlPoliteness

	seen map[string]bool // keys queued or fetched
	// dispatched counts the tasks taken from the frontier; with the
	// frontier's length it bounds what can still be fetched (see full).
	dispatched int
	done       map[string]bool // keys of final URLs processed
	frontier   []crawlTask
	pages      []crawlPage
	res        CrawlResult

	seedErr   error // first seed failure
	seedsGood int   // seeds that gave a page
	robotsOff int   // URLs skipped because of robots.txt

	prev      map[string]*CrawlPage // CrawlInput.Previous by requested URL key
	lastmod   map[string]time.Time  // sitemap <lastmod> by URL key
	known     [][]uint64            // paragraph fingerprints of unchanged indexable pages
	revisited bool                  // revisitKnown has run
}

func runCrawl(ctx context.Context, cfg CrawlInput, outputDir string, indexPage IndexPageFunc, progress func(string), opts crawlOptions) (CrawlResult, error) {
	if progress == nil {
		progress = func(string) {}
	}
	var res CrawlResult
	if indexPage == nil {
		return res, fmt.Errorf("crawl: %w: indexPage is nil", ErrInvalidCrawlInput)
	}
	if len(cfg.SeedURLs) == 0 {
		return res, fmt.Errorf("crawl: %w: no seed URLs", ErrInvalidCrawlInput)
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = crawlDefaultMaxPages
	}
	switch {
	case cfg.MaxDepth == 0:
		cfg.MaxDepth = crawlDefaultMaxDepth
	case cfg.MaxDepth < 0:
		cfg.MaxDepth = 0
	}
	cfg.DelayMs = max(cfg.DelayMs, 0)
	if opts.workers <= 0 {
		opts.workers = 1
	}

	var cache *os.Root
	if save, _ := strconv.ParseBool(strings.TrimSpace(opts.getenv(crawlSaveEnv))); save {
		if outputDir == "" {
			return res, fmt.Errorf("crawl: %w: %s is set but outputDir is empty", ErrInvalidCrawlInput, crawlSaveEnv)
		}
		if err := os.MkdirAll(outputDir, 0o755); err != nil {
			return res, fmt.Errorf("crawl: create output directory: %w", err)
		}
		root, err := os.OpenRoot(outputDir)
		if err != nil {
			return res, fmt.Errorf("crawl: open output directory: %w", err)
		}
		defer root.Close()
		cache = root
	}

	c := &crawlRun{
		cfg:      cfg,
		opts:     opts,
		progress: progress,
		gate:     &crawlPoliteness{delay: time.Duration(cfg.DelayMs) * time.Millisecond, next: make(map[string]time.Time)},
		seen:     make(map[string]bool),
		done:     make(map[string]bool),
	}
	c.loadPrevious(cfg.Previous)
	if err := c.addSeeds(); err != nil {
		return c.res, err
	}
	if err := c.loadRobots(ctx); err != nil {
		return c.res, err
	}
	// Seeds robots.txt disallows are reported, not fetched.
	kept := c.frontier[:0]
	for _, t := range c.frontier {
		if c.robots.disallowAll {
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: seed not crawled: robots.txt unavailable", t.url))
			continue
		}
		if !c.robots.allowed(crawlPathQuery(t.url)) {
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: seed disallowed by robots.txt", t.url))
			continue
		}
		kept = append(kept, t)
	}
	c.frontier = kept
	if cfg.MaxDepth > 0 { // a seeds-only crawl reads no sitemap
		c.loadSitemaps(ctx)
	}

	if err := c.fetchAll(ctx); err != nil {
		return c.res, err
	}
	if c.robotsOff > 0 {
		progress(fmt.Sprintf("skipped %d URLs disallowed by robots.txt", c.robotsOff))
	}
	if c.seedsGood == 0 && c.seedErr != nil {
		return c.res, fmt.Errorf("crawl: no seed could be crawled: %w", c.seedErr)
	}
	if err := c.indexAll(ctx, cache, indexPage); err != nil {
		return c.res, err
	}
	progress(fmt.Sprintf("crawl done: %d pages visited, %d saved, %d indexed, %d errors",
		c.res.PagesVisited, c.res.PagesSaved, c.res.PagesIndexed, len(c.res.Errors)))
	slog.Info("crawl finished", "host", c.host, "visited", c.res.PagesVisited, "indexed", c.res.PagesIndexed, "errors", len(c.res.Errors))
	return c.res, nil
}

// addSeeds validates the seeds and queues them.
func (c *crawlRun) addSeeds() error {
	for _, raw := range c.cfg.SeedURLs {
		u, err := url.Parse(strings.TrimSpace(raw))
		switch {
		case err != nil:
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("seed %q: invalid URL: %v", raw, err))
			continue
		case u.Scheme != "http" && u.Scheme != "https" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("seed %q: only http and https URLs can be crawled", raw))
			continue
		case u.Host == "" || u.Hostname() == "":
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("seed %q: URL has no host", raw))
			continue
		}
		n, key := crawlNormalize(u)
		if c.host == "" {
			c.host, c.scheme = n.Host, n.Scheme
		} else if n.Host != c.host {
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("seed %q: host %s differs from the crawl's host %s", raw, n.Host, c.host))
			continue
		}
		c.addPrefix(n)
		if !c.seen[key] {
			c.seen[key] = true
			c.frontier = append(c.frontier, crawlTask{url: n, key: key, seed: true})
		}
	}
	if len(c.frontier) == 0 {
		return fmt.Errorf("crawl: %w: no valid seed URL (%s)", ErrInvalidCrawlInput, strings.Join(c.res.Errors, "; "))
	}
	return nil
}

// addPrefix adds the path prefix u's directory defines to the scope.
func (c *crawlRun) addPrefix(u *url.URL) {
	p := u.EscapedPath()
	switch {
	case p == "" || p == "/":
		p = "/"
	case strings.HasSuffix(p, "/"):
	case strings.Contains(path.Base(p), "."):
		p = path.Dir(p)
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
	default:
		p += "/"
	}
	for _, q := range c.prefixes {
		if q == p {
			return
		}
	}
	c.prefixes = append(c.prefixes, p)
}

// inScope reports whether the normalised URL u may be crawled.
func (c *crawlRun) inScope(u *url.URL) bool {
	if u.Host != c.host || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	for _, pre := range c.prefixes {
		if strings.HasPrefix(p, pre) || p == strings.TrimSuffix(pre, "/") {
			return true
		}
	}
	return false
}

// loadRobots fetches and parses robots.txt for the crawl's host.
func (c *crawlRun) loadRobots(ctx context.Context) error {
	robotsURL := c.scheme + "://" + c.host + "/robots.txt"
	if err := c.gate.wait(ctx, c.host); err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	fctx, cancel := context.WithTimeout(ctx, c.opts.pageTimeout)
	defer cancel()
	page, err := c.opts.fetch(fctx, robotsURL, fetchOptions{allowRedirect: c.sameHostRedirect})
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("crawl: %w", ctx.Err())
	case err != nil:
		// The host could not be reached at all: the seeds will fail the
		// same way and report why; RFC 9309 treats this as "unreachable",
		// which means complete disallow.
		c.robots = &crawlRobots{disallowAll: true}
		c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: %v (crawling nothing on this host)", robotsURL, err))
		if c.seedErr == nil {
			c.seedErr = err
		}
	case page.StatusCode >= 500:
		c.robots = &crawlRobots{disallowAll: true}
		c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: HTTP %d: server error, so nothing on this host is crawled (RFC 9309)", robotsURL, page.StatusCode))
	case page.StatusCode >= 200 && page.StatusCode < 300:
		body, err := page.text()
		if err != nil {
			body = string(page.Body)
		}
		c.robots = parseCrawlRobots(body, crawlRobotsToken)
	default: // 3xx left over, 4xx: no restrictions
		c.robots = &crawlRobots{}
	}
	return nil
}

// sameHostRedirect allows a redirect of robots.txt or a sitemap only on
// the crawl's host.
func (c *crawlRun) sameHostRedirect(_, to *url.URL) error {
	if n, _ := crawlNormalize(to); n.Host != c.host {
		return fmt.Errorf("%w: %s", errCrawlOffHost, to.Host)
	}
	return nil
}

// errCrawlOffHost and errCrawlOffScope are the reasons a redirect is
// refused.
var (
	errCrawlOffHost  = errors.New("redirect to another host refused")
	errCrawlOffScope = errors.New("redirect out of the crawl scope refused")
	errCrawlRobots   = errors.New("redirect to a URL robots.txt disallows refused")
)

// process handles one fetch result, in BFS order: records errors, queues
// links, converts the page to paragraphs.
func (c *crawlRun) process(ctx context.Context, r crawlFetched) {
	c.res.PagesVisited++
	t := r.task
	n := fmt.Sprintf("page %d/%d: %s", c.res.PagesVisited, c.cfg.MaxPages, t.url)
	fail := func(err error) {
		if ctx.Err() != nil {
			return // cancelled: not the page's fault
		}
		c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: %v", t.url, err))
		c.progress(fmt.Sprintf("%s: %v", n, err))
		if t.seed && c.seedErr == nil {
			c.seedErr = err
		}
	}
	if r.err != nil {
		fail(r.err)
		return
	}
	page := r.page
	final, key := crawlNormalize(page.URL)
	if final.Host != c.host { // the redirect check makes this unreachable
		fail(fmt.Errorf("%w: %s", errCrawlOffHost, final.Host))
		return
	}
	if t.seed {
		c.addPrefix(final) // a seed redirected within the host widens the scope
	}
	if c.done[key] {
		c.progress(fmt.Sprintf("%s: same page as an earlier URL, skipped", n))
		return
	}
	c.done[key] = true
	c.seen[key] = true
	if prev := c.prev[t.key]; prev != nil && page.StatusCode == http.StatusNotModified {
		c.replay(t, key, prev, !page.notFetched, n)
		return
	}
	if page.StatusCode < 200 || page.StatusCode > 299 {
		fail(&HTTPStatusError{StatusCode: page.StatusCode, URL: crawlPageURL(page.URL)})
		return
	}
	if !crawlIsHTML(page) {
		fail(fmt.Errorf("not an HTML page (Content-Type %q)", page.ContentType))
		return
	}
	prep := r.prep
	if prep.textErr != nil {
		fail(prep.textErr)
		return
	}
	if t.seed {
		c.seedsGood++
	}
	c.progress(n)

	links := prep.links
	st := CrawlPage{URL: t.url.String(), ETag: page.ETag, LastModified: page.LastModified,
		Fetched: time.Now().UTC(), NoIndex: links.noindex}
	if key != t.key {
		st.Final = crawlPageURL(page.URL)
	}
	if prep.refresh != nil {
		st.Refresh = prep.refresh.String()
	}
	if links.canonical != nil {
		st.Canonical = links.canonical.String()
	}
	if !links.nofollow {
		st.Links = c.crawlStateLinks(links.links)
	}
	if !c.follow(t, key, prep.refresh, links.canonical, links.links, links.nofollow, links.noindex, n) {
		c.res.Pages = append(c.res.Pages, st)
		return
	}
	if prep.parseErr != nil {
		fail(prep.parseErr)
		return
	}
	st.Paragraphs = crawlFingerprints(prep.paras)
	c.pages = append(c.pages, crawlPage{url: crawlPageURL(page.URL), paras: prep.paras, state: st})
}

// follow makes the decisions a page's links, <meta refresh> and
// rel=canonical call for, read now or recorded by an earlier crawl: the
// targets are queued, and it reports whether the page itself is to be
// indexed (not a refresh stub, not canonically another page, not
// noindex). msg names the page in progress messages.
func (c *crawlRun) follow(t crawlTask, key string, refresh, canonicalURL *url.URL, links []*url.URL, nofollow, noindex bool, msg string) bool {
	// A <meta refresh> stub: its target is the page.
	if refresh != nil {
		tn, tkey := crawlNormalize(refresh)
		if tkey != key {
			switch {
			case tn.Host != c.host:
				c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: meta refresh to another host (%s) refused", t.url, tn.Host))
			case t.seed || c.inScope(tn):
				c.enqueue(tn, tkey, t.depth, t.seed)
			}
			return false
		}
	}
	// rel=canonical naming another page in scope: that page is indexed
	// instead of this one. It is queued before this page's links, as the
	// same page at the same depth.
	var canonical *url.URL
	if canonicalURL != nil {
		cn, ckey := crawlNormalize(canonicalURL)
		if ckey != key && c.inScope(cn) {
			canonical = cn
			c.enqueue(cn, ckey, t.depth, false)
		}
	}
	if !nofollow && t.depth < c.cfg.MaxDepth {
		for _, l := range links {
			if c.full() {
				break
			}
			ln, lkey := crawlNormalize(l)
			if c.seen[lkey] || !c.inScope(ln) || crawlSkipExt(ln) {
				continue
			}
			c.enqueue(ln, lkey, t.depth+1, false)
		}
	}
	if canonical != nil {
		c.progress(fmt.Sprintf("%s: canonical URL is %s, indexed under that", msg, canonical))
		return false
	}
	if noindex {
		c.progress(fmt.Sprintf("%s: noindex, not indexed", msg))
		return false
	}
	return true
}

// full reports whether the frontier holds every page the crawl may still
// fetch: it is fetched in order and each fetch counts against MaxPages, so
// a URL queued now would never be fetched. Not queuing it keeps a site whose
// pages link to millions of others from filling memory with them.
func (c *crawlRun) full() bool {
	return c.dispatched+len(c.frontier) >= c.cfg.MaxPages
}

// enqueue adds a URL to the frontier unless it was seen, the frontier is
// full or robots.txt disallows it.
func (c *crawlRun) enqueue(u *url.URL, key string, depth int, seed bool) {
	if c.seen[key] || c.full() {
		return
	}
	c.seen[key] = true
	if !c.robots.allowed(crawlPathQuery(u)) {
		c.robotsOff++
		slog.Debug("crawl: disallowed by robots.txt", "url", u.String())
		return
	}
	c.frontier = append(c.frontier, crawlTask{url: u, key: key, depth: depth, seed: seed})
}

// indexAll removes boilerplate and indexes (and caches) every page.
func (c *crawlRun) indexAll(ctx context.Context, cache *os.Root, indexPage IndexPageFunc) error {
	cleaned := removeCrawlBoilerplate(c.pages, c.known)
	total := len(cleaned)
	for i, p := range c.pages {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		paras := cleaned[i]
		msg := fmt.Sprintf("indexing page %d/%d: %s", i+1, total, p.url)
		if len(paras) == 0 {
			c.progress(msg + ": no text besides boilerplate, skipped")
			c.res.Pages = append(c.res.Pages, p.state)
			continue
		}
		if cache != nil {
			if _, err := writeCrawlCachePage(cache, p.url, paras); err != nil {
				c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: %v", p.url, err))
			} else {
				c.res.PagesSaved++
			}
		}
		n, err := indexPage(ctx, p.url, paras)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("crawl: index %s: %w", p.url, err)
			}
			c.res.Errors = append(c.res.Errors, fmt.Sprintf("%s: index: %v", p.url, err))
			c.progress(fmt.Sprintf("%s: index failed: %v", msg, err))
			continue
		}
		c.res.PagesIndexed++
		c.res.Pages = append(c.res.Pages, p.state)
		c.progress(fmt.Sprintf("%s (%d chunks)", msg, n))
	}
	return nil
}
