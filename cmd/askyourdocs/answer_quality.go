package main

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// evidenceScore is the confidence (0-10) of an answer without a reranker:
// the share of the question's keywords found in the quoted sentences of
// the best passage (not anywhere in it: a contents page has every word
// somewhere), capped at 2 when a keyword occurs nowhere in the indexed
// documents (the question is about something they do not cover) and at 3
// when the best passage is a table of contents or an index. Agreement of
// the vector and keyword retrievers on the best passage adds 1.
func (b *backend) evidenceScore(ctx context.Context, question, passage string, top hit) (int, string) {
	kws := askyourdocs.ExtractKeywords(question, cliStopWords)
	if len(kws) == 0 {
		return 0, "the question has no keywords to check"
	}
	quoted := strings.ToLower(askyourdocs.BestExcerptFor(passage, question, 400))
	lowerPassage := strings.ToLower(passage)
	found := 0
	var absent []string
	for _, k := range kws {
		p := keywordPrefix(k)
		switch {
		case strings.Contains(quoted, p):
			found++
		case strings.Contains(lowerPassage, p):
		default:
			// Not in the passage: is it anywhere in the documents?
			// Short words are often question phrasing ("how long").
			if utf8.RuneCountInString(k) < 5 {
				continue
			}
			if docs, err := b.store.keywordSearch(ctx, k, 1); err == nil && len(docs) == 0 {
				absent = append(absent, k)
			}
		}
	}
	score := int(math.Round(10 * float64(found) / float64(len(kws))))
	basis := fmt.Sprintf("%d of %d question terms in the quoted sentences", found, len(kws))
	if top.vectorRank > 0 && top.vectorRank <= 3 && top.keywordRank > 0 && top.keywordRank <= 3 {
		score = min(score+1, 10)
		basis += ", both retrievers agree"
	}
	if len(absent) > 0 {
		score = min(score, 2)
		basis += fmt.Sprintf("; %q occurs nowhere in the documents", strings.Join(absent, ", "))
	}
	if looksLikeTOC(passage) {
		score = min(score, 3)
		basis += "; the best match is a table of contents or an index"
	}
	return score, basis
}

// keywordPrefix is how a keyword is matched: words of more than 5 letters
// by their first 5 (inflections), as BestExcerpt does.
func keywordPrefix(k string) string {
	if r := []rune(k); len(r) > 5 {
		return string(r[:5])
	}
	return k
}

var (
	// tocLine is a contents line: a title followed by a page number.
	tocLine = regexp.MustCompile(`^(\d+(\.\d+)*\.?\s+)?\D.{0,100}?[\s.…]\d{1,4}$`)
	// dotLeader is the dotted leader of a contents line.
	dotLeader = regexp.MustCompile(`(\. ?){4,}|…{2,}`)
	// indexRef is a page reference of a back-of-book index ("kayak, 12").
	indexRef = regexp.MustCompile(`, \d{1,4}(–\d{1,4})?\b`)
)

// looksLikeTOC reports whether text is a table of contents or an index:
// dotted leaders, mostly lines ending in a page number, or many
// ", PAGE" references.
func looksLikeTOC(text string) bool {
	if len(dotLeader.FindAllStringIndex(text, 4)) >= 3 {
		return true
	}
	if len(indexRef.FindAllStringIndex(text, -1)) >= 8 {
		return true
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 5 {
		return false
	}
	n := 0
	for _, l := range lines {
		if tocLine.MatchString(strings.TrimSpace(l)) {
			n++
		}
	}
	return n*10 >= len(lines)*6
}

// isHeadingLine guesses whether a line of a passage is a heading: short,
// without sentence punctuation at its end (a question, as in an FAQ, is
// a heading), followed by more text.
func isHeadingLine(l string) bool {
	l = strings.TrimSpace(l)
	if l == "" || utf8.RuneCountInString(l) > 80 || strings.HasPrefix(l, "- ") || strings.Contains(l, "|") {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(l)
	return !strings.ContainsRune(".!:;,)\"'…", last)
}

// excerptWithHeading returns the best sentences of passage for question
// (BestExcerpt) with the heading of their section on a line of its own
// above them, instead of running into the text.
func excerptWithHeading(passage, question string, maxChars int) string {
	lines := strings.Split(passage, "\n")
	type bodyLine struct {
		start   int // offset in body
		heading string
	}
	var body strings.Builder
	var spans []bodyLine
	heading := ""
	for i, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		if i < len(lines)-1 && isHeadingLine(l) {
			heading = l
			continue
		}
		if body.Len() > 0 {
			body.WriteByte(' ')
		}
		spans = append(spans, bodyLine{start: body.Len(), heading: heading})
		body.WriteString(l)
	}
	if body.Len() == 0 {
		return askyourdocs.BestExcerptFor(passage, question, maxChars)
	}
	ex := askyourdocs.BestExcerptFor(body.String(), question, maxChars)
	probe := strings.TrimSuffix(ex, "…")
	probe = probe[:min(len(probe), 40)]
	at := strings.Index(body.String(), probe)
	h := ""
	for _, s := range spans {
		if at >= 0 && s.start <= at {
			h = s.heading
		}
	}
	if h == "" || strings.HasPrefix(ex, h) {
		return ex
	}
	return h + "\n" + ex
}

// spinner shows that a command is working on a terminal's stderr.
type spinner struct {
	once sync.Once
	done chan struct{}
	wg   sync.WaitGroup
}

// startSpinner starts a spinner with msg on stderr when it is a terminal
// and --quiet is not set; stop it with stop.
func (a *cliApp) startSpinner(msg string) *spinner {
	s := &spinner{done: make(chan struct{})}
	if !isTerminal(a.stderr) || a.quiet {
		return s
	}
	st := newStyle(a.stderr, a)
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(a.stderr, "\r\033[K%s %s", st.cyan(frames[i%len(frames)]), msg)
			select {
			case <-s.done:
				fmt.Fprint(a.stderr, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop clears the spinner; it may be called more than once.
func (s *spinner) stop() {
	s.once.Do(func() { close(s.done) })
	s.wg.Wait()
}
