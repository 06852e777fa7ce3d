package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// Identity and limits of the fetcher.
const (
	// webUserAgent is sent with every request of FetchWebPage and the crawler.
	webUserAgent = "askyourdocs/1.0 (+https://github.com/dbis-ilm/askyourdocs)"
	// webDefaultMaxPageBytes is the default page limit (SetMaxPageBytes).
	webDefaultMaxPageBytes = 10 << 20
	// webMaxRedirects is the number of HTTP redirects followed per fetch.
	webMaxRedirects = 10
	// webMaxRefreshHops bounds the <meta refresh> stubs followed by
	// FetchWebPageFollowingRefreshContext.
	webMaxRefreshHops = 5
	// webFetchTimeout bounds FetchWebPage and FetchWebPageFollowingRefresh,
	// which take no context.
	webFetchTimeout = 2 * time.Minute
)

// Errors of page fetches; callers test them with errors.Is.
var (
	// ErrPageTooLarge is returned (wrapped) when a page's body is larger than the
	// limit set with SetMaxPageBytes (10 MiB by default). The body is read only up
	// to one byte past the limit.
	ErrPageTooLarge = errors.New("page exceeds the size limit")

	// ErrPrivateTarget is returned (wrapped) by FetchWebPage and the crawler when
	// a URL, a redirect hop or a name's DNS answer leads to an address that is not
	// publicly routable (loopback, private, link-local, carrier-grade NAT,
	// multicast, reserved, or an IPv6 form embedding such an IPv4 address) while
	// private targets are not allowed. See SetAllowPrivateTargets.
	ErrPrivateTarget = errors.New("private network target refused")
)

var (
	errWebScheme           = errors.New("only http and https URLs can be fetched")
	errWebTooManyRedirects = errors.New("too many redirects")
)

// SetMaxPageBytes sets how many bytes of a page body FetchWebPage,
// FetchWebPageFollowingRefresh and RunCrawl read at most; a larger body is an
// error wrapping ErrPageTooLarge. n <= 0 restores the default of 10 MiB. The
// limit applies to the decoded (decompressed) body. It is safe for concurrent
// use and affects fetches that start afterwards.
func SetMaxPageBytes(n int64) {
	webDefaultFetcher().maxBytes.Store(max(n, 0))
}

// webPageLimit is the default Fetcher's page limit.
func webPageLimit() int64 { return webDefaultFetcher().pageLimit() }

// pageLimit returns the most body bytes f reads.
func (f *webFetcher) pageLimit() int64 {
	if n := f.maxBytes.Load(); n > 0 {
		return n
	}
	return webDefaultMaxPageBytes
}

// webFetcher is the HTTP client behind fetchPage. The zero value is not
// usable: build it with newWebFetcher. Tests replace resolve, dial and proxy
// and set guard to exercise the address guard without opening any
// non-loopback connection.
type webFetcher struct {
	// resolve returns the addresses of a host name (not an IP literal).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// dial connects to address ("ip:port" when guarded).
	dial func(ctx context.Context, network, address string) (net.Conn, error)
	// proxy picks the proxy for a request when private targets are allowed.
	proxy func(*http.Request) (*url.URL, error)
	// guard, when non-nil, overrides the package setting: *guard == true
	// means private targets are refused.
	guard *bool
	// transport is built by newWebFetcher from the fields above.
	transport *http.Transport
	// maxBytes (<= 0: the default) and allow are the limits and policy of
	// FetcherOptions; the package setters write the default fetcher's.
	maxBytes atomic.Int64
	allow    atomic.Bool
}

// webFetcherDeps are the replaceable parts of a webFetcher; nil fields take
// the production defaults.
type webFetcherDeps struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, address string) (net.Conn, error)
	proxy   func(*http.Request) (*url.URL, error)
	guard   *bool
}

