package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestPageSourceFetcher: a web page source fetches with its Fetcher's
// private-target policy and gives up when the indexing context ends.
func TestPageSourceFetcher(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><body><p>The library opens at nine.</p></body></html>`)
	}))
	defer srv.Close()
	if paras, err := newPageSource(newPageFetcher(true), srv.URL).Fetch(t.Context()); err != nil || len(paras) == 0 {
		t.Fatalf("allowed: %v, %d paragraphs", err, len(paras))
	}
	if _, err := newPageSource(newPageFetcher(false), srv.URL).Fetch(t.Context()); !errors.Is(err, askyourdocs.ErrPrivateTarget) {
		t.Fatalf("refused: %v, want ErrPrivateTarget", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := newPageSource(newPageFetcher(true), srv.URL).Fetch(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v, want context.Canceled", err)
	}
}
