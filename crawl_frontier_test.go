package engine

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestCrawlFrontierBounded crawls a site whose every page links to 100,000
// new pages, with MaxPages 3. Pages beyond MaxPages are never fetched (the
// frontier is fetched in order and every fetch counts), yet each link used
// to be normalised, remembered and queued: 300,000 queued URLs here (175 MB
// more allocated), and a site of 10 MiB pages could queue 700,000 per page.
// Only the pages that can still be fetched are queued now; what the crawl
// fetches and indexes is unchanged.
func TestCrawlFrontierBounded(t *testing.T) {
	const links = 100_000
	var mu sync.Mutex
	var fetched []string
	page := func(n int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "<html><body><h1>Page %d</h1><p>Text of page %d.</p>", n, n)
		for i := range links {
			fmt.Fprintf(&b, `<a href="/p/%d">x</a>`, n*links+i+1)
		}
		return b.String()
	}
	opts := crawlOptions{workers: 1, pageTimeout: crawlPageTimeout, getenv: func(string) string { return "" },
		fetch: func(ctx context.Context, raw string, _ fetchOptions) (*fetchedPage, error) {
			u, err := url.Parse(raw)
			if err != nil {
				return nil, err
			}
			if u.Path == "/robots.txt" || u.Path == "/sitemap.xml" {
				return &fetchedPage{URL: u, StatusCode: 404}, nil
			}
			mu.Lock()
			fetched = append(fetched, u.Path)
			mu.Unlock()
			var n int
			fmt.Sscanf(u.Path, "/p/%d", &n)
			return &fetchedPage{URL: u, StatusCode: 200, ContentType: "text/html", Body: []byte(page(n))}, nil
		}}
	col := newCrawlCollector()
	res, err := runCrawl(t.Context(), CrawlInput{SeedURLs: []string{"http://example.test/p/"}, MaxPages: 3}, "", col.index, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fetched, " "); got != "/p/ /p/1 /p/2" || res.PagesIndexed != 3 {
		t.Errorf("fetched %s, indexed %d; want /p/ /p/1 /p/2, 3", got, res.PagesIndexed)
	}
}

// TestCrawlEnqueueStopsWhenFull checks the bound itself: with MaxPages 3
// and one page fetched, two more URLs are queued and the rest neither
// queued nor remembered (the frontier and the seen set used to take all
// 100,000).
func TestCrawlEnqueueStopsWhenFull(t *testing.T) {
	c := &crawlRun{cfg: CrawlInput{MaxPages: 3}, seen: map[string]bool{}, robots: &crawlRobots{}, dispatched: 1}
	for i := range 100_000 {
		u, _ := url.Parse(fmt.Sprintf("http://example.test/p/%d", i))
		n, key := crawlNormalize(u)
		c.enqueue(n, key, 1, false)
	}
	if len(c.frontier) != 2 || len(c.seen) != 2 || c.frontier[1].url.Path != "/p/1" {
		t.Errorf("frontier %d, seen %d, want the first 2", len(c.frontier), len(c.seen))
	}
}
