package engine

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// crawlMaxSitemapFiles caps the sitemap files a crawl reads: those robots.txt
// names (or /sitemap.xml) and the ones a sitemap index lists.
const crawlMaxSitemapFiles = 10

// crawlMaxSitemapURLs caps the <loc> entries read from one sitemap file
// (the sitemaps.org limit is 50,000).
const crawlMaxSitemapURLs = 50_000

// crawlSitemap is what one sitemap file lists: page URLs (a <urlset>) or
// further sitemap files (a <sitemapindex>).
type crawlSitemap struct {
	pages, sitemaps []string
}

// parseCrawlSitemap reads a sitemap file (sitemaps.org XML, a <urlset> or
// a <sitemapindex>, namespaces ignored) streaming, keeping at most
// crawlMaxSitemapURLs <loc> values; text of other elements is skipped. A
// plain-text sitemap (one URL a line) is read too. It never fails on
// what it cannot read: it returns what it found and the XML error.
func parseCrawlSitemap(body []byte) (crawlSitemap, error) {
	var out crawlSitemap
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] != '<' {
		for line := range strings.SplitSeq(string(trimmed), "\n") {
			if l := strings.TrimSpace(line); l != "" && len(out.pages) < crawlMaxSitemapURLs {
				out.pages = append(out.pages, l)
			}
		}
		return out, nil
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	var stack []string  // local names of the open elements
	var loc []byte      // the text of the open <loc>
	const maxLoc = 4096 // longer is no URL a crawl would fetch
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > 8 {
				return out, errors.New("sitemap: elements nested too deep")
			}
			stack = append(stack, strings.ToLower(t.Name.Local))
			loc = loc[:0]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] == "loc" && len(loc)+len(t) <= maxLoc {
				loc = append(loc, t...)
			}
		case xml.EndElement:
			// A <loc> counts once it is closed: a file cut inside one
			// gives no half URL.
			if n := len(stack); n >= 2 && stack[n-1] == "loc" && len(out.pages)+len(out.sitemaps) < crawlMaxSitemapURLs {
				if u := strings.TrimSpace(string(loc)); u != "" {
					if stack[n-2] == "sitemap" {
						out.sitemaps = append(out.sitemaps, u)
					} else {
						out.pages = append(out.pages, u)
					}
				}
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// loadSitemaps reads the site's sitemaps (those robots.txt names, else
// /sitemap.xml; a sitemap index's files one level down; at most
// crawlMaxSitemapFiles, each through the crawl's fetcher on the crawl's
// host) and queues the pages they list that are in scope, after the
// seeds, at depth 1: pages no link reaches are crawled too. A missing or
// unreadable sitemap is no error: the crawl follows links as before.
func (c *crawlRun) loadSitemaps(ctx context.Context) {
	if c.robots == nil || c.robots.disallowAll {
		return
	}
	todo := c.robots.sitemaps
	if len(todo) == 0 {
		todo = []string{c.scheme + "://" + c.host + "/sitemap.xml"}
	}
	queued, read := 0, 0
	seen := map[string]bool{}
	for len(todo) > 0 && read < crawlMaxSitemapFiles && !c.full() {
		raw := todo[0]
		todo = todo[1:]
		u, err := url.Parse(raw)
		if err != nil || seen[raw] {
			continue
		}
		seen[raw] = true
		if n, _ := crawlNormalize(u); n.Host != c.host {
			continue // another host's sitemap: not ours to read
		}
		read++
		sm, err := c.fetchSitemap(ctx, raw)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		todo = append(todo, sm.sitemaps...)
		for _, p := range sm.pages {
			pu, err := url.Parse(p)
			if err != nil || c.full() {
				continue
			}
			n, key := crawlNormalize(pu)
			if n.Host != c.host || c.seen[key] || !c.inScope(n) || crawlSkipExt(n) {
				continue
			}
			c.enqueue(n, key, 1, false)
			queued++
		}
	}
	if queued > 0 {
		c.progress(fmt.Sprintf("sitemap: %d pages queued", queued))
	}
}

// fetchSitemap fetches and parses one sitemap file.
func (c *crawlRun) fetchSitemap(ctx context.Context, raw string) (crawlSitemap, error) {
	if err := c.gate.wait(ctx, c.host); err != nil {
		return crawlSitemap{}, err
	}
	fctx, cancel := context.WithTimeout(ctx, c.opts.pageTimeout)
	defer cancel()
	page, err := c.opts.fetch(fctx, raw, fetchOptions{allowRedirect: c.sameHostRedirect})
	if err != nil {
		return crawlSitemap{}, err
	}
	if page.StatusCode != 200 {
		return crawlSitemap{}, &HTTPStatusError{StatusCode: page.StatusCode, URL: raw}
	}
	sm, err := parseCrawlSitemap(page.Body)
	if err != nil {
		// What was read before the error is used; a broken sitemap is
		// no failure of the crawl, which follows links anyway.
		c.progress(fmt.Sprintf("%s: %v (the URLs before it are used)", raw, err))
	}
	return sm, nil
}
