package main

import (
	"context"
	"runtime"
	"sync"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// prefetchSlot is one file's extraction, run ahead of the indexing loop.
type prefetchSlot struct {
	read  func(ctx context.Context) ([]askyourdocs.Paragraph, error)
	done  chan struct{} // closed when paras and err are set
	paras []askyourdocs.Paragraph
	err   error
}

// prefetchFiles extracts the files of jobs (not web pages) ahead of the
// indexing loop, which must index jobs in order: GOMAXPROCS workers read
// up to 2 x GOMAXPROCS files ahead while the loop indexes an earlier one,
// so extraction runs in parallel with the store's single writer. Each file
// job's Fetch then returns what its extraction gave (the paragraphs or
// the error), as it would have; the store still writes one source per
// transaction, in order. stop ends the workers; call it when the loop is
// done (no Fetch of these jobs may follow). With one CPU nothing changes.
func prefetchFiles(ctx context.Context, jobs []indexJob) (stop func()) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var slots []*prefetchSlot
	window := make(chan struct{}, 2*workers) // extracted, not yet indexed
	for _, j := range jobs {
		src := j.src
		if src.kind == "web" || src.fetch == nil {
			continue
		}
		sl := &prefetchSlot{read: src.fetch, done: make(chan struct{})}
		slots = append(slots, sl)
		src.fetch = func(c context.Context) ([]askyourdocs.Paragraph, error) {
			select {
			case <-sl.done:
			case <-c.Done():
				return nil, c.Err()
			}
			src.fetch = sl.read // taken once; a second Fetch reads again
			<-window
			return sl.paras, sl.err
		}
	}
	todo := make(chan *prefetchSlot)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sl := range todo {
				sl.paras, sl.err = sl.read(ctx)
				close(sl.done)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(todo)
		for _, sl := range slots {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case todo <- sl:
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
