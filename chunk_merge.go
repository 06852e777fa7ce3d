package engine

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Small-section merging for BuildChunks. A manual's reference page is often
// a heading and a sentence per parameter; as sections of their own they
// become tiny chunks that lose to longer ones on every count and give the
// reader no context. Before chunking, runs of neighbouring small sections
// are merged into one section of at most the chunk size whose breadcrumb is
// their common parent; the headings inside stay as lines of the text.

// chunkMinFraction: a section shorter than maxSize/chunkMinFraction runes
// (200 of the default 1200) is small. Small sections are merged with their
// neighbours when they fit in a chunk together, and a run of sections still
// that small is merged into its neighbour anyway, so no chunk is that short
// unless its whole document is.
const chunkMinFraction = 6

// chunkSpan is a section of the paragraphs BuildChunks was given, found by
// the same rule as chunkBuilder.run: paragraphs [start, end), size runes of
// text (paragraphs joined by one character), breadcrumb crumb.
type chunkSpan struct {
	start, end int
	size       int
	crumb      string
}

// chunkSpans splits paras into sections as chunkBuilder.run does.
func chunkSpans(paras []Paragraph) []chunkSpan {
	var spans []chunkSpan
	cur := chunkSpan{start: -1}
	sawBody, bodyPath, lastHead := false, "", -1
	closeSpan := func(end int) {
		cur.end = end
		if lastHead >= 0 {
			cur.crumb = paras[lastHead].Breadcrumb
			if cur.crumb == "" {
				cur.crumb = NormalizeSpaces(paras[lastHead].Text)
			}
		} else {
			cur.crumb = paras[cur.start].Breadcrumb
		}
		spans = append(spans, cur)
	}
	for i := range paras {
		p := &paras[i]
		n := utf8.RuneCountInString(strings.TrimSpace(p.Text))
		if n == 0 {
			continue
		}
		if cur.start >= 0 && sawBody && (p.Heading || p.Breadcrumb != bodyPath) {
			closeSpan(i)
			cur = chunkSpan{start: -1}
			sawBody, lastHead = false, -1
		}
		if cur.start < 0 {
			cur.start = i
		} else {
			cur.size++
		}
		cur.size += n
		if p.Heading {
			lastHead = i
		} else if !sawBody {
			sawBody, bodyPath = true, p.Breadcrumb
		}
	}
	if cur.start >= 0 {
		closeSpan(len(paras))
	}
	return spans
}

// mergeSmallSections returns paras with runs of small neighbouring sections
// merged: a section is added to the run before it while one of the two is
// smaller than maxSize/chunkMinFraction runes and both fit in maxSize runes
// together (a small section after a large run starts a new run instead
// when it can join the small section after it); a run still that short
// joins the run before it
// (or, for the first, the one after) even if that makes it longer than a
// chunk. In a merged run the first paragraph, when it is a heading, stays
// the run's heading; every other heading becomes a plain line; and every
// paragraph gets the run's breadcrumb: the longest common prefix (whole
// elements) of its sections' breadcrumbs, or, when one section holds more
// than two thirds of the run, that section's breadcrumb (keyword ranking
// weighs breadcrumb terms, and the chunk is about that section). paras itself is not modified; it
// is returned as is when nothing merges or maxSize <= 0.
//
// merged marks, by paragraph, the headings of a merged run whose own
// breadcrumb is not the run's (the headings the chunk's breadcrumb no
// longer names; they become the chunk's Headings); it is nil when nothing
// merges.
func mergeSmallSections(paras []Paragraph, maxSize int) (out []Paragraph, merged []bool) {
	if maxSize <= 0 {
		return paras, nil
	}
	spans := chunkSpans(paras)
	if len(spans) < 2 {
		return paras, nil
	}
	small := maxSize / chunkMinFraction
	// Runs of sections, as index ranges into spans.
	type run struct{ first, last, size int }
	var runs []run
	for i, s := range spans {
		if n := len(runs); n > 0 {
			r := &runs[n-1]
			fits := (r.size < small || s.size < small) && r.size+1+s.size <= maxSize
			// A small section after a large run goes with the small ones
			// after it, if it can: siblings rather than the section before.
			if fits && r.size >= small && i+1 < len(spans) && spans[i+1].size < small && s.size+1+spans[i+1].size <= maxSize {
				fits = false
			}
			if fits {
				r.last, r.size = i, r.size+1+s.size
				continue
			}
		}
		runs = append(runs, run{first: i, last: i, size: s.size})
	}
	// Runs still too short join a neighbour regardless of size.
	for i := 0; i < len(runs) && len(runs) > 1; {
		r := runs[i]
		if r.size >= small {
			i++
			continue
		}
		j := i - 1
		if i == 0 {
			j = 1
		}
		lo, hi := min(i, j), max(i, j)
		runs[lo] = run{first: runs[lo].first, last: runs[hi].last, size: runs[lo].size + 1 + runs[hi].size}
		runs = append(runs[:hi], runs[hi+1:]...)
		i = lo
	}
	if len(runs) == len(spans) {
		return paras, nil
	}
	out = make([]Paragraph, len(paras))
	copy(out, paras)
	merged = make([]bool, len(paras))
	for _, r := range runs {
		if r.first == r.last {
			continue
		}
		crumb, big := spans[r.first].crumb, r.first
		for k := r.first + 1; k <= r.last; k++ {
			crumb = chunkCommonCrumb(crumb, spans[k].crumb)
			if spans[k].size > spans[big].size {
				big = k
			}
		}
		if 3*spans[big].size > 2*r.size {
			// Small sections absorbed by a large one: the chunk is about
			// the large one and keeps its breadcrumb.
			crumb = spans[big].crumb
		}
		start, end := spans[r.first].start, spans[r.last].end
		for k := start; k < end; k++ {
			if out[k].Heading {
				own := out[k].Breadcrumb
				if own == "" {
					own = NormalizeSpaces(out[k].Text)
				}
				merged[k] = own != crumb
			}
			out[k].Heading = k == start && out[k].Heading
			out[k].Breadcrumb = crumb
		}
	}
	return out, merged
}

