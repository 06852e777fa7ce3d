package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Confidence thresholds of evidenceConfidence (0-10 scale, the scale of
// ConfidenceLabelWithOptions). They are guesses checked by hand on the dev sets,
// not calibrated; calibrate them here, in one place.
const (
	// confidenceAbsentCap caps the score when a question keyword occurs
	// nowhere in the index: the documents do not cover the question.
	confidenceAbsentCap = 2
	// confidenceContentsCap caps the score when the passage is a table of
	// contents or an index.
	confidenceContentsCap = 3
	// confidenceAgreeRank is the rank both lists must place a chunk within
	// for their agreement to add confidenceAgreeBonus.
	confidenceAgreeRank  = 3
	confidenceAgreeBonus = 1
	// confidenceAbsentMinRunes is the shortest keyword checked for absence
	// from the index: shorter words are often phrasing ("how long").
	confidenceAbsentMinRunes = 5
)

// confidenceChecker computes evidenceConfidence for the hits of one
// search, remembering which keywords the index lacks.
type confidenceChecker struct {
	s        Searcher
	question string
	keywords []string
	absent   map[string]bool // keyword -> found nowhere (checked ones only)
	// cands are the texts of the search's candidates, lowered lazily
	// into seen: a keyword in one of them is in the index, no query
	// needed.
	cands, seen []string
}

// evidenceConfidence is the confidence (0-10) that passage answers the
// question, without a reranker: the share of the question's keywords found
// in the passage's best sentences (BestExcerptWithOptions; not anywhere in it: a
// contents page has every word somewhere), plus confidenceAgreeBonus when
// the vector and keyword lists both rank the chunk within
// confidenceAgreeRank, capped at confidenceAbsentCap when a keyword of the
// question occurs nowhere in the index and at confidenceContentsCap when
// the passage looks like a table of contents or an index (contents, the
// caller's looksLikeContents of passage). It returns the score and a
// one-line basis for people.
func (c *confidenceChecker) evidenceConfidence(ctx context.Context, passage string, contents bool, vectorRank, textRank int) (int, string) {
	if len(c.keywords) == 0 {
		return 0, "the question has no keywords to check"
	}
	quoted := strings.ToLower(BestExcerptWithOptions(passage, &ExcerptOptions{Query: c.question, MaxChars: 400}))
	lowerPassage, lowered := "", false // lowered when a keyword is not quoted
	found := 0
	var absent []string
	for _, k := range c.keywords {
		p := confidencePrefix(k)
		if strings.Contains(quoted, p) {
			found++
			continue
		}
		if !lowered {
			lowerPassage, lowered = strings.ToLower(passage), true
		}
		if !strings.Contains(lowerPassage, p) && utf8.RuneCountInString(k) >= confidenceAbsentMinRunes && c.nowhere(ctx, k) {
			absent = append(absent, k)
		}
	}
	score := int(math.Round(10 * float64(found) / float64(len(c.keywords))))
	basis := fmt.Sprintf("%d of %d question terms in the quoted sentences", found, len(c.keywords))
	if vectorRank > 0 && vectorRank <= confidenceAgreeRank && textRank > 0 && textRank <= confidenceAgreeRank {
		score = min(score+confidenceAgreeBonus, 10)
		basis += ", both retrievers agree"
	}
	if len(absent) > 0 {
		score = min(score, confidenceAbsentCap)
		basis += fmt.Sprintf("; %q occurs nowhere in the documents", strings.Join(absent, ", "))
	}
	if contents {
		score = min(score, confidenceContentsCap)
		basis += "; the best match is a table of contents or an index"
	}
	return score, basis
}

// headingKeywords counts the question's keywords (matched as
// confidencePrefix) in a hit's heading: its section (breadcrumb) and the
// first line of its text.
func (c *confidenceChecker) headingKeywords(section, text string) int {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	h := strings.ToLower(section + "\n" + first)
	n := 0
	for _, k := range c.keywords {
		if strings.Contains(h, confidencePrefix(k)) {
			n++
		}
	}
	return n
}

// nowhere reports whether keyword k matches no chunk at all (a failed
// lookup counts as found: it must not lower the confidence).
func (c *confidenceChecker) nowhere(ctx context.Context, k string) bool {
	if v, ok := c.absent[k]; ok {
		return v
	}
	if c.seen == nil {
		c.seen = make([]string, len(c.cands))
		for i, t := range c.cands {
			c.seen[i] = strings.ToLower(t)
		}
	}
	p := confidencePrefix(k)
	for _, t := range c.seen {
		if strings.Contains(t, p) {
			c.absent[k] = false
			return false
		}
	}
	docs, err := c.s.SearchText(ctx, k, 1, nil)
	c.absent[k] = err == nil && len(docs) == 0
	return c.absent[k]
}

// confidencePrefix is how a keyword is matched: words of more than 5
// letters by their first 5 (inflections), as BestExcerptWithOptions does.
func confidencePrefix(k string) string {
	if r := []rune(k); len(r) > 5 {
		return string(r[:5])
	}
	return k
}

var (
	// contentsLine is a contents line: a title followed by a page number.
	contentsLine = lazyRegexp(`^(\d+(\.\d+)*\.?\s+)?\D.{0,100}?[\s.…]\d{1,4}$`)
	// contentsLeader is the dotted leader of a contents line.
	contentsLeader = lazyRegexp(`(\. ?){4,}|…{2,}`)
	// contentsIndexRef is a page reference of a back-of-book index
	// ("kayak, 12").
	contentsIndexRef = lazyRegexp(`, \d{1,4}(–\d{1,4})?\b`)
)

// looksLikeContents reports whether text is a table of contents or an
// index: dotted leaders, mostly lines ending in a page number, or many
// ", PAGE" references. Each pattern runs only where a cheap test of the
// text says it can match (docs/retrieval.md, Speed).
func looksLikeContents(text string) bool {
	if contentsMayLead(text) && len(contentsLeader().FindAllStringIndex(text, 4)) >= 3 {
		return true
	}
	if contentsRefCandidates(text) >= 8 && len(contentsIndexRef().FindAllStringIndex(text, -1)) >= 8 {
		return true
	}
	if contentsEntries(text) {
		return true
	}
	text = strings.TrimSpace(text)
	lines := strings.Count(text, "\n") + 1
	if lines < 5 {
		return false
	}
	n := 0
	for l := range strings.SplitSeq(text, "\n") {
		// contentsLine ends in a digit: other lines need no match.
		if l = strings.TrimSpace(l); l != "" && isASCIIDigit(l[len(l)-1]) && contentsLine().MatchString(l) {
			n++
		}
	}
	return n*10 >= lines*6
}

// contentsEntryLines is the fewest lines of a web page's contents list
// (contentsEntries).
const contentsEntryLines = 8

// contentsEntries reports whether text is a web page's table of contents
// (a Sphinx toctree, a DocBook or texinfo contents page, an FAQ's list of
// questions, a MkDocs navigation): at least contentsEntryLines lines, of
// which 80% are entries: titles of at most 90 characters, as list items
// or numbered or not, with no sentence inside and none ending in ".", ",",
// ";" or ":", and not code (looksLikeCode).
func contentsEntries(text string) bool {
	lines, entries := 0, 0
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		lines++
		if utf8.RuneCountInString(l) > 90 || strings.Contains(l, ". ") || looksLikeCode(l) {
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(l)
		if !strings.ContainsRune(".,;:", last) {
			entries++
		}
	}
	return lines >= contentsEntryLines && entries*10 >= lines*8
}

// contentsMayLead reports whether text can hold a contentsLeader match:
// every one holds "..", ". ." or "……".
func contentsMayLead(text string) bool {
	return strings.Contains(text, "..") || strings.Contains(text, ". .") || strings.Contains(text, "……")
}

// contentsRefCandidates counts the places a contentsIndexRef match can
// start at (", " and a digit), at least its number of matches.
func contentsRefCandidates(text string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(text[i:], ", ")
		if j < 0 {
			return n
		}
		i += j + 2
		if i < len(text) && isASCIIDigit(text[i]) {
			n++
		}
	}
}

