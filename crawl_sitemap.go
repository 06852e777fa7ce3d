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
	"time"
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
	// lastmod holds the <lastmod> of pages[i] (zero when absent or not a
	// W3C date), as the end of its precision: "2026-01-02" is the end of
	// that day, so a page fetched on that day is not taken as newer.
	lastmod map[int]time.Time
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
	var loc []byte      // the text of the open <loc> or <lastmod>
	const maxLoc = 4096 // longer is no URL a crawl would fetch
	page, mod := -1, "" // the open <url>'s page index and lastmod
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
			if stack[len(stack)-1] == "url" {
				page, mod = -1, ""
			}
		case xml.CharData:
			if n := len(stack); n > 0 && (stack[n-1] == "loc" || stack[n-1] == "lastmod") && len(loc)+len(t) <= maxLoc {
				loc = append(loc, t...)
			}
		case xml.EndElement:
			if n := len(stack); n >= 2 && stack[n-2] == "url" && stack[n-1] == "lastmod" {
				mod = strings.TrimSpace(string(loc))
			}
			if n := len(stack); n >= 1 && stack[n-1] == "url" && page >= 0 {
				if at, ok := parseSitemapLastmod(mod); ok {
					if out.lastmod == nil {
						out.lastmod = map[int]time.Time{}
					}
					out.lastmod[page] = at
				}
			}
			// A <loc> counts once it is closed: a file cut inside one
			// gives no half URL.
			if n := len(stack); n >= 2 && stack[n-1] == "loc" && len(out.pages)+len(out.sitemaps) < crawlMaxSitemapURLs {
				if u := strings.TrimSpace(string(loc)); u != "" {
					if stack[n-2] == "sitemap" {
						out.sitemaps = append(out.sitemaps, u)
					} else {
						if stack[n-2] == "url" {
							page = len(out.pages)
						}
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

// parseSitemapLastmod reads a sitemap <lastmod> (a W3C datetime: a year, a
// month, a day, or a time with a zone) as the last instant it can mean.
func parseSitemapLastmod(v string) (time.Time, bool) {
	for _, f := range []struct {
		layout string
		unit   func(time.Time) time.Time
	}{
		{time.RFC3339Nano, func(t time.Time) time.Time { return t }},
		{"2006-01-02T15:04Z07:00", func(t time.Time) time.Time { return t.Add(time.Minute - time.Nanosecond) }},
		{"2006-01-02", func(t time.Time) time.Time { return t.AddDate(0, 0, 1).Add(-time.Nanosecond) }},
		{"2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, 0).Add(-time.Nanosecond) }},
		{"2006", func(t time.Time) time.Time { return t.AddDate(1, 0, 0).Add(-time.Nanosecond) }},
	} {
		if t, err := time.Parse(f.layout, v); err == nil {
			return f.unit(t), true
		}
	}
	return time.Time{}, false
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
		for i, p := range sm.pages {
			pu, err := url.Parse(p)
			if err != nil || c.full() {
				continue
			}
			n, key := crawlNormalize(pu)
			if at, ok := sm.lastmod[i]; ok {
				c.lastmod[key] = at
			}
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
