package engine

import (
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the machinery of BuildChunks (document.go). A section is
// chunked one of two ways with identical results: sections of plain ASCII
// text (the common case) by scanning the section text itself, where byte
// offsets are rune offsets; all others through an array of words with their
// byte and rune offsets. TestChunkPathsAgree checks they agree.

// chunkBuilder holds BuildChunks' settings, its output and scratch space
// reused from section to section.
type chunkBuilder struct {
	maxSize, overlap, parentSize int
	chunks                       []Chunk
	words                        []chunkWord // word path: the section's words
	paraStart                    []int       // byte offset of each paragraph in the section text
	forceWords                   bool        // tests: never take the ASCII path
	pagesLo, pagesHi             int         // the page range of the last chunk
	pages                        string      // and its Pages string
	merged                       []bool      // headings merged under another breadcrumb (mergeSmallSections), by paragraph; nil if none
}

// chunkPara is a non-empty paragraph of the section being built.
type chunkPara struct {
	p      *Paragraph
	text   string // normalised text
	runes  int    // length of text in runes
	simple bool   // ASCII, no word longer than maxSize
	merged bool   // a heading merged under another breadcrumb: one of the chunk's Headings
}

// chunkWord is one word (or piece of an over-long word) of a section's
// text. Offsets are int32 to keep the slice small (sections stay below
// 1 GiB, see chunkMaxSection).
type chunkWord struct {
	start, end         int32 // byte offsets in the section text
	runeStart, runeEnd int32 // rune offsets in the section text
	para               int32 // index of the paragraph in the section
	flags              uint8
}

// chunkMaxSection is the most bytes BuildChunks handles as one section; a
// longer section (over 1 GiB of text under one heading) is chunked as
// several consecutive sections.
const chunkMaxSection = 1 << 30

const (
	chunkParaStart  uint8 = 1 << iota // first word of a paragraph
	chunkSentEnd                      // ends with '.', '!' or '?'
	chunkAfterHead                    // first word after a heading paragraph
	chunkWordPieces                   // continues the previous piece (no separator before)
)

// newChunkBuilder returns a builder with BuildChunks' settings applied.
func newChunkBuilder(paras []Paragraph, maxSize, overlapSize int) *chunkBuilder {
	cb := &chunkBuilder{maxSize: maxSize, parentSize: max(2*maxSize, 3000)}
	if maxSize <= 0 {
		cb.maxSize = 0
		return cb
	}
	cb.overlap = min(max(overlapSize, 0), maxSize/2)
	total := 0
	for i := range paras {
		total += len(paras[i].Text)
	}
	cb.chunks = make([]Chunk, 0, total/(cb.maxSize-cb.overlap)+1)
	return cb
}

// run splits paras into sections and chunks each.
func (cb *chunkBuilder) run(paras []Paragraph) {
	var (
		sec      []chunkPara // the current section
		sawBody  bool        // sec has a non-heading paragraph
		bodyPath string      // Breadcrumb of sec's first non-heading paragraph
		secBytes int
	)
	for i := range paras {
		p := &paras[i]
		rest := p.Text
		for rest != "" {
			part := rest
			if len(part) > chunkMaxSection { // absurdly long: cut at a space
				cut := strings.LastIndexByte(part[:chunkMaxSection], ' ')
				for cut <= 0 {
					cut = chunkMaxSection
					for !utf8.RuneStart(part[cut]) {
						cut--
					}
				}
				part = part[:cut]
			}
			rest = rest[len(part):]
			cp := cb.prepare(p, part)
			if cp.text == "" {
				continue
			}
			cp.merged = cb.merged != nil && cb.merged[i]
			if len(sec) > 0 && (sawBody && (p.Heading || p.Breadcrumb != bodyPath) || secBytes+len(cp.text) >= chunkMaxSection) {
				cb.sectionWithTail(sec)
				sec, sawBody, secBytes = sec[:0], false, 0
			}
			if !p.Heading && !sawBody {
				sawBody, bodyPath = true, p.Breadcrumb
			}
			sec = append(sec, cp)
			secBytes += len(cp.text) + 1
		}
	}
	if len(sec) > 0 {
		cb.sectionWithTail(sec)
	}
}

// prepare normalises paragraph text t. Text that is already normalised
// ASCII with no word longer than maxSize is recognised in one pass.
func (cb *chunkBuilder) prepare(p *Paragraph, t string) chunkPara {
	if chunkSimple(t, cb.maxSize) {
		return chunkPara{p: p, text: t, runes: len(t), simple: true}
	}
	t, ascii := normalizeSpacesASCII(t)
	runes := len(t)
	if !ascii {
		runes = utf8.RuneCountInString(t)
	}
	return chunkPara{p: p, text: t, runes: runes}
}

// chunkSimple reports whether t is non-empty normalised ASCII (bytes 0x21
// to 0x7F and single spaces, none leading or trailing) with no word longer
// than maxSize bytes (any length if maxSize is 0). It checks eight bytes at
// a time.
func chunkSimple(t string, maxSize int) bool {
	const (
		ones = 0x0101010101010101
		hi   = 0x80 * ones
		lo7  = 0x7f * ones
	)
	n := len(t)
	if n == 0 || t[0] == ' ' || t[n-1] == ' ' {
		return false
	}
	ws := 0            // start of the current word
	prevSpace := false // the byte before k is a space
	k := 0
	for ; k+8 <= n; k += 8 {
		b := t[k : k+8]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if x&hi != 0 || (x+0x60*ones)&hi != hi {
			return false // non-ASCII, or a control character (7-bit + 0x60 carries into bit 7 iff >= 0x20)
		}
		e := x ^ 0x20*ones
		sp := ^((e&lo7 + lo7) | e | lo7) // bit 7 of each byte that is a space
		if sp == 0 {
			if maxSize > 0 && k+8-ws > maxSize {
				return false
			}
			prevSpace = false
			continue
		}
		if sp&(sp<<8) != 0 || (prevSpace && sp&0x80 != 0) {
			return false // two spaces in a row
		}
		for m := sp; m != 0; m &= m - 1 {
			i := k + bits.TrailingZeros64(m)>>3
			if maxSize > 0 && i-ws > maxSize {
				return false
			}
			ws = i + 1
		}
		prevSpace = sp>>63 != 0
	}
	for ; k < n; k++ {
		c := t[k]
		if c > ' ' && c < utf8.RuneSelf {
			prevSpace = false
			continue
		}
		if c != ' ' || prevSpace || (maxSize > 0 && k-ws > maxSize) {
			return false
		}
		ws, prevSpace = k+1, true
	}
	return maxSize == 0 || n-ws <= maxSize
}

// section appends the chunks of one section.
func (cb *chunkBuilder) section(sec []chunkPara) {
	// Section text: paragraphs joined by "\n".
	n := len(sec) - 1
	simple := !cb.forceWords
	for _, sp := range sec {
		n += len(sp.text)
		simple = simple && sp.simple
	}
	var sb strings.Builder
	sb.Grow(n)
	cb.paraStart = cb.paraStart[:0]
	lastHead := -1
	for pi, sp := range sec {
		if pi > 0 {
			sb.WriteByte('\n')
		}
		cb.paraStart = append(cb.paraStart, sb.Len())
		sb.WriteString(sp.text)
		if sp.p.Heading {
			lastHead = pi
		}
	}
	text := sb.String()

	// Section metadata.
	var crumb, section string
	if lastHead >= 0 {
		crumb, section = sec[lastHead].p.Breadcrumb, sec[lastHead].text
		if crumb == "" {
			crumb = section
		}
	} else {
		crumb = sec[0].p.Breadcrumb
		section = crumb
		if k := strings.LastIndex(crumb, " > "); k >= 0 {
			section = crumb[k+3:]
		}
	}
	top := crumb
	if k := strings.Index(crumb, " > "); k >= 0 {
		top = crumb[:k]
	}
	base := Chunk{Section: section, Top: topLabel(top), Breadcrumb: crumb}

	if cb.maxSize <= 0 {
		cb.emit(base, sec, text, 0, len(text), 0, len(sec)-1)
		return
	}
	if simple {
		cb.sectionASCII(base, sec, text)
		return
	}
	cb.sectionWords(base, sec, text)
}

// emit appends the chunk text[a:b], with ParentText text, lying on
// paragraphs pLo..pHi of sec; its Pages are those of paragraphs pLo..pHi.
// Callers that narrow ParentText call setParent.
func (cb *chunkBuilder) emit(base Chunk, sec []chunkPara, text string, a, b, pLo, pHi int) {
	c := base
	c.Text = text[a:b]
	c.ParentText = text
	c.Pages = cb.pagesOf(sec, pLo, pHi)
	if cb.merged != nil {
		c.Headings = chunkHeadings(sec, pLo, pHi)
	}
	cb.chunks = append(cb.chunks, c)
}

// setParent makes text[pa:pb] the ParentText of the last chunk and its
// Pages those of the paragraphs that window lies on: the pages the answer
// is drawn from (docs/compat.md), not only the chunk's own.
func (cb *chunkBuilder) setParent(sec []chunkPara, text string, pa, pb int) {
	c := &cb.chunks[len(cb.chunks)-1]
	c.ParentText = text[pa:pb]
	c.Pages = cb.pagesOf(sec, cb.paraAt(pa), cb.paraAt(max(pb-1, pa)))
}

// pagesOf returns the Pages string of paragraphs pLo..pHi of sec: "" when
// none has a page number, "7" for one page, "3-5" for a range.
func (cb *chunkBuilder) pagesOf(sec []chunkPara, pLo, pHi int) string {
	lo, hi := 0, 0
	for p := pLo; p <= pHi; p++ {
		n := sec[p].p.PageNum
		if n <= 0 {
			continue
		}
		if lo == 0 || n < lo {
			lo = n
		}
		if n > hi {
			hi = n
		}
	}
	if lo != cb.pagesLo || hi != cb.pagesHi { // neighbours mostly share pages
		cb.pagesLo, cb.pagesHi = lo, hi
		switch {
		case lo == 0:
			cb.pages = ""
		case lo == hi:
			cb.pages = strconv.Itoa(lo)
		default:
			cb.pages = strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
		}
	}
	return cb.pages
}

// paraAt returns the index of the paragraph holding byte offset off.
func (cb *chunkBuilder) paraAt(off int) int {
	return sort.SearchInts(cb.paraStart, off+1) - 1
}

// chunkSep reports whether c separates words in a section text.
func chunkSep(c byte) bool { return c == ' ' || c == '\n' }

// sectionASCII chunks a section whose paragraphs are all simple: words are
// runs of bytes between separators, offsets are both bytes and runes, and no
// word is longer than maxSize.
func (cb *chunkBuilder) sectionASCII(base Chunk, sec []chunkPara, text string) {
	n := len(text)
	a, prevEnd := 0, 0
	for a < n {
		// b: the end of the last word that fits.
		b := n
		if n-a > cb.maxSize {
			b = a + cb.maxSize
			for !chunkSep(text[b]) {
				b--
			}
			b = cb.preferredEndASCII(sec, text, a, b, prevEnd)
		}
		pLo, pHi := cb.paraAt(a), cb.paraAt(b-1)
		cb.emit(base, sec, text, a, b, pLo, pHi)
		pa, pb := cb.parentASCII(text, a, b)
		cb.setParent(sec, text, pa, pb)
		if b >= n {
			break
		}
		// The overlap: the most words at the end of the chunk that fit in
		// overlap runes and leave room for the next word, so that every
		// chunk brings at least one new word.
		next := b + 1
		for next < n && !chunkSep(text[next]) {
			next++
		}
		k := b + 1
		for q := b - 1; q > a && b-q <= cb.overlap && next-q <= cb.maxSize; q-- {
			if chunkSep(text[q-1]) {
				k = q
			}
		}
		a, prevEnd = k, b
	}
}

// preferredEndASCII is preferredEnd for sectionASCII: b is the end of the
// last word that fits in the chunk starting at a.
func (cb *chunkBuilder) preferredEndASCII(sec []chunkPara, text string, a, b, prevEnd int) int {
	half := (cb.maxSize + 1) / 2
	firstEnd := a // end of the chunk's first word
	for firstEnd < b && !chunkSep(text[firstEnd]) {
		firstEnd++
	}
	sentence := -1
	for q := b; q > firstEnd && q > prevEnd && q-a >= half; q-- {
		c := text[q]
		if !chunkSep(c) {
			continue
		}
		afterHead := c == '\n' && sec[cb.paraAt(q-1)].p.Heading
		if c == '\n' && !afterHead {
			return q
		}
		if sentence < 0 && !afterHead {
			if p := text[q-1]; p == '.' || p == '!' || p == '?' {
				sentence = q
			}
		}
	}
	if sentence > 0 {
		return sentence
	}
	return b
}

// parentASCII is parentWindow for sectionASCII; it returns the window's
// byte offsets.
func (cb *chunkBuilder) parentASCII(text string, a, b int) (int, int) {
	n := len(text)
	if n <= cb.parentSize {
		return 0, n
	}
	spare := cb.parentSize - (b - a)
	if spare <= 0 {
		return a, b
	}
	// right returns the last word end in [b, limit].
	right := func(limit int) int {
		if limit >= n {
			return n
		}
		for q := limit; q > b; q-- {
			if chunkSep(text[q]) {
				return q
			}
		}
		return b
	}
	// left returns the first word start in [limit, a].
	left := func(limit int) int {
		if limit <= 0 {
			return 0
		}
		for q := limit; q < a; q++ {
			if chunkSep(text[q-1]) {
				return q
			}
		}
		return a
	}
	pb := right(b + spare/2)
	pa := left(a - (spare - (pb - b)))
	pb = right(b + (spare - (a - pa)))
	return pa, pb
}

// sectionWords chunks a section through its word array.
func (cb *chunkBuilder) sectionWords(base Chunk, sec []chunkPara, text string) {
	words := cb.words[:0]
	roff := 0
	for pi, sp := range sec {
		if pi > 0 {
			roff++ // the "\n"
		}
		flags := chunkParaStart
		if pi > 0 && sec[pi-1].p.Heading {
			flags |= chunkAfterHead
		}
		words = cb.appendWords(words, sp.text, cb.paraStart[pi], roff, pi, flags, sp.runes == len(sp.text))
		roff += sp.runes
	}
	cb.words = words
	nw := len(words)
	i, j, prevEnd := 0, 0, 0
	for i < nw {
		j = max(j, i+1)
		for j < nw && int(words[j].runeEnd-words[i].runeStart) <= cb.maxSize {
			j++
		}
		if j < nw {
			j = cb.preferredEnd(i, j, prevEnd)
		}
		cb.emit(base, sec, text, int(words[i].start), int(words[j-1].end), int(words[i].para), int(words[j-1].para))
		pa, pb := cb.parentWindow(text, i, j)
		cb.setParent(sec, text, pa, pb)
		if j >= nw {
			break
		}
		// The overlap, as in sectionASCII.
		k := j
		for k-1 > i && int(words[j-1].runeEnd-words[k-1].runeStart) <= cb.overlap &&
			int(words[j].runeEnd-words[k-1].runeStart) <= cb.maxSize {
			k--
		}
		i, prevEnd = k, j
	}
}

// appendWords appends the words of the normalised paragraph text t, which
// starts at byte off and rune roff of the section text and is pure ASCII if
// ascii is set.
func (cb *chunkBuilder) appendWords(words []chunkWord, t string, off, roff, para int, flags uint8, ascii bool) []chunkWord {
	for i := 0; i < len(t); {
		j := strings.IndexByte(t[i:], ' ')
		if j < 0 {
			j = len(t)
		} else {
			j += i
		}
		w := t[i:j]
		rl := len(w)
		if !ascii {
			rl = utf8.RuneCountInString(w)
		}
		if rl > cb.maxSize {
			words = cb.appendPieces(words, w, off+i, roff, para, flags)
		} else {
			cw := chunkWord{start: int32(off + i), end: int32(off + j), runeStart: int32(roff), runeEnd: int32(roff + rl), para: int32(para), flags: flags}
			if c := w[len(w)-1]; c == '.' || c == '!' || c == '?' {
				cw.flags |= chunkSentEnd
			}
			words = append(words, cw)
		}
		flags = 0
		roff += rl
		if j < len(t) {
			roff++ // the space
		}
		i = j + 1
	}
	return words
}

// appendPieces appends the word w, longer than maxSize runes, as pieces of
// maxSize runes (the last one shorter).
func (cb *chunkBuilder) appendPieces(words []chunkWord, w string, off, roff, para int, flags uint8) []chunkWord {
	start, rstart, count := 0, roff, 0
	for k := range w {
		if count == cb.maxSize {
			words = append(words, chunkWord{start: int32(off + start), end: int32(off + k), runeStart: int32(rstart), runeEnd: int32(rstart + count), para: int32(para), flags: flags})
			flags = chunkWordPieces
			start, rstart, count = k, rstart+count, 0
		}
		count++
	}
	words = append(words, chunkWord{start: int32(off + start), end: int32(off + len(w)), runeStart: int32(rstart), runeEnd: int32(rstart + count), para: int32(para), flags: flags})
	return words
}

// preferredEnd returns where the chunk starting at word i ends, given that
// words i..jmax-1 are the most that fit and more words follow: the last
// paragraph end, else the last sentence end, after minEnd (the previous
// chunk's end) that keeps the chunk at least half full and does not leave a
// heading at its end; else jmax.
func (cb *chunkBuilder) preferredEnd(i, jmax, minEnd int) int {
	words := cb.words
	if words[jmax].flags&chunkWordPieces != 0 {
		return jmax // inside an over-long word: cut where it must be cut
	}
	half := int32((cb.maxSize + 1) / 2)
	sentence := -1
	for k := jmax; k > i+1 && k > minEnd; k-- {
		if words[k-1].runeEnd-words[i].runeStart < half {
			break
		}
		f := words[k].flags
		if f&chunkParaStart != 0 && f&chunkAfterHead == 0 {
			return k
		}
		if sentence < 0 && f&chunkWordPieces == 0 && words[k-1].flags&chunkSentEnd != 0 && f&chunkAfterHead == 0 {
			sentence = k
		}
	}
	if sentence > 0 {
		return sentence
	}
	return jmax
}

// parentWindow returns the ParentText of the chunk of words i..j-1: up to
// parentSize runes of whole words of the section around it, half of the
// spare room before and half after the chunk, any room one side cannot use
// going to the other. It returns the window's byte offsets in text.
func (cb *chunkBuilder) parentWindow(text string, i, j int) (int, int) {
	words := cb.words
	n := len(words)
	if int(words[n-1].runeEnd-words[0].runeStart) <= cb.parentSize {
		return 0, len(text)
	}
	spare := cb.parentSize - int(words[j-1].runeEnd-words[i].runeStart)
	if spare <= 0 {
		return int(words[i].start), int(words[j-1].end)
	}
	// b: end of the window after extending right by at most spare/2.
	b := cb.extendRight(j, int(words[j-1].runeEnd)+spare/2)
	// a: start after extending left by whatever is left.
	used := int(words[b-1].runeEnd - words[j-1].runeEnd)
	a := cb.extendLeft(i, int(words[i].runeStart)-(spare-used))
	// b again, with the room the left side could not use.
	used = int(words[i].runeStart - words[a].runeStart)
	b = cb.extendRight(j, int(words[j-1].runeEnd)+(spare-used))
	return int(words[a].start), int(words[b-1].end)
}

// extendRight returns the largest b >= j with words[b-1].runeEnd <= limit.
func (cb *chunkBuilder) extendRight(j, limit int) int {
	w := cb.words[j:]
	lo, hi := 0, len(w) // find the first k with w[k].runeEnd > limit
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(w[m].runeEnd) <= limit {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return j + lo
}

// extendLeft returns the smallest a <= i with words[a].runeStart >= limit.
func (cb *chunkBuilder) extendLeft(i, limit int) int {
	w := cb.words[:i]
	lo, hi := 0, len(w) // find the first k with w[k].runeStart >= limit
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(w[m].runeStart) < limit {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