// isASCIIDigit reports whether b is 0-9 (regexp's \d).
func isASCIIDigit(b byte) bool { return '0' <= b && b <= '9' }

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
// (BestExcerptWithOptions, at most maxChars characters) with the heading of their
// section on a line of its own above them, instead of running into the
// text: Excerpt with ExcerptOptions.Heading. The quote ends with its
// section, so the heading above it holds for all of it.
func excerptWithHeading(passage, question string, maxChars int) string {
	lines := strings.Split(passage, "\n")
	type bodyLine struct {
		start   int // offset in body
		heading string
		section int // how many heading lines precede it
	}
	var body strings.Builder
	var spans []bodyLine
	heading, section := "", 0
	for i, l := range lines {
		l = joinFields(l)
		if l == "" {
			continue
		}
		if i < len(lines)-1 && isHeadingLine(l) {
			heading = l
			section++
			continue
		}
		if body.Len() > 0 {
			body.WriteByte(' ')
		}
		spans = append(spans, bodyLine{start: body.Len(), heading: heading, section: section})
		body.WriteString(l)
	}
	if body.Len() == 0 {
		return BestExcerptWithOptions(passage, &ExcerptOptions{Query: question, MaxChars: maxChars})
	}
	text := body.String()
	ex := BestExcerptWithOptions(text, &ExcerptOptions{Query: question, MaxChars: maxChars})
	probe := strings.TrimSuffix(ex, "…")
	probe = probe[:min(len(probe), 40)]
	at := strings.Index(text, probe)
	h, in := "", -1
	for i, s := range spans {
		if at >= 0 && s.start <= at {
			h, in = s.heading, i
		}
	}
	if in >= 0 {
		// Quote again from the quote's section alone when the quote ran
		// on into the next one.
		from, to := in, in
		for from > 0 && spans[from-1].section == spans[in].section {
			from--
		}
		for to+1 < len(spans) && spans[to+1].section == spans[in].section {
			to++
		}
		end := len(text)
		if to+1 < len(spans) {
			end = spans[to+1].start - 1
		}
		if at+len(strings.TrimSuffix(ex, "…")) > end {
			ex = BestExcerptWithOptions(text[spans[from].start:end], &ExcerptOptions{Query: question, MaxChars: maxChars})
		}
	}
	if h == "" || strings.HasPrefix(ex, h) {
		return ex
	}
	return h + "\n" + ex
}
