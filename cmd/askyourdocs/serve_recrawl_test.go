package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestServeRecrawl: serve --recrawl's pass re-indexes the web sources as
// jobs: a page indexed alone picks up its new text, a crawled page that
// now answers 404 leaves the index, one answering 500 keeps its chunks,
// and an unchanged page embeds nothing.
func TestServeRecrawl(t *testing.T) {
	askyourdocs.SetAllowPrivateTargets(true)
	t.Cleanup(func() { askyourdocs.SetAllowPrivateTargets(false) })
	var mu sync.Mutex
	pages := map[string]string{
		"/news.html":       `<h1>News</h1><p>The regatta starts on Saturday.</p>`,
		"/site/":           `<h1>Club</h1><p>The club paddles every Sunday.</p><a href="/site/fees.html">Fees</a> <a href="/site/boats.html">Boats</a>`,
		"/site/fees.html":  `<h1>Fees</h1><p>Membership costs ninety euros a year.</p>`,
		"/site/boats.html": `<h1>Boats</h1><p>The club owns twelve sea kayaks.</p>`,
	}
	status := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, ok := pages[r.URL.Path]
		code := status[r.URL.Path]
		mu.Unlock()
		if !ok || code != 0 {
			http.Error(w, "no", max(code, http.StatusNotFound))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Club</title></head><body><main>`+body+`</main></body></html>`)
	}))
	defer srv.Close()
	ts := newTestServe(t, nil, "", 0)
	ts.s.pages = newPageFetcher(true)
	ctx := context.Background()
	if _, err := ts.s.runIndex(ctx, indexInput{URLs: []string{srv.URL + "/news.html"}}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.s.runIndex(ctx, indexInput{URLs: []string{srv.URL + "/site/"}, Crawl: true, DelayMs: 1}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if got := sourceFiles(t, ts); len(got) != 4 {
		t.Fatalf("indexed: %v", got)
	}
	mu.Lock()
	pages["/news.html"] = `<h1>News</h1><p>The regatta moved to Sunday because of the storm.</p>`
	status["/site/fees.html"], status["/site/boats.html"] = http.StatusNotFound, http.StatusInternalServerError
	mu.Unlock()
	w, err := newServeWatch(ctx, ts.s, nil, "", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	embedded := ts.s.b.emb.docs.Load()
	if err := w.recrawlOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got := sourceFiles(t, ts)
	if slices.Contains(got, "fees.html") || !slices.Contains(got, "boats.html") || !slices.Contains(got, "news.html") {
		t.Errorf("after the re-crawl: %v, want fees.html gone, boats.html (500) kept", got)
	}
	hits, err := ts.s.b.store.SearchText(ctx, "regatta storm", 3, nil)
	if err != nil || len(hits) == 0 || !strings.Contains(askyourdocs.DocText(hits[0]), "storm") {
		t.Errorf("the changed page's new text is not indexed: %v", err)
	}
	if n := ts.s.b.emb.docs.Load() - embedded; n != 1 {
		t.Errorf("the re-crawl embedded %d chunks, want 1 (the changed page's only)", n)
	}
}
