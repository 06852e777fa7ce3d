package engine

import "context"

// FetcherOptions are a Fetcher's limits and private-target policy. The zero
// value (or nil) gives the defaults: 10 MiB pages, private targets refused.
type FetcherOptions struct {
	// MaxPageBytes is the most bytes of a (decoded) page body read; a larger
	// body is an error wrapping ErrPageTooLarge. <= 0 means 10 MiB.
	MaxPageBytes int64
	// AllowPrivateTargets turns the private-address guard off (see
	// SetAllowPrivateTargets for what that means for proxies).
	AllowPrivateTargets bool
}

// Fetcher fetches web pages with its own limits and private-target policy;
// FetchWebPage and RunCrawl use a default one, whose settings
// SetMaxPageBytes and SetAllowPrivateTargets write (CrawlInput.Fetcher
// gives RunCrawl another). A Fetcher is safe for concurrent use; it owns
// its idle connections.
type Fetcher struct{ w *webFetcher }

// NewFetcher returns a Fetcher with the options o (nil: the defaults).
func NewFetcher(o *FetcherOptions) *Fetcher {
	w := newWebFetcher(webFetcherDeps{})
	if o != nil {
		w.maxBytes.Store(max(o.MaxPageBytes, 0))
		w.allow.Store(o.AllowPrivateTargets)
	}
	return &Fetcher{w: w}
}

// FetchWebPage returns the page at url as UTF-8 text (usually HTML, for
// HTMLToStructuredText), giving up when ctx ends. Unless f allows private
// targets it refuses them (the error wraps ErrPrivateTarget, also for
// redirect hops and DNS answers); it follows at most 10 redirects (http and
// https only) and reads at most f's page limit (a larger page wraps
// ErrPageTooLarge). A status other than 2xx is an error wrapping an
// *HTTPStatusError; a Content-Type that is neither text nor (X)HTML/XML is
// an error too. The charset comes from the Content-Type header, a <meta
// charset> or sniffing. Requests carry the User-Agent
// "askyourdocs/1.0 (+https://github.com/dbis-ilm/askyourdocs)".
func (f *Fetcher) FetchWebPage(ctx context.Context, url string) (string, error) {
	return f.w.fetchWebPage(ctx, url)
}

// FetchWebPageFollowingRefresh is FetchWebPage for sites that answer with a
// <meta http-equiv="refresh" content="0; url=..."> stub instead of an HTTP
// redirect: as long as the fetched page's refresh points to another URL on
// the same host name, it fetches that URL, at most 5 times (a refresh loop
// stops at the first repeated URL). It returns the last page fetched and
// the URL it came from (after redirects). A refresh to another host is not
// followed: the stub itself is returned. Errors are FetchWebPage's.
func (f *Fetcher) FetchWebPageFollowingRefresh(ctx context.Context, url string) (page, from string, err error) {
	return f.w.fetchFollowingRefresh(ctx, url)
}
