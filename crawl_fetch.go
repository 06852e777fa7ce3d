package engine

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// crawlTask is a URL waiting to be fetched.
type crawlTask struct {
	url   *url.URL
	key   string
	depth int
	seed  bool
	seq   int // dispatch order
}

// crawlFetched is a worker's answer for a task.
type crawlFetched struct {
	task crawlTask
	page *fetchedPage
	err  error
	prep *crawlPrepared // nil unless page is a 2xx HTML page
}

// crawlPrepared is what a worker derives from a fetched HTML page, so that
// the CPU work runs in parallel; the decisions that need the crawl's state
// are made in order by process.
type crawlPrepared struct {
	textErr  error    // decoding the body failed
	refresh  *url.URL // <meta refresh> target, if any
	links    crawlLinks
	paras    []Paragraph // nil for noindex pages
	parseErr error
}

// crawlPrepare decodes and parses a fetched page; nil when it is not a 2xx
// HTML page.
func crawlPrepare(page *fetchedPage) *crawlPrepared {
	if page == nil || page.StatusCode < 200 || page.StatusCode > 299 || !crawlIsHTML(page) {
		return nil
	}
	p := &crawlPrepared{}
	text, err := page.text()
	if err != nil {
		p.textErr = err
		return p
	}
	p.refresh, _ = metaRefreshURL(page.URL, text)
	p.links = crawlExtractLinks(page.URL, text)
	if !p.links.noindex {
		p.paras, p.parseErr = HTMLToStructuredText(strings.NewReader(text))
	}
	return p
}

// fetchAll runs the fetch phase: a bounded worker pool fetches tasks in
// frontier order, and results are processed strictly in that order.
func (c *crawlRun) fetchAll(ctx context.Context) error {
	tasks := make(chan crawlTask, c.opts.workers)
	results := make(chan crawlFetched, c.opts.workers)
	var wg sync.WaitGroup
	for range c.opts.workers {
		wg.Go(func() {
			for t := range tasks {
				page, err := c.fetchOne(ctx, t)
				var prep *crawlPrepared
				if err == nil {
					prep = crawlPrepare(page)
				}
				results <- crawlFetched{task: t, page: page, err: err, prep: prep}
			}
		})
	}
	defer func() {
		close(tasks)
		go func() { // drain answers of fetches still running
			for range results {
			}
		}()
		wg.Wait()
		close(results)
	}()

	var (
		inflight, next int
		pending        = make(map[int]crawlFetched)
	)
	for {
		for inflight < c.opts.workers && c.dispatched < c.cfg.MaxPages && len(c.frontier) > 0 {
			t := c.frontier[0]
			c.frontier[0] = crawlTask{}
			c.frontier = c.frontier[1:]
			t.seq = c.dispatched
			c.dispatched++
			inflight++
			tasks <- t
		}
		if inflight == 0 {
			if c.revisitKnown() {
				continue
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("crawl: %w", ctx.Err())
		case r := <-results:
			inflight--
			pending[r.task.seq] = r
			for {
				r, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				c.process(ctx, r)
			}
		}
	}
}

// fetchOne fetches one task, waiting for the host's politeness slot.
func (c *crawlRun) fetchOne(ctx context.Context, t crawlTask) (*fetchedPage, error) {
	if p := c.unchanged(t); p != nil {
		return p, nil
	}
	if err := c.gate.wait(ctx, c.host); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithTimeout(ctx, c.opts.pageTimeout)
	defer cancel()
	opts := fetchOptions{allowRedirect: func(from, to *url.URL) error {
		n, _ := crawlNormalize(to)
		switch {
		case n.Host != c.host:
			return fmt.Errorf("%w: %s", errCrawlOffHost, to.Host)
		case !t.seed && !c.inScope(n):
			return errCrawlOffScope
		case !c.robots.allowed(crawlPathQuery(n)):
			return errCrawlRobots
		}
		return nil
	}}
	c.conditional(t, &opts)
	page, err := c.opts.fetch(fctx, t.url.String(), opts)
	if err != nil && fctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return nil, fmt.Errorf("timed out after %v: %w", c.opts.pageTimeout, err)
	}
	return page, err
}

// crawlIsHTML reports whether a fetched page is HTML, by its Content-Type or,
// without one, by sniffing.
func crawlIsHTML(p *fetchedPage) bool {
	ct := p.ContentType
	if strings.TrimSpace(ct) == "" {
		ct = http.DetectContentType(p.Body)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// crawlPoliteness spaces the request starts to each host by delay, across
// all workers.
type crawlPoliteness struct {
	delay time.Duration
	mu    sync.Mutex
	next  map[string]time.Time // earliest start of the next request per host
}

// wait blocks until a request to host may start, or ctx ends.
func (p *crawlPoliteness) wait(ctx context.Context, host string) error {
	if p.delay <= 0 {
		return ctx.Err()
	}
	p.mu.Lock()
	now := time.Now()
	start := p.next[host]
	if start.Before(now) {
		start = now
	}
	p.next[host] = start.Add(p.delay)
	p.mu.Unlock()
	d := time.Until(start)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
