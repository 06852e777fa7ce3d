package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// webSetLimit sets the page limit of the default fetcher and of
// testLoopback (each fetcher has its own) for one test.
func webSetLimit(t *testing.T, n int64) {
	t.Helper()
	SetMaxPageBytes(n)
	testLoopback.maxBytes.Store(n)
	t.Cleanup(func() { SetMaxPageBytes(0); testLoopback.maxBytes.Store(0) })
}

// TestWebBodyLimit: a 50 MiB body is cut at the limit; the client stops
// reading, so the server manages to send only a fraction of it.
func TestWebBodyLimit(t *testing.T) {
	const total = 50 << 20
	const limit = 1 << 20
	webSetLimit(t, limit)
	for _, declared := range []bool{false, true} {
		t.Run(fmt.Sprintf("content-length=%v", declared), func(t *testing.T) {
			var served atomic.Int64
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(done)
				if declared {
					w.Header().Set("Content-Length", strconv.Itoa(total))
				}
				w.Header().Set("Content-Type", "text/html")
				chunk := []byte(strings.Repeat("<p>lorem ipsum</p>\n", 1724)) // ~32 KiB
				for served.Load() < total {
					n, err := w.Write(chunk[:min(len(chunk), int(total-served.Load()))])
					served.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			defer srv.Close()
			_, err := testLoopback.fetch(context.Background(), srv.URL, fetchOptions{})
			if !errors.Is(err, ErrPageTooLarge) {
				t.Fatalf("err = %v, want ErrPageTooLarge", err)
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("server still writing: the client did not stop reading")
			}
			if s := served.Load(); s >= total/2 {
				t.Errorf("server wrote %d of %d bytes before the client gave up", s, total)
			}
			t.Logf("served %d KiB of %d KiB", served.Load()>>10, total>>10)
		})
	}
	// Exactly at the limit is fine; one byte more is not.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write([]byte(strings.Repeat("x", n)))
	}))
	defer srv.Close()
	webSetLimit(t, 1000)
	if p, err := testLoopback.fetch(context.Background(), srv.URL+"?n=1000", fetchOptions{}); err != nil || len(p.Body) != 1000 {
		t.Errorf("body at the limit: %v", err)
	}
	// The message says the page "exceeds" the limit, as the original
	// engine's does (apps may match on it).
	if _, err := testLoopback.fetch(context.Background(), srv.URL+"?n=1001", fetchOptions{}); !errors.Is(err, ErrPageTooLarge) || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("body one past the limit: err = %v", err)
	}
	// FetchWebPage's path (fetchText), without the private-target guard.
	if _, err := testLoopback.fetchText(context.Background(), srv.URL+"?n=1001"); err == nil || !strings.Contains(err.Error(), "page exceeds the size limit") {
		t.Errorf("FetchWebPage one past the limit: err = %v, want it to say the page exceeds the limit", err)
	}
}

// webRedirectChain serves /r/N, redirecting N times before answering.
func webRedirectChain() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if err != nil || n <= 0 {
			fmt.Fprint(w, "<p>end of chain</p>")
			return
		}
		http.Redirect(w, r, "/r/"+strconv.Itoa(n-1), http.StatusFound)
	}))
}

func TestWebRedirectLimit(t *testing.T) {
	srv := webRedirectChain()
	defer srv.Close()
	p, err := testLoopback.fetch(context.Background(), srv.URL+"/r/10", fetchOptions{})
	if err != nil {
		t.Fatalf("10 redirects: %v", err)
	}
	if p.URL.Path != "/r/0" || string(p.Body) != "<p>end of chain</p>" {
		t.Errorf("10 redirects ended at %s with %q", p.URL, p.Body)
	}
	if _, err := testLoopback.fetch(context.Background(), srv.URL+"/r/11", fetchOptions{}); !errors.Is(err, errWebTooManyRedirects) {
		t.Errorf("11 redirects: err = %v, want errWebTooManyRedirects", err)
	}
}

func TestWebSchemes(t *testing.T) {
	for _, raw := range []string{"ftp://example.org/file", "file:///etc/passwd", "gopher://example.org/", "javascript:alert(1)", "data:text/html,hi"} {
		if _, err := testLoopback.fetch(context.Background(), raw, fetchOptions{}); !errors.Is(err, errWebScheme) {
			t.Errorf("%s: err = %v, want errWebScheme", raw, err)
		}
		if _, err := FetchWebPage(raw); !errors.Is(err, errWebScheme) {
			t.Errorf("FetchWebPage(%s): err = %v, want errWebScheme", raw, err)
		}
	}
	srv := httptest.NewServer(http.RedirectHandler("ftp://example.org/file", http.StatusMovedPermanently))
	defer srv.Close()
	if _, err := testLoopback.fetch(context.Background(), srv.URL, fetchOptions{}); !errors.Is(err, errWebScheme) {
		t.Errorf("redirect to ftp: err = %v, want errWebScheme", err)
	}
	if _, err := testLoopback.fetch(context.Background(), "http:///nohost", fetchOptions{}); err == nil {
		t.Error("URL without host: no error")
	}
}