func newWebFetcher(d webFetcherDeps) *webFetcher {
	f := &webFetcher{resolve: d.resolve, dial: d.dial, proxy: d.proxy, guard: d.guard}
	if f.resolve == nil {
		f.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if f.dial == nil {
		dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: webGuardControl}
		f.dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			if f.allowPrivate() {
				return dialer.DialContext(ctx, network, address)
			}
			return guarded.DialContext(ctx, network, address)
		}
	}
	if f.proxy == nil {
		f.proxy = http.ProxyFromEnvironment
	}
	f.transport = &http.Transport{
		Proxy: func(r *http.Request) (*url.URL, error) {
			if !f.allowPrivate() {
				return nil, nil // a proxy would resolve the target itself
			}
			return f.proxy(r)
		},
		DialContext:           f.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return f
}

// allowPrivate reports whether private targets may be fetched right now.
func (f *webFetcher) allowPrivate() bool {
	if f.guard != nil {
		return !*f.guard
	}
	return f.allow.Load()
}

var webDefaultFetcher = sync.OnceValue(func() *webFetcher { return newWebFetcher(webFetcherDeps{}) })

// fetchedPage is one HTTP response read by fetchPage.
type fetchedPage struct {
	URL         *url.URL // final URL after redirects
	StatusCode  int
	ContentType string // the full Content-Type header value
	Body        []byte // at most the page limit (SetMaxPageBytes)
	// ETag and LastModified are the response's validators, for a
	// conditional fetch of the page later (empty when not sent).
	ETag, LastModified string
	// notFetched marks a 304 the crawl made up without a request (the
	// sitemap's lastmod showed the page unchanged).
	notFetched bool
}

// text returns Body decoded to UTF-8 using the Content-Type charset, a <meta
// charset> in the body, or sniffing (golang.org/x/net/html/charset). A body
// that is valid UTF-8 and contains non-ASCII bytes is taken as UTF-8 whatever
// it declares (see webDecode).
func (p *fetchedPage) text() (string, error) {
	b, err := webDecode(p.Body, p.ContentType)
	if err != nil {
		return "", fmt.Errorf("decode %s: %w", p.URL, err)
	}
	return string(b), nil
}

// webDecode returns body converted to UTF-8. The encoding is, in order: a
// byte-order mark; UTF-8 if body contains non-ASCII bytes and is valid UTF-8
// (a page already decoded, e.g. by FetchWebPage, or mislabelled); the charset
// parameter of contentType; a <meta charset> or http-equiv Content-Type in
// the first 1024 bytes; windows-1252 (the WHATWG default, also used for
// ISO-8859-1 labels).
func webDecode(body []byte, contentType string) ([]byte, error) {
	var enc encoding.Encoding
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return body[3:], nil
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}), bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		enc, _, _ = charset.DetermineEncoding(body, "")
	case webHasHighBit(body) && utf8.Valid(body):
		return body, nil
	default:
		var name string
		enc, name, _ = charset.DetermineEncoding(body, contentType)
		if name == "windows-1252" && !webHasHighBit(body) {
			return body, nil // ASCII reads the same
		}
		if name == "utf-8" {
			if !utf8.Valid(body) {
				return bytes.ToValidUTF8(body, []byte("\uFFFD")), nil
			}
			return body, nil
		}
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("convert to UTF-8: %w", err)
	}
	return out, nil
}

