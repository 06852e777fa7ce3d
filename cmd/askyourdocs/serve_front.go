package main

import (
	"context"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// The Ask page before the first question names what is indexed and offers
// example questions: questions people rated helpful, then questions made
// from the section headings of the first few files (an FAQ's headings are
// questions already).

// frontInfo is the front page's data.
type frontInfo struct {
	Sources, Chunks int
	// Labels name the first sources; More counts the rest.
	Labels   []string
	More     int
	Examples []string
}

// Front page limits.
const (
	frontLabels   = 8
	frontExamples = 4
	frontFiles    = 3
)

// front collects the front page's data; errors leave parts out (the page
// still asks).
func (s *server) front(ctx context.Context) *frontInfo {
	f := &frontInfo{}
	labels, err := s.sourceLabels(ctx)
	if err != nil {
		return f
	}
	f.Sources = len(labels)
	f.Chunks, _ = s.b.store.chunkCount(ctx)
	paths := make([]string, 0, len(labels))
	for p := range labels {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return labels[paths[i]] < labels[paths[j]] })
	for i, p := range paths {
		if i == frontLabels {
			f.More = len(paths) - i
			break
		}
		f.Labels = append(f.Labels, labels[p])
	}
	seen := map[string]bool{}
	add := func(q string) {
		if k := strings.ToLower(q); !seen[k] && len(f.Examples) < frontExamples {
			seen[k] = true
			f.Examples = append(f.Examples, q)
		}
	}
	if entries, err := feedbackEntries(s.feedback); err == nil {
		for i := len(entries) - 1; i >= 0; i-- {
			if e := entries[i]; e.Rating == ratingUp && e.Confidence != "low" {
				add(e.Question)
			}
		}
	}
	files := 0
	for _, p := range paths {
		if len(f.Examples) >= frontExamples || files == frontFiles {
			break
		}
		if isURL(p) {
			continue
		}
		files++
		for _, h := range fileHeadings(ctx, p) {
			if strings.HasSuffix(h, "?") {
				add(h)
			} else {
				add("What do the documents say about “" + h + "”?")
			}
			if len(f.Examples) >= frontExamples {
				break
			}
		}
	}
	return f
}

// headingCache keeps the example headings of files by path and
// modification time, so the front page reads a file once.
var headingCache = struct {
	sync.Mutex
	m map[string]cachedHeadings
}{m: map[string]cachedHeadings{}}

type cachedHeadings struct {
	mod      time.Time
	headings []string
}

// fileHeadings returns up to two section headings of the file at p that
// make good examples: below the title, 2 to 10 words.
func fileHeadings(ctx context.Context, p string) []string {
	info, err := os.Stat(p)
	if err != nil {
		return nil
	}
	headingCache.Lock()
	c, ok := headingCache.m[p]
	headingCache.Unlock()
	if ok && c.mod.Equal(info.ModTime()) {
		return c.headings
	}
	paras, err := (&askyourdocs.FileSource{Path: p}).Fetch(ctx)
	if err != nil {
		return nil
	}
	var hs []string
	for _, para := range paras {
		if !para.Heading || !strings.Contains(para.Breadcrumb, " > ") {
			continue
		}
		if n := len(strings.Fields(para.Text)); n >= 2 && n <= 10 && utf8.RuneCountInString(para.Text) <= 80 {
			hs = append(hs, para.Text)
		}
		if len(hs) == 2 {
			break
		}
	}
	headingCache.Lock()
	headingCache.m[p] = cachedHeadings{mod: info.ModTime(), headings: hs}
	headingCache.Unlock()
	return hs
}