func TestWebAllowRedirectOption(t *testing.T) {
	srv := webRedirectChain()
	defer srv.Close()
	errStop := errors.New("stop here")
	var hops []string
	opts := fetchOptions{allowRedirect: func(from, to *url.URL) error {
		hops = append(hops, from.Path+"->"+to.Path)
		if to.Path == "/r/1" {
			return errStop
		}
		return nil
	}}
	_, err := testLoopback.fetch(context.Background(), srv.URL+"/r/3", opts)
	if !errors.Is(err, errStop) {
		t.Errorf("err = %v, want the allowRedirect error", err)
	}
	if want := []string{"/r/3->/r/2", "/r/2->/r/1"}; fmt.Sprint(hops) != fmt.Sprint(want) {
		t.Errorf("hops = %v, want %v", hops, want)
	}
}

func TestWebFetchPageResponse(t *testing.T) {
	var ua, accept atomic.Value
	slowStarted := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.UserAgent())
		accept.Store(r.Header.Get("Accept"))
		switch r.URL.Path {
		case "/missing":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<h1>Not found</h1>")
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n"))
		case "/slow":
			close(slowStarted)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<p>ok</p>")
		}
	}))
	defer srv.Close()

	p, err := testLoopback.fetch(context.Background(), srv.URL+"/missing", fetchOptions{})
	if err != nil {
		t.Fatalf("404 must be a page, not an error: %v", err)
	}
	if p.StatusCode != 404 || p.ContentType != "text/html; charset=utf-8" || string(p.Body) != "<h1>Not found</h1>" {
		t.Errorf("404 page = %+v", p)
	}
	if got := ua.Load(); got != webUserAgent {
		t.Errorf("User-Agent %q, want %q", got, webUserAgent)
	}
	if got, _ := accept.Load().(string); !strings.Contains(got, "text/html") {
		t.Errorf("Accept %q", got)
	}
	_, err = testLoopback.fetchWebPage(context.Background(), srv.URL+"/missing")
	var se *HTTPStatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || se.URL != srv.URL+"/missing" || !strings.Contains(err.Error(), "HTTP status 404 Not Found") {
		t.Errorf("FetchWebPageContext of a 404: err = %v, want an *HTTPStatusError for 404 at %s", err, srv.URL+"/missing")
	}
	if _, err := testLoopback.fetchWebPage(context.Background(), srv.URL+"/image"); err == nil || !strings.Contains(err.Error(), "image/png") {
		t.Errorf("FetchWebPage of an image: err = %v", err)
	}
	if page, err := testLoopback.fetchWebPage(context.Background(), srv.URL+"/"); err != nil || page != "<p>ok</p>" {
		t.Errorf("FetchWebPage = %q, %v", page, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-slowStarted; cancel() }() // cancel once the request is in flight
	if _, err := testLoopback.fetch(ctx, srv.URL+"/slow", fetchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled fetch: err = %v, want context.Canceled", err)
	}
}

func TestWebPageCharset(t *testing.T) {
	latin1 := []byte("<p>caf\xe9 \x93quoted\x94</p>")
	utf8Late := "<p>" + strings.Repeat("ascii ", 300) + "</p><p>café ünïcode</p>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/header":
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			w.Write(latin1)
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			w.Write(append([]byte(`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">`), latin1...))
		case "/utf8-late":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(utf8Late))
		case "/mislabelled":
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			w.Write([]byte("<p>café</p>"))
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{
		"/header":      "café “quoted”",
		"/meta":        "café “quoted”",
		"/utf8-late":   "café ünïcode",
		"/mislabelled": "café",
	} {
		page, err := testLoopback.fetchWebPage(context.Background(), srv.URL+path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.Contains(page, want) {
			t.Errorf("%s: page %q does not contain %q", path, page[max(0, len(page)-60):], want)
		}
		// The decoded page must survive HTMLToStructuredText unchanged,
		// although its <meta> still names the original charset.
		paras, err := HTMLToStructuredText(strings.NewReader(page))
		if err != nil || len(paras) == 0 || !strings.Contains(paras[len(paras)-1].Text, want) {
			t.Errorf("%s: paragraphs %v, %v", path, paras, err)
		}
	}
}

