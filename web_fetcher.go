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

// Fetcher fetches web pages with its own limits and private-target policy,
// as FetchWebPageContext does with the default Fetcher's (which
// SetMaxPageBytes and SetAllowPrivateTargets write, and RunCrawl uses). A
// Fetcher is safe for concurrent use; it owns its idle connections.
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

// FetchWebPage returns the page at url as UTF-8 text, giving up when ctx
// ends; errors and behaviour are FetchWebPageContext's, with f's limits.
func (f *Fetcher) FetchWebPage(ctx context.Context, url string) (string, error) {
	return f.w.fetchWebPage(ctx, url)
}
