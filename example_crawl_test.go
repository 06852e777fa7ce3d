package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// exampleSite serves two pages that share a menu and a footer.
func exampleSite() *httptest.Server {
	layout := func(body string) string {
		return `<div class="menu"><a href="/docs/">Home</a> <a href="/docs/fees.html">Fees</a></div>` +
			body + `<div class="footer">© Example Library</div>`
	}
	pages := map[string]string{
		"/docs/":          layout(`<h1>Library</h1><p>Opening hours are 8 to 20.</p>`),
		"/docs/fees.html": layout(`<h1>Fees</h1><table><tr><th>Service</th><th>Price</th></tr><tr><td>Printing</td><td>5 ct</td></tr></table>`),
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
}

// Crawl a site and index each page; the menu and footer, which every page
// repeats, never reach indexPage. A real indexPage wraps the paragraphs in an
// IngestSource and calls IndexSource.
func ExampleRunCrawl() {
	// The example site runs on 127.0.0.1, which the address guard refuses:
	// this crawl's own Fetcher may reach it; the package default stays on.
	local := askyourdocs.NewFetcher(&askyourdocs.FetcherOptions{AllowPrivateTargets: true})
	srv := exampleSite()
	defer srv.Close()

	indexPage := func(ctx context.Context, pageURL string, paras []askyourdocs.Paragraph) (int, error) {
		u, _ := url.Parse(pageURL)
		fmt.Println(u.Path)
		for _, p := range paras {
			fmt.Printf("  %q (%s)\n", p.Text, p.Breadcrumb)
		}
		return len(paras), nil
	}
	res, err := askyourdocs.RunCrawl(context.Background(),
		askyourdocs.CrawlInput{SeedURLs: []string{srv.URL + "/docs/"}, MaxPages: 10, Fetcher: local},
		"", indexPage, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.PagesVisited, "visited,", res.PagesIndexed, "indexed,", len(res.Errors), "errors")
	// Output:
	// /docs/
	//   "Library" (Library)
	//   "Opening hours are 8 to 20." (Library)
	// /docs/fees.html
	//   "Fees" (Fees)
	//   "Service: Printing | Price: 5 ct" (Fees)
	// 2 visited, 2 indexed, 0 errors
}

// With SAVE_CRAWL_DATA=1 the crawl keeps each cleaned page as Markdown, and
// ReindexCrawlData feeds it to indexPage again later without any request,
// for example after changing the chunk size.
func ExampleReindexCrawlData() {
	askyourdocs.SetAllowPrivateTargets(true) // a local site, as in ExampleRunCrawl
	defer askyourdocs.SetAllowPrivateTargets(false)
	srv := exampleSite()
	defer srv.Close()
	dir, err := os.MkdirTemp("", "crawl-cache")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	os.Setenv("SAVE_CRAWL_DATA", "1") // normally set in the app's environment
	defer os.Unsetenv("SAVE_CRAWL_DATA")
	count := func(ctx context.Context, pageURL string, paras []askyourdocs.Paragraph) (int, error) {
		return len(paras), nil
	}
	res, err := askyourdocs.RunCrawl(context.Background(), askyourdocs.CrawlInput{SeedURLs: []string{srv.URL + "/docs/"}}, dir, count, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("saved", res.PagesSaved)
	srv.Close() // no network needed from here on

	re, err := askyourdocs.ReindexCrawlData(context.Background(), dir, count, func(msg string) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("replayed", re.FilesProcessed, "files,", re.PagesIndexed, "pages indexed")
	// Output:
	// saved 2
	// replayed 2 files, 2 pages indexed
}
