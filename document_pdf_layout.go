package engine

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file turns the positioned glyphs of a page into lines in reading
// order: glyphs become words (a space where the gap exceeds 0.15 x font
// size), words become line segments, and a recursive XY-cut over the
// segments orders them, splitting two-column text column by column unless a
// table border crosses the gutter.

// pdfWordGap is the horizontal gap, as a fraction of the font size, above
// which two glyphs belong to different words.
const pdfWordGap = 0.15

// pdfSegGap is the gap, as a fraction of the font size, above which two
// words on a line belong to different segments (table cells, columns).
const pdfSegGap = 1.0

type pdfWord struct {
	x0, x1, y, size float64
	text            string
	chars, bold     int
	spaceBefore     bool // an explicit space glyph preceded the word
}

// pdfSeg is a run of words on one line without a wide gap.
type pdfSeg struct {
	x0, x1, y, size, top, bot float64
	words                     []pdfWord
}

// pdfLine is one line of text in reading order.
type pdfLine struct {
	text            string
	x0, x1, y, size float64
	bold            bool
	segs            int
	chars           int
}

// pdfLayoutPage returns the lines of a page in reading order.
func pdfLayoutPage(glyphs []pdfGlyph, rules []pdfRule) []pdfLine {
	var counts [4]int
	for _, g := range glyphs {
		counts[g.rot&3]++
	}
	dominant := 0
	for r := 1; r < 4; r++ {
		if counts[r] > counts[dominant] {
			dominant = r
		}
	}
	var lines []pdfLine
	for k := 0; k < 4; k++ {
		rot := (dominant + k) % 4
		if counts[rot] == 0 {
			continue
		}
		group := glyphs // the common case: all text upright
		if rot != 0 || counts[rot] != len(glyphs) {
			group = make([]pdfGlyph, 0, counts[rot])
			for _, g := range glyphs {
				if int(g.rot&3) == rot {
					g.x, g.y = pdfRotate(g.x, g.y, rot)
					group = append(group, g)
				}
			}
		}
		var rs []pdfRule
		if rot == 0 {
			rs = rules
		}
		lines = append(lines, pdfOrderLines(pdfSegments(pdfWords(group)), rs)...)
	}
	return lines
}

// pdfRotate maps a point so that text running in direction rot runs left
// to right.
func pdfRotate(x, y float64, rot int) (float64, float64) {
	switch rot {
	case 1:
		return y, -x
	case 2:
		return -x, -y
	case 3:
		return -y, x
	}
	return x, y
}

// pdfWords groups glyphs, in content-stream order, into words. The texts
// of all words share one string.
func pdfWords(gs []pdfGlyph) []pdfWord {
	words := make([]pdfWord, 0, len(gs)/4+1)
	var ends []int // end offset of each word's text in buf
	var buf []byte
	var cur pdfWord
	var last pdfGlyph
	have, pendingSpace := false, false
	flush := func() {
		if have {
			words = append(words, cur)
			ends = append(ends, len(buf))
			have = false
		}
	}
	for _, g := range gs {
		if g.space {
			flush()
			pendingSpace = true
			continue
		}
		if have {
			sz := math.Min(g.size, last.size)
			gap := g.x - (last.x + last.w)
			if math.Abs(g.y-last.y) <= 0.2*sz && gap <= pdfWordGap*sz && gap >= -0.6*sz {
				buf = append(buf, g.text...)
				cur.x1 = math.Max(cur.x1, g.x+g.w)
				cur.size = math.Max(cur.size, g.size)
				cur.chars++
				if g.font != nil && g.font.bold {
					cur.bold++
				}
				last = g
				continue
			}
			flush()
		}
		cur = pdfWord{x0: g.x, x1: g.x + g.w, y: g.y, size: g.size, chars: 1, spaceBefore: pendingSpace}
		if g.font != nil && g.font.bold {
			cur.bold = 1
		}
		buf = append(buf, g.text...)
		have, pendingSpace, last = true, false, g
	}
	flush()
	all := string(buf)
	from := 0
	for i := range words {
		words[i].text = all[from:ends[i]]
		from = ends[i]
	}
	return words
}

// pdfOverlap reports whether two baselines with their font sizes share at
// least half the height of the smaller one (a line's extent is taken as
// 0.25 em below to 0.75 em above the baseline).
func pdfOverlap(y1, s1, y2, s2 float64) bool {
	ov := math.Min(y1+0.75*s1, y2+0.75*s2) - math.Max(y1-0.25*s1, y2-0.25*s2)
	return ov >= 0.5*math.Min(s1, s2)
}

