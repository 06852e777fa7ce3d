package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRunCrawlSitemap: the sitemaps robots.txt names (a sitemap index and
// the file it lists) seed the crawl with pages no link reaches; pages out
// of scope or on another host are not fetched.
func TestRunCrawlSitemap(t *testing.T) {
	site := newCrawlTestSite(t)
	site.set("/robots.txt", crawlTestPage{contentType: "text/plain", body: "User-agent: *\nDisallow: /docs/private\n\nSitemap: " + site.url("/maps/index.xml") + "\n"})
	site.set("/maps/index.xml", crawlTestPage{contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>` + site.url("/maps/pages.xml") + `</loc><lastmod>2026-11-01</lastmod></sitemap>
</sitemapindex>`})
	site.set("/maps/pages.xml", crawlTestPage{contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>` + site.url("/docs/") + `</loc></url>
  <url><loc>` + site.url("/docs/hidden") + `</loc><lastmod>2026-11-02</lastmod></url>
  <url><loc>` + site.url("/docs/private/x") + `</loc></url>
  <url><loc>` + site.url("/blog/post") + `</loc></url>
  <url><loc>https://elsewhere.example/docs/y</loc></url>
</urlset>`})
	site.html("/docs/", `<h1>Docs</h1><p>The start page links nowhere.</p>`)
	site.html("/docs/hidden", `<h1>Hidden</h1><p>Only the sitemap lists this page about tide tables.</p>`)
	site.html("/docs/private/x", `<h1>Private</h1><p>robots.txt disallows this.</p>`)
	site.html("/blog/post", `<h1>Blog</h1><p>Out of the crawl's scope.</p>`)
	col := newCrawlCollector()
	res, err := runCrawl(t.Context(), CrawlInput{SeedURLs: []string{site.url("/docs/")}}, "", col.index, nil, testCrawlOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := site.requests()
	if !slices.Contains(got, "/docs/hidden") || slices.Contains(got, "/blog/post") || slices.Contains(got, "/docs/private/x") {
		t.Errorf("requests = %q: want /docs/hidden, not /blog/post or the disallowed page", got)
	}
	if res.PagesIndexed != 2 || len(res.Errors) != 0 {
		t.Errorf("result = %+v", res)
	}
}

// TestRunCrawlDefaultSitemap: without a Sitemap line, /sitemap.xml (a
// plain-text sitemap here) seeds the crawl.
func TestRunCrawlDefaultSitemap(t *testing.T) {
	site := newCrawlTestSite(t)
	site.set("/sitemap.xml", crawlTestPage{contentType: "text/plain", body: site.url("/a/orphan") + "\n"})
	site.html("/a/", `<h1>A</h1><p>Start.</p>`)
	site.html("/a/orphan", `<h1>Orphan</h1><p>No link reaches this page about harbour fees.</p>`)
	col := newCrawlCollector()
	if _, err := runCrawl(t.Context(), CrawlInput{SeedURLs: []string{site.url("/a/")}}, "", col.index, nil, testCrawlOptions()); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(site.requests(), "/a/orphan") {
		t.Errorf("requests = %q, want /a/orphan", site.requests())
	}
	// A seeds-only crawl (MaxDepth < 0) fetches the seeds only: no
	// sitemap, no page it lists.
	site2 := newCrawlTestSite(t)
	site2.set("/sitemap.xml", crawlTestPage{contentType: "text/plain", body: site2.url("/a/orphan") + "\n"})
	site2.html("/a/", `<h1>A</h1><p>Start.</p>`)
	site2.html("/a/orphan", `<h1>Orphan</h1><p>No link reaches this page about harbour fees.</p>`)
	if _, err := runCrawl(t.Context(), CrawlInput{SeedURLs: []string{site2.url("/a/")}, MaxDepth: -1}, "", newCrawlCollector().index, nil, testCrawlOptions()); err != nil {
		t.Fatal(err)
	}
	if got := site2.requests(); slices.Contains(got, "/a/orphan") || slices.Contains(got, "/sitemap.xml") {
		t.Errorf("seeds-only crawl requested %q", got)
	}
}

// TestParseCrawlSitemap: a urlset, a sitemap index, a plain-text sitemap,
// and a broken file whose URLs before the error are kept.
func TestParseCrawlSitemap(t *testing.T) {
	sm, err := parseCrawlSitemap([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> https://x.test/a </loc><lastmod>2026-01-01</lastmod></url><url><loc>https://x.test/b</loc></url></urlset>`))
	if err != nil || !slices.Equal(sm.pages, []string{"https://x.test/a", "https://x.test/b"}) || len(sm.sitemaps) != 0 {
		t.Errorf("urlset: %+v, %v", sm, err)
	}
	sm, err = parseCrawlSitemap([]byte(`<sitemapindex><sitemap><loc>https://x.test/s1.xml</loc></sitemap></sitemapindex>`))
	if err != nil || !slices.Equal(sm.sitemaps, []string{"https://x.test/s1.xml"}) || len(sm.pages) != 0 {
		t.Errorf("index: %+v, %v", sm, err)
	}
	sm, _ = parseCrawlSitemap([]byte("https://x.test/a\n\nhttps://x.test/b\n"))
	if !slices.Equal(sm.pages, []string{"https://x.test/a", "https://x.test/b"}) {
		t.Errorf("text: %+v", sm)
	}
	sm, err = parseCrawlSitemap([]byte(`<urlset><url><loc>https://x.test/a</loc></url><url><loc>https://x.test/b</lo`))
	if err == nil || !slices.Equal(sm.pages, []string{"https://x.test/a"}) {
		t.Errorf("broken: %+v, %v", sm, err)
	}
	var deep strings.Builder
	for range 20 {
		deep.WriteString("<a>")
	}
	if _, err := parseCrawlSitemap([]byte(deep.String())); err == nil {
		t.Error("20 nested elements: no error")
	}
}

// FuzzParseCrawlSitemap: any bytes give no panic, and never more URLs than
// the cap.
func FuzzParseCrawlSitemap(f *testing.F) {
	f.Add([]byte(`<urlset><url><loc>https://x.test/a</loc></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>https://x.test/s.xml</loc></sitemap></sitemapindex>`))
	f.Add([]byte("https://x.test/a\nhttps://x.test/b"))
	f.Add([]byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sm, _ := parseCrawlSitemap(body)
		if n := len(sm.pages) + len(sm.sitemaps); n > crawlMaxSitemapURLs {
			t.Fatalf("%d URLs, cap %d", n, crawlMaxSitemapURLs)
		}
	})
}

// BenchmarkParseCrawlSitemap parses a sitemap of 50,000 URLs (the
// sitemaps.org maximum).
func BenchmarkParseCrawlSitemap(b *testing.B) {
	var s strings.Builder
	s.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range crawlMaxSitemapURLs {
		fmt.Fprintf(&s, "<url><loc>https://docs.example.org/manual/page-%d.html</loc><lastmod>2026-11-01</lastmod></url>", i)
	}
	s.WriteString("</urlset>")
	body := []byte(s.String())
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if sm, err := parseCrawlSitemap(body); err != nil || len(sm.pages) != crawlMaxSitemapURLs {
			b.Fatal(err)
		}
	}
}
