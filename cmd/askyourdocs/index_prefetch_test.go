package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestPrefetchFilesKeepsEachResult checks that prefetched jobs return
// their own extraction's paragraphs or error, each file read once, web
// pages left to the loop, and that a second Fetch reads the file again.
func TestPrefetchFilesKeepsEachResult(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	var reads [40]atomic.Int32
	var jobs []indexJob
	for i := range reads {
		src := &docSource{url: fmt.Sprintf("/f%d", i), kind: "html"}
		if i%7 == 3 {
			src.kind = "web"
		}
		src.fetch = func(ctx context.Context) ([]askyourdocs.Paragraph, error) {
			reads[i].Add(1)
			if i%5 == 0 {
				return nil, fmt.Errorf("file %d is broken", i)
			}
			return []askyourdocs.Paragraph{{Text: fmt.Sprintf("text %d", i)}}, nil
		}
		jobs = append(jobs, indexJob{display: src.url, src: src})
	}
	stop := prefetchFiles(context.Background(), jobs)
	for i, j := range jobs {
		paras, err := j.src.Fetch(context.Background())
		switch {
		case i%5 == 0:
			if err == nil || err.Error() != fmt.Sprintf("file %d is broken", i) {
				t.Errorf("job %d: error %v", i, err)
			}
		case err != nil || len(paras) != 1 || paras[0].Text != fmt.Sprintf("text %d", i):
			t.Errorf("job %d: %v, %v", i, paras, err)
		}
	}
	stop()
	for i := range reads {
		if n := reads[i].Load(); n != 1 {
			t.Errorf("job %d read %d times", i, n)
		}
	}
	if _, err := jobs[1].src.Fetch(context.Background()); err != nil || reads[1].Load() != 2 {
		t.Errorf("second Fetch: %v, %d reads", err, reads[1].Load())
	}
	// A cancelled loop gets the context's error, and stop returns.
	jobs = jobs[:3]
	for _, j := range jobs {
		j.src.fetch = func(ctx context.Context) ([]askyourdocs.Paragraph, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop = prefetchFiles(ctx, jobs)
	cancel()
	if _, err := jobs[0].src.Fetch(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	stop()
}