// pdfRows sorts items top to bottom and clusters them into rows; each row
// is a sub-slice of items.
func pdfRows[T any](items []T, pos func(*T) (y, size float64)) [][]T {
	sort.SliceStable(items, func(i, j int) bool {
		yi, _ := pos(&items[i])
		yj, _ := pos(&items[j])
		return yi > yj
	})
	var rows [][]T
	var ry, rs float64
	start := 0
	for i := range items {
		y, s := pos(&items[i])
		if i > 0 && pdfOverlap(ry, rs, y, s) {
			if s > rs {
				ry, rs = y, s
			}
			continue
		}
		if i > 0 {
			rows = append(rows, items[start:i])
		}
		start, ry, rs = i, y, s
	}
	if len(items) > 0 {
		rows = append(rows, items[start:])
	}
	return rows
}

// pdfSegments groups words into rows and splits rows into segments at wide
// gaps. Words with no gap and no space glyph between them are joined.
// Segments keep sub-slices of words, which is reordered in place.
func pdfSegments(words []pdfWord) []*pdfSeg {
	var slab []pdfSeg
	for _, row := range pdfRows(words, func(w *pdfWord) (float64, float64) { return w.y, w.size }) {
		sort.SliceStable(row, func(i, j int) bool { return row[i].x0 < row[j].x0 })
		out := 0   // words kept so far in row (compacted in place)
		first := 0 // index in row of the current segment's first word
		var seg *pdfSeg
		for _, w := range row {
			if seg != nil {
				prev := &row[out-1]
				sz := math.Max(prev.size, w.size)
				gap := w.x0 - prev.x1
				if w.text == prev.text && math.Abs(w.x0-prev.x0) < 0.3*sz {
					continue // drawn twice (simulated bold or shadow)
				}
				if gap <= pdfSegGap*sz {
					if !w.spaceBefore && gap < pdfWordGap*math.Min(prev.size, w.size) && gap > -0.6*sz {
						prev.text += w.text
						prev.x1 = math.Max(prev.x1, w.x1)
						prev.chars += w.chars
						prev.bold += w.bold
					} else {
						row[out] = w
						out++
					}
					seg.x1 = math.Max(seg.x1, w.x1)
					seg.grow(w)
					seg.words = row[first:out]
					continue
				}
			}
			row[out] = w
			first = out
			out++
			slab = append(slab, pdfSeg{x0: w.x0, x1: w.x1, y: w.y, size: w.size, top: w.y + 0.75*w.size, bot: w.y - 0.25*w.size, words: row[first:out]})
			seg = &slab[len(slab)-1]
		}
	}
	segs := make([]*pdfSeg, len(slab))
	for i := range slab {
		segs[i] = &slab[i]
	}
	return segs
}

func (s *pdfSeg) grow(w pdfWord) {
	if w.size > s.size {
		s.size, s.y = w.size, w.y
	}
	s.top = math.Max(s.top, w.y+0.75*w.size)
	s.bot = math.Min(s.bot, w.y-0.25*w.size)
}

// pdfMaxCutSegs bounds the XY-cut; pages with more segments are ordered
// by rows only.
const pdfMaxCutSegs = 5000

// pdfOrderLines orders segments into lines by a recursive XY-cut.
func pdfOrderLines(segs []*pdfSeg, rules []pdfRule) []pdfLine {
	var lines []pdfLine
	emit := func(leaf []*pdfSeg) { lines = append(lines, pdfLeafLines(leaf)...) }
	if len(segs) > pdfMaxCutSegs {
		emit(segs)
		return lines
	}
	pdfXYCut(segs, rules, emit)
	return lines
}

// pdfXYCut splits the region holding segs at its widest empty band: a
// vertical band (a column gutter) when it qualifies and is at least as wide
// as the widest horizontal band, else the widest horizontal band. Regions
// that cannot be split are emitted as lines.
func pdfXYCut(segs []*pdfSeg, rules []pdfRule, emit func([]*pdfSeg)) {
	for len(segs) > 1 {
		sort.SliceStable(segs, func(i, j int) bool { return segs[i].top > segs[j].top })
		bestH, hAt := 0.0, -1
		low := segs[0].bot
		for i := 1; i < len(segs); i++ {
			if g := low - segs[i].top; g > bestH {
				bestH, hAt = g, i
			}
			low = math.Min(low, segs[i].bot)
		}
		if vgap, left, right, ok := pdfVerticalCut(segs, rules); ok && vgap >= bestH {
			pdfXYCut(left, rules, emit)
			segs = right
			continue
		}
		if hAt < 0 {
			break
		}
		pdfXYCut(segs[:hAt], rules, emit)
		segs = segs[hAt:]
	}
	if len(segs) > 0 {
		emit(segs)
	}
}

