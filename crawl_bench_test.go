package engine

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// crawlBenchSite serves a 500-page site: page i links to pages 2i+1 and
// 2i+2 (a BFS tree) and carries the shared layout, about 3 KB per page;
// latency is added to every answer.
func crawlBenchSite(b *testing.B, pages int, latency time.Duration) *crawlTestSite {
	site := newCrawlTestSite(b)
	site.handle = func(w http.ResponseWriter, r *http.Request) bool {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/site/%d.html", &n); err != nil || n >= pages {
			return false
		}
		if latency > 0 {
			time.Sleep(latency)
		}
		var content strings.Builder
		fmt.Fprintf(&content, "<p>Page %d explains topic %d in some detail, with a sentence or two of its own.</p>", n, n)
		fmt.Fprintf(&content, "<h2>Section of page %d</h2><p>More text that belongs to page %d only.</p>", n, n)
		var links []string
		for _, c := range []int{2*n + 1, 2*n + 2} {
			if c < pages {
				links = append(links, fmt.Sprintf("/site/%d.html", c))
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, crawlTestLayout(fmt.Sprintf("Page %d", n), content.String(), links...))
		return true
	}
	return site
}

// BenchmarkRunCrawl crawls a 500-page loopback site with DelayMs=0 and a
// no-op indexPage: fetch, parse, link extraction, boilerplate removal.
// workers=1 against the default pool of 4, with and without 2 ms of server
// latency per page.
func BenchmarkRunCrawl(b *testing.B) {
	const pages = 500
	for _, latency := range []time.Duration{0, 2 * time.Millisecond} {
		site := crawlBenchSite(b, pages, latency)
		for _, workers := range []int{1, crawlWorkers} {
			b.Run(fmt.Sprintf("latency=%v/workers=%d", latency, workers), func(b *testing.B) {
				o := testCrawlOptions()
				o.workers = workers
				noop := func(ctx context.Context, pageURL string, paras []Paragraph) (int, error) { return len(paras), nil }
				crawled := 0
				for b.Loop() {
					res, err := runCrawl(b.Context(), CrawlInput{SeedURLs: []string{site.url("/site/0.html")}, MaxPages: pages, MaxDepth: 20}, "", noop, nil, o)
					if err != nil || res.PagesIndexed != pages {
						b.Fatalf("crawl: %+v, %v", res, err)
					}
					crawled += res.PagesIndexed
				}
				b.ReportMetric(float64(crawled)/b.Elapsed().Seconds(), "pages/s")
			})
		}
	}
}

// BenchmarkCrawlMarkdown writes and reads back the cache file of a page of
// 200 paragraphs (headings, lists, table rows, plain text).
func BenchmarkCrawlMarkdown(b *testing.B) {
	var paras []Paragraph
	for s := range 20 {
		h := fmt.Sprintf("Section %d", s)
		paras = append(paras, Paragraph{Text: h, Heading: true, Breadcrumb: h})
		for i := range 3 {
			paras = append(paras, Paragraph{Text: fmt.Sprintf("Paragraph %d of section %d with ordinary running text in it.", i, s), Breadcrumb: h})
		}
		paras = append(paras, Paragraph{Text: "- first item", Breadcrumb: h}, Paragraph{Text: "- second item", Breadcrumb: h})
		for r := range 4 {
			paras = append(paras, Paragraph{Text: fmt.Sprintf("Name: row %d | Value: %d", r, r*s), Breadcrumb: h})
		}
	}
	md := renderCrawlMarkdown("https://example.com/page", paras)
	b.SetBytes(int64(len(md)))
	b.ReportAllocs()
	for b.Loop() {
		data := renderCrawlMarkdown("https://example.com/page", paras)
		if _, _, err := parseCrawlMarkdown(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecrawlUnchanged crawls a 200-page loopback site that sends
// ETags (pages of 12 sections, about 2.7 KB of HTML each) into a fresh
// SQLiteStore with the built-in embedder, then crawls it again with the
// first crawl's pages as Previous, and reports both side by side: time,
// page bytes the server sent, and the re-crawl's 304 answers.
func BenchmarkRecrawlUnchanged(b *testing.B) {
	const n = 200
	site := newRevalidateSite(b, n)
	for i := range n {
		var body strings.Builder
		for s := range 12 {
			fmt.Fprintf(&body, "<h2>Section %d of topic %d</h2><p>Topic %d, section %d: the settings of this part live in a file of their own, are read at start-up, and can be changed while the service runs by sending it a signal.</p>", s, i, i, s)
		}
		site.setPage(fmt.Sprintf("/docs/p%03d.html", i), revalidateLayout(fmt.Sprintf("Topic %d", i), body.String()))
	}
	var first, again time.Duration
	var firstBytes, againBytes int64
	var notModified int
	for b.Loop() {
		store, err := NewSQLiteStore(b.Context(), nil, NewLocalEmbedder(0), filepath.Join(b.TempDir(), "i.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		crawl := func(prev []CrawlPage) CrawlResult {
			res, err := runCrawl(b.Context(), CrawlInput{SeedURLs: []string{site.url("/docs/")}, MaxPages: 300, Previous: prev},
				"", revalidateIndex(store), nil, testCrawlOptions())
			if err != nil {
				b.Fatal(err)
			}
			return res
		}
		site.reset()
		start := time.Now()
		res := crawl(nil)
		first += time.Since(start)
		_, sent, _ := site.counts()
		firstBytes += sent
		if res.PagesIndexed != n+1 {
			b.Fatalf("first crawl indexed %d pages", res.PagesIndexed)
		}
		site.reset()
		start = time.Now()
		res2 := crawl(res.Pages)
		again += time.Since(start)
		status, sent, _ := site.counts()
		againBytes += sent
		notModified += status[http.StatusNotModified]
		if res2.PagesUnchanged != n+1 {
			b.Fatalf("re-crawl: %d unchanged", res2.PagesUnchanged)
		}
		store.Close()
	}
	runs := float64(b.N)
	b.ReportMetric(float64(first.Milliseconds())/runs, "first_ms")
	b.ReportMetric(float64(again.Milliseconds())/runs, "recrawl_ms")
	b.ReportMetric(float64(first)/float64(again), "time_ratio")
	b.ReportMetric(float64(firstBytes)/runs/1024, "first_KB")
	b.ReportMetric(float64(againBytes)/runs/1024, "recrawl_KB")
	b.ReportMetric(float64(notModified)/runs, "recrawl_304s")
}