func webHasHighBit(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// fetchOptions tunes fetchPage; the zero value is the default.
type fetchOptions struct {
	// allowRedirect, when non-nil, is asked before each redirect hop; a
	// non-nil error stops the fetch and fetchPage returns it wrapped.
	allowRedirect func(from, to *url.URL) error
	// ifNoneMatch and ifModifiedSince, when set, make the request
	// conditional (RFC 9110 13.1): a server whose page still matches
	// answers 304 Not Modified without a body.
	ifNoneMatch, ifModifiedSince string
}

// fetchPage GETs rawURL through the SSRF-safe client (address guard on every
// dial, at most 10 redirects, http/https only, the body limit ->
// ErrPageTooLarge). Non-2xx statuses are returned as a page, not an error. It
// honours ctx.
func fetchPage(ctx context.Context, rawURL string, opts fetchOptions) (*fetchedPage, error) {
	return webDefaultFetcher().fetch(ctx, rawURL, opts)
}

// fetch implements fetchPage with f's transport.
func (f *webFetcher) fetch(ctx context.Context, rawURL string, opts fetchOptions) (*fetchedPage, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fetch %q: %w", rawURL, err)
	}
	if err := webCheckScheme(u); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("fetch %s: URL has no host", rawURL)
	}
	client := &http.Client{
		Transport: f.transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > webMaxRedirects {
				return fmt.Errorf("%w: more than %d", errWebTooManyRedirects, webMaxRedirects)
			}
			if err := webCheckScheme(req.URL); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL, err)
			}
			if opts.allowRedirect != nil {
				if err := opts.allowRedirect(via[len(via)-1].URL, req.URL); err != nil {
					return fmt.Errorf("redirect to %s: %w", req.URL, err)
				}
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", webUserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	if opts.ifNoneMatch != "" {
		req.Header.Set("If-None-Match", opts.ifNoneMatch)
	}
	if opts.ifModifiedSince != "" {
		req.Header.Set("If-Modified-Since", opts.ifModifiedSince)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	limit := f.pageLimit()
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("fetch %s: %w: Content-Length %d exceeds %d bytes", rawURL, ErrPageTooLarge, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: read body: %w", rawURL, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("fetch %s: %w: body exceeds %d bytes", rawURL, ErrPageTooLarge, limit)
	}
	return &fetchedPage{
		URL:          resp.Request.URL,
		StatusCode:   resp.StatusCode,
		ContentType:  resp.Header.Get("Content-Type"),
		Body:         body,
		ETag:         webValidator(resp.Header.Get("ETag")),
		LastModified: webValidator(resp.Header.Get("Last-Modified")),
	}, nil
}

// webValidator returns a response's ETag or Last-Modified value to send
// back in a later request: empty when it is longer than any real one or
// holds control characters (a hostile server's header is not echoed).
func webValidator(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 256 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	return v
}

func webCheckScheme(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return nil
	}
	return fmt.Errorf("%w: scheme %q", errWebScheme, u.Scheme)
}

// FetchWebPage returns the page at url as UTF-8 text (usually HTML, for
// HTMLToStructuredText). It is (*Fetcher).FetchWebPage with the default
// Fetcher (the limits SetMaxPageBytes and SetAllowPrivateTargets set) and
// a context that gives up after two minutes.
//
// Deprecated: Use (*Fetcher).FetchWebPage with a Fetcher from
// NewFetcher(nil) (FetcherOptions in place of SetMaxPageBytes and
// SetAllowPrivateTargets) and a context of your own, which bounds the fetch.
func FetchWebPage(url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), webFetchTimeout)
	defer cancel()
	return webDefaultFetcher().fetchWebPage(ctx, url)
}

// FetchWebPageContext is FetchWebPage giving up when ctx ends.
//
// Deprecated: use (*Fetcher).FetchWebPage, with NewFetcher's options in
// place of SetMaxPageBytes and SetAllowPrivateTargets.
func FetchWebPageContext(ctx context.Context, url string) (string, error) {
	return webDefaultFetcher().fetchWebPage(ctx, url)
}

// FetchWebPageFollowingRefresh is (*Fetcher).FetchWebPageFollowingRefresh
// with the default Fetcher and a context that gives up after two minutes.
//
// Deprecated: Use (*Fetcher).FetchWebPageFollowingRefresh with a Fetcher
// from NewFetcher(nil) and a context of your own.
func FetchWebPageFollowingRefresh(url string) (page, from string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), webFetchTimeout)
	defer cancel()
	return webDefaultFetcher().fetchFollowingRefresh(ctx, url)
}

// FetchWebPageFollowingRefreshContext is FetchWebPageFollowingRefresh
// giving up when ctx ends.
//
// Deprecated: use (*Fetcher).FetchWebPageFollowingRefresh.
func FetchWebPageFollowingRefreshContext(ctx context.Context, url string) (page, from string, err error) {
	return webDefaultFetcher().fetchFollowingRefresh(ctx, url)
}

// HTTPStatusError is the error (wrapped) of FetchWebPage and its
// siblings when the server answers with a status other than 2xx, and of the
// pages RunCrawl could not crawl for that reason. Callers branch on it with
// errors.As.
type HTTPStatusError struct {
	// StatusCode is the HTTP status of the response, e.g. 404.
	StatusCode int
	// URL is the URL that answered with it (after redirects).
	URL string
}