func TestWebFollowingRefresh(t *testing.T) {
	var srvURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/stub":
			fmt.Fprint(w, `<html><head><meta http-equiv="Refresh" content="0; URL='/docs/start.html'"></head><body>Redirecting…</body></html>`)
		case r.URL.Path == "/docs/start.html":
			fmt.Fprint(w, `<html><body><h1>Start</h1></body></html>`)
		case r.URL.Path == "/away":
			// Same server, other host name: not followed.
			fmt.Fprintf(w, `<meta http-equiv="refresh" content="0;url=%s">`, strings.Replace(srvURL, "127.0.0.1", "localhost", 1)+"/docs/start.html")
		case r.URL.Path == "/loop-a":
			fmt.Fprint(w, `<meta http-equiv="refresh" content="0;url=loop-b">A`)
		case r.URL.Path == "/loop-b":
			fmt.Fprint(w, `<meta http-equiv="refresh" content="0;url=loop-a">B`)
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
			fmt.Fprintf(w, `<meta http-equiv="refresh" content="1; url=/hop/%d">hop %d`, n+1, n)
		case r.URL.Path == "/redirect-then-stub":
			http.Redirect(w, r, "/stub", http.StatusFound)
		case r.URL.Path == "/broken-target":
			fmt.Fprint(w, `<meta http-equiv="refresh" content="0;url=/missing">`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	srvURL = srv.URL
	cases := []struct {
		path, wantFrom, wantText string
	}{
		{"/stub", "/docs/start.html", "<h1>Start</h1>"},
		{"/redirect-then-stub", "/docs/start.html", "<h1>Start</h1>"},
		{"/away", "/away", "localhost"},
		{"/loop-a", "/loop-b", ">B"},
		{"/hop/0", "/hop/5", "hop 5"},
	}
	for _, c := range cases {
		page, from, err := testLoopback.fetchFollowingRefresh(context.Background(), srv.URL+c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if from != srv.URL+c.wantFrom || !strings.Contains(page, c.wantText) {
			t.Errorf("%s: from %s (want %s), page %q", c.path, from, c.wantFrom, page)
		}
	}
	_, _, err := testLoopback.fetchFollowingRefresh(context.Background(), srv.URL+"/broken-target")
	if se := (*HTTPStatusError)(nil); !errors.As(err, &se) || se.StatusCode != 404 {
		t.Errorf("refresh to a 404: err = %v, want an *HTTPStatusError for 404", err)
	}
}

func TestWebMetaRefreshURL(t *testing.T) {
	base, _ := url.Parse("https://example.org/dir/page.html")
	cases := []struct{ body, want string }{
		{`<meta http-equiv="refresh" content="0; url=next.html">`, "https://example.org/dir/next.html"},
		{`<META HTTP-EQUIV="REFRESH" CONTENT="5;URL=/abs">`, "https://example.org/abs"},
		{`<meta http-equiv="refresh" content="0,url='quoted page.html'">`, "https://example.org/dir/quoted%20page.html"},
		{`<meta http-equiv="refresh" content='0; URL="https://other.example/x"'>`, "https://other.example/x"},
		{`<meta content="3 ; url = spaced" http-equiv=" refresh ">`, "https://example.org/dir/spaced"},
		{`<meta http-equiv="refresh" content="0.5; bare-target">`, "https://example.org/dir/bare-target"},
		{`<head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=//cdn.example/y"/></head>`, "https://cdn.example/y"},
	}
	for _, c := range cases {
		u, ok := metaRefreshURL(base, c.body)
		if !ok || u.String() != c.want {
			t.Errorf("metaRefreshURL(%s) = %v, %v; want %s", c.body, u, ok, c.want)
		}
	}
	for _, body := range []string{
		`<meta http-equiv="refresh" content="30">`,
		`<meta http-equiv="refresh" content="url=missing-delay">`,
		`<meta http-equiv="refresh" content="0; url=javascript:alert(1)">`,
		`<meta http-equiv="refresh" content="0; url=ftp://example.org/">`,
		`<meta name="refresh" content="0; url=/not-http-equiv">`,
		`<noscript><meta http-equiv="refresh" content="0; url=/nojs"></noscript>`,
		`<p>no meta at all</p>`,
		``,
	} {
		if u, ok := metaRefreshURL(base, body); ok {
			t.Errorf("metaRefreshURL(%s) = %v, want none", body, u)
		}
	}
}

// TestWebSettingsConcurrent exercises the global setters from several
// goroutines (run with -race to check them).
func TestWebSettingsConcurrent(t *testing.T) {
	t.Cleanup(func() { SetMaxPageBytes(0); SetAllowPrivateTargets(false) })
	done := make(chan struct{})
	for i := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 200 {
				SetMaxPageBytes(int64(1000 + i*j))
				_ = webPageLimit()
				SetAllowPrivateTargets(j%2 == 0)
				_ = webDefaultFetcher().allowPrivate()
			}
		}()
	}
	for range 4 {
		<-done
	}
	SetMaxPageBytes(-5)
	if got := webPageLimit(); got != webDefaultMaxPageBytes {
		t.Errorf("SetMaxPageBytes(-5): limit %d, want the default %d", got, webDefaultMaxPageBytes)
	}
}

// TestWebDefaultGuardOn checks the package default with the setting off:
// FetchWebPage refuses a loopback test server.
func TestWebDefaultGuardOn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the guarded fetch reached the server")
	}))
	defer srv.Close()
	if _, err := FetchWebPage(srv.URL); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("FetchWebPage(%s) with the guard on: err = %v, want ErrPrivateTarget", srv.URL, err)
	}
	if _, _, err := FetchWebPageFollowingRefresh(srv.URL); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("FetchWebPageFollowingRefresh: err = %v, want ErrPrivateTarget", err)
	}
}