// chunkHeadings returns the Headings of a chunk lying on paragraphs
// pLo..pHi of sec: the text of each merged heading among them, one per
// line.
func chunkHeadings(sec []chunkPara, pLo, pHi int) string {
	var hs []string
	for p := pLo; p <= pHi; p++ {
		if sec[p].merged {
			hs = append(hs, sec[p].text)
		}
	}
	return strings.Join(hs, "\n")
}

// chunkCommonCrumb returns the longest common prefix of two breadcrumbs in
// whole " > "-separated elements.
func chunkCommonCrumb(a, b string) string {
	if a == b {
		return a
	}
	n := 0
	for {
		ia := strings.Index(a[n:], " > ")
		ib := strings.Index(b[n:], " > ")
		var ea, eb string
		if ia < 0 {
			ea = a[n:]
		} else {
			ea = a[n : n+ia]
		}
		if ib < 0 {
			eb = b[n:]
		} else {
			eb = b[n : n+ib]
		}
		if ea != eb {
			if n == 0 {
				return ""
			}
			return a[:n-3]
		}
		if ia < 0 || ib < 0 {
			return a[:n+len(ea)]
		}
		n += ia + 3
	}
}

// sectionWithTail chunks one section (chunkBuilder.section) and then
// lengthens its last chunk when the section made more than one and the last
// is shorter than maxSize/chunkMinFraction runes (a few words after the
// previous chunk): its text then starts earlier, at the first word start
// that makes it that long (but still after the previous chunk's start),
// repeating more of the previous chunk than the overlap would. Its Pages
// become those of both chunks.
func (cb *chunkBuilder) sectionWithTail(sec []chunkPara) {
	first := len(cb.chunks)
	cb.section(sec)
	last := len(cb.chunks) - 1
	if cb.maxSize <= 0 || last-first < 1 {
		return
	}
	c, prev := &cb.chunks[last], &cb.chunks[last-1]
	short := cb.maxSize / chunkMinFraction
	n := utf8.RuneCountInString(c.Text)
	if n >= short || !strings.HasSuffix(c.ParentText, c.Text) {
		return
	}
	pt := c.ParentText // ends where the section ends, as c does
	k := len(pt) - len(c.Text)
	// The previous chunk starts len(prev.Text) minus their shared overlap
	// before c.
	shared := 0
	for l := min(len(prev.Text), len(c.Text)); l > 0; l-- {
		if strings.HasSuffix(prev.Text, c.Text[:l]) {
			shared = l
			break
		}
	}
	floor := k - (len(prev.Text) - shared) + 1
	for ; k > 0 && n < short; n++ {
		_, size := utf8.DecodeLastRuneInString(pt[:k])
		k -= size
	}
	for k > 0 && !chunkSep(pt[k-1]) {
		_, size := utf8.DecodeLastRuneInString(pt[:k])
		k -= size
		n++
	}
	if n > cb.maxSize || k < floor {
		return // an over-long word, or a short previous chunk: leave the chunk as it is
	}
	c.Text = pt[k:]
	c.Pages = chunkPagesUnion(prev.Pages, c.Pages)
	c.Headings = chunkTailHeadings(prev.Headings, c.Headings, c.Text)
}

// chunkTailHeadings returns the Headings of a lengthened tail chunk: those
// of the previous chunk whose line the tail's text now holds, then its
// own (prev and own are Headings values, one heading per line).
func chunkTailHeadings(prev, own, text string) string {
	if prev == "" {
		return own
	}
	var hs []string
	for h := range strings.SplitSeq(prev, "\n") {
		if strings.HasPrefix(text, h+"\n") || strings.Contains(text, "\n"+h+"\n") || strings.HasSuffix(text, "\n"+h) {
			hs = append(hs, h)
		}
	}
	for h := range strings.SplitSeq(own, "\n") {
		if h != "" && !slices.Contains(hs, h) {
			hs = append(hs, h)
		}
	}
	return strings.Join(hs, "\n")
}

// chunkPagesUnion returns the page range covering the Pages strings a and
// b ("3", "3-4" or "").
func chunkPagesUnion(a, b string) string {
	alo, ahi, aok := chunkPageRange(a)
	blo, bhi, bok := chunkPageRange(b)
	switch {
	case !aok:
		return b
	case !bok:
		return a
	}
	lo, hi := min(alo, blo), max(ahi, bhi)
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
}

// chunkPageRange parses a Pages string.
func chunkPageRange(s string) (lo, hi int, ok bool) {
	l, h, found := strings.Cut(s, "-")
	lo, err := strconv.Atoi(l)
	if err != nil {
		return 0, 0, false
	}
	if !found {
		return lo, lo, true
	}
	hi, err = strconv.Atoi(h)
	if err != nil {
		return 0, 0, false
	}
	return lo, hi, true
}
