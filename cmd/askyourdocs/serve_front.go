package main

import (
	"context"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
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
// make good examples: below the title, and topics (topicHeading).
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
		if topicHeading(para.Text) {
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

// frontMatterHeadings are headings of a document's apparatus, not of a
// topic a person would ask about (lower case).
var frontMatterHeadings = map[string]bool{
	"contents": true, "table of contents": true, "index": true, "revision history": true, "document history": true,
	"change history": true, "changelog": true, "copyright": true, "license": true, "licence": true, "legal notice": true,
	"authors": true, "author": true, "contributors": true, "credits": true, "acknowledgements": true,
	"acknowledgments": true, "preface": true, "foreword": true, "colophon": true, "references": true,
	"bibliography": true, "glossary": true, "see also": true, "about this document": true, "about this manual": true,
	"further reading": true, "list of figures": true, "list of tables": true,
	"改訂履歴": true, "変更履歴": true, "参考文献": true, "著作権": true, "はじめに": true, "修订历史": true, "参考资料": true,
	"版权声明": true, "許可協議": true, "修訂歷史": true, "參考文獻": true,
}

// topicHeading reports whether a section heading reads as a topic to
// suggest on the front page: 2 to 10 words (a Chinese or Japanese heading,
// written without spaces: 3 to 30 characters), at most 80 characters, not
// the apparatus (frontMatterHeadings: "REVISION HISTORY", "Authors"), not
// shouting in capitals, and not a list of names (two or more commas).
func topicHeading(text string) bool {
	text = strings.TrimSpace(text)
	n := utf8.RuneCountInString(text)
	if n > 80 || strings.Count(text, ",")+strings.Count(text, "、") >= 2 {
		return false
	}
	words := len(strings.Fields(text))
	cjk := 0
	for _, r := range text {
		if wideRune(r) {
			cjk++
		}
	}
	switch {
	case cjk*2 >= n:
		if n < 3 || n > 30 {
			return false
		}
	case words < 2 || words > 10:
		return false
	}
	lower := strings.ToLower(strings.Trim(text, " .:"))
	if frontMatterHeadings[lower] {
		return false
	}
	letters, upper := 0, 0
	for _, r := range text {
		if unicode.IsLetter(r) && !wideRune(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	return letters < 4 || upper*10 < letters*8 // all capitals shout a label ("REVISION HISTORY")
}
