package main

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// recrawlKey is the lease key (and /api/watch entry) of serve --recrawl.
const recrawlKey = "recrawl"

// recrawlLoop re-indexes serve's web sources every w.recrawl until ctx
// ends (serve --recrawl EVERY).
func (w *serveWatch) recrawlLoop(ctx context.Context) {
	tick := time.NewTicker(w.recrawl)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := w.recrawlOnce(ctx)
		w.mu.Lock()
		st := w.state[recrawlKey]
		st.LastSync, st.LastErr = time.Now().UTC(), ""
		if err != nil {
			st.LastErr = err.Error()
		}
		w.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			slog.Warn("serve --recrawl: a re-crawl failed; the next period retries", "err", err)
		}
	}
}

// recrawlOnce re-indexes the web sources once, as jobs: each crawl (its
// pages share their first seed as source) from that seed with room for
// its pages, and the pages indexed alone in one job. Unchanged chunks are
// not embedded again; a page that now answers 404 or 410 leaves the
// index; a 5xx keeps it.
func (w *serveWatch) recrawlOnce(ctx context.Context) error {
	srcs, err := w.s.b.store.Sources(ctx)
	if err != nil {
		return err
	}
	pagesOf := map[string]int{} // crawl seed -> its pages
	var singles []string
	for _, src := range srcs {
		switch {
		case !isURL(src.URL):
		case src.Source == src.URL || src.Source == "":
			singles = append(singles, src.URL)
		case isURL(src.Source):
			pagesOf[src.Source]++
		}
	}
	var inputs []indexInput
	if len(singles) > 0 {
		slices.Sort(singles)
		inputs = append(inputs, indexInput{URLs: singles})
	}
	seeds := make([]string, 0, len(pagesOf))
	for seed := range pagesOf {
		seeds = append(seeds, seed)
	}
	slices.Sort(seeds)
	for _, seed := range seeds {
		pages := min(max(defaultServeCrawlPages, pagesOf[seed]+pagesOf[seed]/5+10), maxServeCrawlPages)
		inputs = append(inputs, indexInput{URLs: []string{seed}, Crawl: true, MaxPages: pages})
	}
	for _, in := range inputs {
		kind := "index"
		if in.Crawl {
			kind = "crawl"
		}
		job, err := w.s.jobs.EnqueueInput(ctx, kind, in)
		if err != nil {
			return err
		}
		if _, err := w.s.jobs.Wait(ctx, job.ID); err != nil {
			return err
		}
	}
	return nil
}
