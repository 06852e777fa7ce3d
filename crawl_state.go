package engine

import (
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// CrawlPage is what a crawl learnt about one page, for the next crawl of
// the site to revalidate it instead of fetching it whole: an app keeps
// CrawlResult.Pages (as JSON, say) and passes them back as
// CrawlInput.Previous. The next crawl asks for each known page with
// If-None-Match and If-Modified-Since; a page that answers 304 Not
// Modified, or that the site's sitemap gives a <lastmod> older than
// Fetched, is neither extracted nor passed to indexPage again, and the
// links recorded here are followed as if the page had been read.
type CrawlPage struct {
	// URL is the page's URL as the crawl requested it (normalised).
	URL string `json:"url"`
	// Final is the URL after redirects, when it differs; indexPage got
	// this one.
	Final string `json:"final,omitempty"`
	// ETag and LastModified are the server's validators (empty when it
	// sent none: such a page is fetched whole again).
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	// Fetched is when the server last sent or confirmed the page.
	Fetched time.Time `json:"fetched"`
	// NotModified says the page was not read again in the crawl that
	// returned it: it answered 304 or its sitemap <lastmod> is older than
	// Fetched. Its text is what the app indexed before.
	NotModified bool `json:"notModified,omitempty"`
	// Links are the in-scope links the page had (none under nofollow);
	// Canonical and Refresh its rel=canonical and <meta refresh> targets;
	// NoIndex its <meta name=robots> noindex.
	Links     []string `json:"links,omitempty"`
	Canonical string   `json:"canonical,omitempty"`
	Refresh   string   `json:"refresh,omitempty"`
	NoIndex   bool     `json:"noindex,omitempty"`
	// Paragraphs are fingerprints of the page's paragraphs before
	// boilerplate removal, so that a crawl that reads only the changed
	// pages tells boilerplate from content as a full crawl does.
	Paragraphs []uint64 `json:"paragraphs,omitempty"`
}

// crawlMaxStateLinks caps the links a CrawlPage records.
const crawlMaxStateLinks = 5000

// crawlFingerprint is the fingerprint of a paragraph for boilerplate
// counting (64-bit FNV-1a of its boilerplate key).
func crawlFingerprint(p Paragraph) uint64 {
	h := fnv.New64a()
	h.Write([]byte(crawlBoilerplateKey(p)))
	return h.Sum64()
}

// crawlFingerprints returns the fingerprints of paras.
func crawlFingerprints(paras []Paragraph) []uint64 {
	out := make([]uint64, len(paras))
	for i, p := range paras {
		out[i] = crawlFingerprint(p)
	}
	return out
}

// loadPrevious indexes cfg.Previous by the normalised URL each page was
// requested under.
func (c *crawlRun) loadPrevious(prev []CrawlPage) {
	c.prev = make(map[string]*CrawlPage, len(prev))
	c.lastmod = make(map[string]time.Time)
	for i := range prev {
		u, err := url.Parse(prev[i].URL)
		if err != nil || u.Host == "" {
			continue
		}
		_, key := crawlNormalize(u)
		c.prev[key] = &prev[i]
	}
}

// unchanged returns a 304 page for t without a request when the sitemap's
// <lastmod> for it is older than the last time it was fetched; nil
// otherwise.
func (c *crawlRun) unchanged(t crawlTask) *fetchedPage {
	prev := c.prev[t.key]
	at, ok := c.lastmod[t.key]
	if prev == nil || !ok || prev.Fetched.IsZero() || !prev.Fetched.After(at) {
		return nil
	}
	u := t.url
	if prev.Final != "" {
		if f, err := url.Parse(prev.Final); err == nil {
			u = f
		}
	}
	return &fetchedPage{URL: u, StatusCode: http.StatusNotModified, notFetched: true}
}

// conditional adds t's validators from the previous crawl to opts.
func (c *crawlRun) conditional(t crawlTask, opts *fetchOptions) {
	if prev := c.prev[t.key]; prev != nil {
		opts.ifNoneMatch, opts.ifModifiedSince = prev.ETag, prev.LastModified
	}
}

// replay handles a page that answered 304 Not Modified (or was skipped by
// its sitemap <lastmod>): the links, canonical and refresh targets the
// previous crawl recorded are followed as process follows a fetched
// page's, and its paragraph fingerprints count for boilerplate.
func (c *crawlRun) replay(t crawlTask, key string, prev *CrawlPage, fetched bool, msg string) {
	st := *prev
	st.NotModified = true
	if fetched {
		st.Fetched = time.Now().UTC()
	}
	if t.seed {
		c.seedsGood++
	}
	c.res.PagesUnchanged++
	c.progress(msg + ": not modified")
	parse := func(s string) *url.URL {
		if s == "" {
			return nil
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil
		}
		return u
	}
	var links []*url.URL
	for _, l := range prev.Links {
		if u := parse(l); u != nil {
			links = append(links, u)
		}
	}
	c.res.Pages = append(c.res.Pages, st)
	if c.follow(t, key, parse(prev.Refresh), parse(prev.Canonical), links, false, prev.NoIndex, msg) {
		c.known = append(c.known, prev.Paragraphs)
	}
}

// revisitKnown queues, once, the pages of the previous crawl this crawl
// has not reached (in scope, robots.txt permitting, as budget allows),
// at the depth limit: a page no longer linked is revalidated, so one that
// is gone (404, 410) leaves the index. It reports whether it queued any.
func (c *crawlRun) revisitKnown() bool {
	if c.revisited || len(c.prev) == 0 {
		return false
	}
	c.revisited = true
	keys := make([]string, 0, len(c.prev))
	for k := range c.prev {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	before := len(c.frontier)
	for _, k := range keys {
		u, err := url.Parse(c.prev[k].URL)
		if err != nil {
			continue
		}
		n, key := crawlNormalize(u)
		if c.seen[key] || !c.inScope(n) || crawlSkipExt(n) {
			continue
		}
		c.enqueue(n, key, c.cfg.MaxDepth, false)
	}
	return len(c.frontier) > before
}

// crawlStateLinks returns the links of a page to record: the in-scope
// ones, at most crawlMaxStateLinks.
func (c *crawlRun) crawlStateLinks(links []*url.URL) []string {
	var out []string
	for _, l := range links {
		if len(out) == crawlMaxStateLinks {
			break
		}
		if n, _ := crawlNormalize(l); c.inScope(n) && !crawlSkipExt(n) {
			out = append(out, n.String())
		}
	}
	return out
}
