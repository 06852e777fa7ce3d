package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunCrawlOwnFetcher runs the public RunCrawl with a Fetcher of the
// caller's (CrawlInput.Fetcher): its private-target policy lets the crawl
// reach the loopback site the default Fetcher refuses, and its page limit,
// not the default's, applies.
func TestRunCrawlOwnFetcher(t *testing.T) {
	t.Setenv(crawlSaveEnv, "")
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/docs/":
			fmt.Fprint(w, `<html><body><h1>Start</h1><p>The start page of the manual.</p><a href="/docs/a">a</a></body></html>`)
		case "/docs/a":
			fmt.Fprint(w, `<html><body><h1>Page A</h1><p>`+strings.Repeat("Text of page A. ", 20)+`</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	seed := srv.URL + "/docs/"
	var indexed []string
	indexPage := func(_ context.Context, pageURL string, paras []Paragraph) (int, error) {
		indexed = append(indexed, pageURL)
		return len(paras), nil
	}

	// The default Fetcher refuses 127.0.0.1 before connecting.
	_, err := RunCrawl(context.Background(), CrawlInput{SeedURLs: []string{seed}}, t.TempDir(), indexPage, nil)
	if !errors.Is(err, ErrPrivateTarget) {
		t.Fatalf("RunCrawl with the default Fetcher: err = %v, want ErrPrivateTarget", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the guarded crawl reached the server %d times", n)
	}

	// The caller's Fetcher allows private targets: both pages are crawled.
	own := NewFetcher(&FetcherOptions{AllowPrivateTargets: true})
	res, err := RunCrawl(context.Background(), CrawlInput{SeedURLs: []string{seed}, Fetcher: own}, t.TempDir(), indexPage, nil)
	if err != nil {
		t.Fatalf("RunCrawl with an allowing Fetcher: %v", err)
	}
	if res.PagesIndexed != 2 || len(indexed) != 2 || indexed[1] != srv.URL+"/docs/a" {
		t.Fatalf("PagesIndexed = %d, indexed %v, want the seed and /docs/a", res.PagesIndexed, indexed)
	}

	// Its page limit applies too: the seed page is larger than 40 bytes.
	small := NewFetcher(&FetcherOptions{AllowPrivateTargets: true, MaxPageBytes: 40})
	_, err = RunCrawl(context.Background(), CrawlInput{SeedURLs: []string{seed}, Fetcher: small}, t.TempDir(), indexPage, nil)
	if !errors.Is(err, ErrPageTooLarge) {
		t.Fatalf("RunCrawl with a 40-byte Fetcher: err = %v, want ErrPageTooLarge", err)
	}
}