// pdfVerticalCut finds the widest qualifying column gutter in the region:
// both sides at least a fifth of the region wide, at least one side shaped
// like a text column (several lines filling its width), and no horizontal
// rule (table border) crossing it.
func pdfVerticalCut(segs []*pdfSeg, rules []pdfRule) (gap float64, left, right []*pdfSeg, ok bool) {
	xs := slices.Clone(segs)
	sort.SliceStable(xs, func(i, j int) bool { return xs[i].x0 < xs[j].x0 })
	rx0, rx1 := xs[0].x0, xs[0].x1
	top, bot := xs[0].top, xs[0].bot
	sizes := 0.0
	for _, s := range xs {
		rx1 = math.Max(rx1, s.x1)
		top = math.Max(top, s.top)
		bot = math.Min(bot, s.bot)
		sizes += s.size
	}
	width := rx1 - rx0
	minGap := math.Max(0.8*sizes/float64(len(xs)), 4)
	best := -1
	maxX1 := xs[0].x1
	for i := 1; i < len(xs); i++ {
		g := xs[i].x0 - maxX1
		if g >= minGap && g > gap {
			lw, rw := maxX1-rx0, rx1-xs[i].x0
			if lw >= 0.2*width && rw >= 0.2*width && !pdfRuleCrosses(rules, maxX1, xs[i].x0, bot, top) &&
				(pdfColumnLike(xs[:i], lw) || pdfColumnLike(xs[i:], rw)) {
				gap, best = g, i
			}
		}
		maxX1 = math.Max(maxX1, xs[i].x1)
	}
	if best < 0 {
		return 0, nil, nil, false
	}
	return gap, xs[:best], xs[best:], true
}

func pdfRuleCrosses(rules []pdfRule, gx0, gx1, bot, top float64) bool {
	for _, r := range rules {
		if r.y > bot-2 && r.y < top+2 && r.x0 < gx0+1 && r.x1 > gx1-1 {
			return true
		}
	}
	return false
}

// pdfColumnLike reports whether segs look like a column of running text:
// at least three segments, most of them filling the column's width.
func pdfColumnLike(segs []*pdfSeg, width float64) bool {
	if len(segs) < 3 {
		return false
	}
	full := 0
	for _, s := range segs {
		if s.x1-s.x0 >= 0.6*width {
			full++
		}
	}
	return full >= 3 && 2*full >= len(segs)
}

// pdfJoinsCJK reports whether two words of a line, before and next, meet
// inside Chinese or Japanese text (cjkJoinable on both sides): a gap
// between such glyphs is spacing, not a space between words.
func pdfJoinsCJK(before, next string) bool {
	r, _ := utf8.DecodeLastRuneInString(before)
	n, _ := utf8.DecodeRuneInString(next)
	return cjkJoinable(r) && cjkJoinable(n)
}

// pdfLeafLines turns a region that cannot be cut further into lines.
func pdfLeafLines(segs []*pdfSeg) []pdfLine {
	rows := pdfRows(segs, func(s **pdfSeg) (float64, float64) { return (*s).y, (*s).size })
	lines := make([]pdfLine, 0, len(rows))
	var b strings.Builder
	for _, row := range rows {
		sort.SliceStable(row, func(i, j int) bool { return row[i].x0 < row[j].x0 })
		b.Reset()
		ln := pdfLine{x0: row[0].x0, x1: row[0].x1, segs: len(row)}
		sizeChars := map[float64]int{}
		bold, bestSize, bestChars, primary := 0, 0.0, -1, 0.0
		for _, s := range row {
			ln.x1 = math.Max(ln.x1, s.x1)
			if s.size > primary {
				primary, ln.y = s.size, s.y
			}
			for _, w := range s.words {
				if b.Len() > 0 && !pdfJoinsCJK(b.String(), w.text) {
					b.WriteByte(' ')
				}
				b.WriteString(w.text)
				ln.chars += w.chars
				bold += w.bold
				k := math.Round(w.size*2) / 2
				sizeChars[k] += w.chars
				if sizeChars[k] > bestChars || (sizeChars[k] == bestChars && k > bestSize) {
					bestSize, bestChars = k, sizeChars[k]
				}
			}
		}
		ln.text = b.String()
		ln.size = bestSize
		ln.bold = ln.chars > 0 && 10*bold >= 9*ln.chars
		lines = append(lines, ln)
	}
	return lines
}

// pdfHasLetter reports whether s contains a letter.
func pdfHasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// pdfFirstRune returns the first rune of s.
func pdfFirstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// pdfLastRune returns the last rune of s.
func pdfLastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}