// Error returns "HTTP status " followed by the code and its text, e.g.
// "HTTP status 404 Not Found"; the errors wrapping it name the URL fetched.
func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("HTTP status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// fetchWebPage implements (*Fetcher).FetchWebPage with f's transport.
func (f *webFetcher) fetchWebPage(ctx context.Context, rawURL string) (string, error) {
	p, err := f.fetchText(ctx, rawURL)
	if err != nil {
		return "", err
	}
	return p.text, nil
}

// webTextPage is a fetched page decoded to UTF-8.
type webTextPage struct {
	url  *url.URL
	text string
}

// fetchText fetches rawURL and returns its text, refusing non-2xx statuses
// and non-text content types.
func (f *webFetcher) fetchText(ctx context.Context, rawURL string) (webTextPage, error) {
	p, err := f.fetch(ctx, rawURL, fetchOptions{})
	if err != nil {
		return webTextPage{}, err
	}
	if p.StatusCode < 200 || p.StatusCode > 299 {
		return webTextPage{}, fmt.Errorf("fetch %s: %w", rawURL, &HTTPStatusError{StatusCode: p.StatusCode, URL: p.URL.String()})
	}
	if !webTextualType(p.ContentType) {
		return webTextPage{}, fmt.Errorf("fetch %s: content type %q is not a web page", rawURL, p.ContentType)
	}
	text, err := p.text()
	if err != nil {
		return webTextPage{}, err
	}
	return webTextPage{url: p.URL, text: text}, nil
}

// webTextualType reports whether a Content-Type value names text, HTML or
// XML (an empty or unparsable value counts as text: servers omit it).
func webTextualType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return true
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/xhtml+xml" ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

func (f *webFetcher) fetchFollowingRefresh(ctx context.Context, rawURL string) (page, from string, err error) {
	p, err := f.fetchText(ctx, rawURL)
	if err != nil {
		return "", "", err
	}
	seen := map[string]bool{p.url.String(): true}
	for range webMaxRefreshHops {
		next, ok := metaRefreshURL(p.url, p.text)
		if !ok || !strings.EqualFold(next.Hostname(), p.url.Hostname()) || seen[next.String()] {
			break
		}
		seen[next.String()] = true
		np, err := f.fetchText(ctx, next.String())
		if err != nil {
			return "", "", fmt.Errorf("follow refresh from %s: %w", p.url, err)
		}
		p = np
		seen[p.url.String()] = true
	}
	return p.text, p.url.String(), nil
}

// metaRefreshURL returns the absolute target of a <meta http-equiv="refresh"
// content="N; url=..."> in body, resolved against base. It reports false when
// there is no such element, its content names no URL (a plain reload), or
// the target is not http(s). Elements inside <noscript> are ignored, as a
// browser running scripts ignores them.
func metaRefreshURL(base *url.URL, body string) (*url.URL, bool) {
	z := html.NewTokenizer(strings.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil, false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var refresh bool
			var content string
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "http-equiv":
					refresh = strings.EqualFold(strings.TrimSpace(string(v)), "refresh")
				case "content":
					content = string(v)
				}
			}
			if !refresh {
				continue
			}
			target, ok := webParseRefresh(content)
			if !ok {
				return nil, false
			}
			u, err := base.Parse(target)
			if err != nil || webCheckScheme(u) != nil {
				return nil, false
			}
			return u, true
		}
	}
}

// webParseRefresh extracts the URL of a refresh content value ("5",
// "0; url=/next", "0,URL='next'"), following the WHATWG shared declarative
// refresh steps loosely.
func webParseRefresh(content string) (string, bool) {
	s := strings.TrimLeft(content, " \t\n\f\r")
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return "", false
	}
	s = strings.TrimLeft(s[i:], " \t\n\f\r")
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
	}
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimLeft(s[3:], " \t\n\f\r")
		if rest != "" && rest[0] == '=' {
			s = strings.TrimLeft(rest[1:], " \t\n\f\r")
		}
	}
	if s != "" && (s[0] == '\'' || s[0] == '"') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	s = strings.TrimSpace(s)
	return s, s != ""
}
