package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetcherOwnLimits checks that a Fetcher's options apply to it alone:
// its page limit and private-target policy, not the default Fetcher's.
func TestFetcherOwnLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<p>" + strings.Repeat("a", 200) + "</p>"))
	}))
	defer srv.Close()
	ctx := context.Background()

	small := NewFetcher(&FetcherOptions{MaxPageBytes: 50, AllowPrivateTargets: true})
	if _, err := small.FetchWebPage(ctx, srv.URL); !errors.Is(err, ErrPageTooLarge) {
		t.Errorf("50-byte Fetcher: err = %v, want ErrPageTooLarge", err)
	}
	open := NewFetcher(&FetcherOptions{AllowPrivateTargets: true})
	if page, err := open.FetchWebPage(ctx, srv.URL); err != nil || !strings.Contains(page, "aaaa") {
		t.Errorf("private-allowing Fetcher: %q, %v", page, err)
	}
	if _, err := NewFetcher(nil).FetchWebPage(ctx, srv.URL); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("default options: err = %v, want ErrPrivateTarget", err)
	}
	// The package default is untouched by the Fetchers above.
	if _, err := FetchWebPageContext(ctx, srv.URL); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("package default: err = %v, want ErrPrivateTarget", err)
	}
	// And the package setters write the default Fetcher, not the others.
	SetMaxPageBytes(50)
	SetAllowPrivateTargets(true)
	t.Cleanup(func() { SetMaxPageBytes(0); SetAllowPrivateTargets(false) })
	if _, err := FetchWebPageContext(ctx, srv.URL); !errors.Is(err, ErrPageTooLarge) {
		t.Errorf("package default after the setters: err = %v, want ErrPageTooLarge", err)
	}
	if _, err := open.FetchWebPage(ctx, srv.URL); err != nil {
		t.Errorf("private-allowing Fetcher after the setters: %v", err)
	}
}

// TestFetcherFollowingRefresh checks the Fetcher's refresh-following form:
// it follows a same-host <meta refresh> stub with the Fetcher's policy.
func TestFetcherFollowingRefresh(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/stub" {
			_, _ = w.Write([]byte(`<meta http-equiv="refresh" content="0; url=/docs/start.html">`))
			return
		}
		_, _ = w.Write([]byte("<h1>Start</h1>"))
	}))
	defer srv.Close()
	ctx := context.Background()
	page, from, err := NewFetcher(&FetcherOptions{AllowPrivateTargets: true}).FetchWebPageFollowingRefresh(ctx, srv.URL+"/stub")
	if err != nil || from != srv.URL+"/docs/start.html" || !strings.Contains(page, "<h1>Start</h1>") {
		t.Errorf("FetchWebPageFollowingRefresh = %q from %s, %v", page, from, err)
	}
	if _, _, err := NewFetcher(nil).FetchWebPageFollowingRefresh(ctx, srv.URL+"/stub"); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("default options: err = %v, want ErrPrivateTarget", err)
	}
}
