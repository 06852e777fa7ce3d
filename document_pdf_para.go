package engine

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// This file works on the lines of the whole document: it drops running
// headers, footers and page numbers, groups lines into paragraphs (vertical
// gaps, indents, list items, table borders; continuing across column and
// page breaks mid-sentence), joins hyphenated line breaks and marks
// headings (larger or bold type) with their breadcrumb trail.

// pdfPageLines holds one page's lines in reading order.
type pdfPageLines struct {
	lines  []pdfLine
	rules  []pdfRule
	height float64
}

// pdfParagraphs returns the paragraphs of a document's pages.
func pdfParagraphs(doc []pdfPageLines) []Paragraph {
	pdfDropFurniture(doc)
	blocks := pdfBlocks(doc, pdfLeading(doc))
	return pdfHeadings(blocks, pdfBodySize(doc))
}

// pdfSizeKey buckets a font size to half points.
func pdfSizeKey(size float64) float64 { return math.Round(size*2) / 2 }

// pdfPageNumberRe matches page-number lines: "7", "- 7 -", "Page 7",
// "Seite 7 von 9", "7 / 9", "Σελίδα 7", "стр. 7".
var pdfPageNumberRe = lazyRegexp(`(?i)^[\pP\s]*((page|pg|p|seite|s|p[áa]gina|p[áa]g|pagină|σελίδα|σελ|страница|стр|sida|side|strona|str|sivu|oldal|stránka|sayfa|blad)\.?\s*)?[0-9]{1,4}(\s*(/|of|von|de|di|από|из|z|av|af)\s*[0-9]{1,4})?[\pP\s]*$`)

// pdfFurnitureKey normalises a line for comparison across pages: lower
// case, digit runs as '#'.
func pdfFurnitureKey(s string) string {
	var b strings.Builder
	digit := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsDigit(r) {
			if !digit {
				b.WriteByte('#')
			}
			digit = true
			continue
		}
		digit = false
		if !unicode.IsSpace(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pdfDropFurniture removes running headers and footers (the same text,
// digits aside, among the top or bottom two lines of at least 30% of the
// pages, at least two) and page-number lines at the top or bottom of a page.
func pdfDropFurniture(doc []pdfPageLines) {
	type cand struct{ page, line int }
	count := map[string]int{}
	cands := map[string][]cand{}
	for p, pg := range doc {
		seen := map[string]bool{}
		for _, i := range pdfEdgeLines(pg) {
			ln := pg.lines[i]
			key := pdfFurnitureKey(ln.text)
			if key == "" {
				continue
			}
			cands[key] = append(cands[key], cand{p, i})
			if !seen[key] {
				seen[key] = true
				count[key]++
			}
		}
	}
	need := max(2, int(math.Ceil(0.3*float64(len(doc)))))
	drop := make([]map[int]bool, len(doc))
	for key, cs := range cands {
		for _, c := range cs {
			ln := doc[c.page].lines[c.line]
			if count[key] >= need || (pdfPageNumberRe().MatchString(ln.text) && pdfIsolated(doc[c.page], c.line)) {
				if drop[c.page] == nil {
					drop[c.page] = map[int]bool{}
				}
				drop[c.page][c.line] = true
			}
		}
	}
	for p := range doc {
		if len(drop[p]) == 0 {
			continue
		}
		kept := doc[p].lines[:0]
		for i, ln := range doc[p].lines {
			if !drop[p][i] {
				kept = append(kept, ln)
			}
		}
		doc[p].lines = kept
	}
}

// pdfEdgeLines returns the indexes of the two highest and two lowest lines
// of a page that lie in its outer fifth.
func pdfEdgeLines(pg pdfPageLines) []int {
	idx := make([]int, len(pg.lines))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return pg.lines[idx[a]].y > pg.lines[idx[b]].y })
	var out []int
	add := func(i int) {
		for _, j := range out {
			if j == i {
				return
			}
		}
		out = append(out, i)
	}
	h := pg.height
	for k := 0; k < 2 && k < len(idx); k++ {
		if pg.lines[idx[k]].y > 0.8*h {
			add(idx[k])
		}
		if j := idx[len(idx)-1-k]; pg.lines[j].y < 0.2*h {
			add(j)
		}
	}
	return out
}

// pdfIsolated reports whether line i stands apart from every other line of
// its page by more than one and a half line heights.
func pdfIsolated(pg pdfPageLines, i int) bool {
	ln := pg.lines[i]
	for j, o := range pg.lines {
		if j != i && math.Abs(o.y-ln.y) < 1.5*math.Max(ln.size, o.size) {
			return false
		}
	}
	return true
}

// pdfLeading returns the usual baseline distance per size bucket: the
// median distance between consecutive lines of the same size.
func pdfLeading(doc []pdfPageLines) map[float64]float64 {
	ds := map[float64][]float64{}
	for _, pg := range doc {
		for i := 1; i < len(pg.lines); i++ {
			a, b := pg.lines[i-1], pg.lines[i]
			if pdfSizeKey(a.size) != pdfSizeKey(b.size) {
				continue
			}
			if d := a.y - b.y; d > 0.8*a.size && d < 2.5*a.size {
				ds[pdfSizeKey(a.size)] = append(ds[pdfSizeKey(a.size)], d)
			}
		}
	}
	lead := map[float64]float64{}
	for k, v := range ds {
		sort.Float64s(v)
		lead[k] = v[len(v)/2]
	}
	return lead
}

// pdfBodySize returns the font size of most characters.
func pdfBodySize(doc []pdfPageLines) float64 {
	chars := map[float64]int{}
	for _, pg := range doc {
		for _, ln := range pg.lines {
			chars[pdfSizeKey(ln.size)] += ln.chars
		}
	}
	best, n := 0.0, -1
	for k, c := range chars {
		if c > n || (c == n && k < best) {
			best, n = k, c
		}
	}
	return best
}

// pdfBlock is a paragraph under construction.
type pdfBlock struct {
	lines       []pdfLine
	page        int     // 1-based page of the first line
	left, right float64 // horizontal extent of the lines
}

var pdfListItemRe = lazyRegexp(`^([•◦▪‣●■□○·*–-]|\(?[0-9]{1,3}[.)]|\(?[a-zA-Z][.)])\s`)

// pdfBlocks groups the lines of all pages into paragraphs.
func pdfBlocks(doc []pdfPageLines, lead map[float64]float64) []pdfBlock {
	var blocks []pdfBlock
	var cur *pdfBlock
	for p, pg := range doc {
		for i, ln := range pg.lines {
			if cur != nil && pdfContinues(cur, ln, i == 0, pg.rules, lead) {
				cur.lines = append(cur.lines, ln)
				cur.left, cur.right = math.Min(cur.left, ln.x0), math.Max(cur.right, ln.x1)
				continue
			}
			blocks = append(blocks, pdfBlock{lines: []pdfLine{ln}, page: p + 1, left: ln.x0, right: ln.x1})
			cur = &blocks[len(blocks)-1]
		}
	}
	return blocks
}

// pdfContinues reports whether ln continues the paragraph b.
func pdfContinues(b *pdfBlock, ln pdfLine, newPage bool, rules []pdfRule, lead map[float64]float64) bool {
	prev := b.lines[len(b.lines)-1]
	size := math.Max(prev.size, ln.size)
	if math.Abs(prev.size-ln.size) > 0.12*size || prev.bold != ln.bold {
		return false
	}
	if pdfListItemRe().MatchString(ln.text) {
		return false
	}
	if newPage || ln.y > prev.y-0.3*prev.size {
		// A new page or column: continue only mid-sentence.
		if strings.ContainsRune(".!?:;", pdfLastRune(strings.TrimRight(prev.text, `"'”’)]`))) {
			return false
		}
		return unicode.IsLower(pdfFirstRune(ln.text))
	}
	l := lead[pdfSizeKey(prev.size)]
	if l == 0 {
		l = 1.2 * prev.size
	}
	if prev.y-ln.y > 1.3*l {
		return false
	}
	for _, r := range rules {
		if r.y < prev.y-0.2*prev.size && r.y > ln.y+0.8*ln.size && r.x0 < math.Max(prev.x1, ln.x1) && r.x1 > math.Min(prev.x0, ln.x0) {
			return false
		}
	}
	left, right := math.Min(b.left, ln.x0), math.Max(b.right, ln.x1)
	if ln.x0 > prev.x0+0.8*size && prev.x1 < right-2*size {
		return false // indented first line after a short last line
	}
	if strings.ContainsRune(".!?:", pdfLastRune(prev.text)) && prev.x1 < right-0.25*(right-left) {
		return false // a sentence ends well before the right edge
	}
	return true
}

// pdfJoinLines joins the lines of a paragraph. A word broken with a hyphen
// at a line end is joined: the hyphen goes before a lower-case letter
// ("exam-" + "ple" gives "example") and inside an upper-case word ("ELE-" +
// "MENT" gives "ELEMENT"); otherwise it stays ("Jean-" + "Paul" gives
// "Jean-Paul"). Lines ending and starting in Chinese or Japanese text
// (cjkJoinable) join without a space, as pdftotext joins them.
func pdfJoinLines(lines []pdfLine) string {
	var b strings.Builder
	for i, ln := range lines {
		t := strings.TrimSpace(ln.text)
		if i > 0 && b.Len() > 0 {
			s := b.String()
			if pdfLastRune(s) == '-' && len(s) >= 2 && unicode.IsLetter(pdfLastRune(s[:len(s)-1])) && t != "" {
				before, next := pdfLastRune(s[:len(s)-1]), pdfFirstRune(t)
				if unicode.IsLower(next) || (unicode.IsUpper(before) && unicode.IsUpper(next)) {
					b.Reset()
					b.WriteString(s[:len(s)-1])
				}
			} else if !(cjkJoinable(pdfLastRune(s)) && cjkJoinable(pdfFirstRune(t))) {
				// Chinese and Japanese lines join without a space.
				b.WriteByte(' ')
			}
		}
		b.WriteString(t)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// pdfHeadings turns blocks into paragraphs, marking headings: short blocks
// set larger than the body text, or bold single-segment lines. Heading
// levels follow the size (and boldness) of their type.
func pdfHeadings(blocks []pdfBlock, body float64) []Paragraph {
	type style struct {
		size float64
		bold bool
	}
	heading := make([]bool, len(blocks))
	texts := make([]string, len(blocks))
	styles := map[style]bool{}
	for i, b := range blocks {
		texts[i] = pdfJoinLines(b.lines)
		first := b.lines[0]
		n := len([]rune(texts[i]))
		maxSegs := 0
		for _, ln := range b.lines {
			maxSegs = max(maxSegs, ln.segs)
		}
		if !pdfHasLetter(texts[i]) || n > 200 || len(b.lines) > 3 {
			continue
		}
		big := first.size >= 1.15*body
		boldLine := first.bold && first.size >= 0.95*body && maxSegs == 1 && n <= 120 && len(b.lines) <= 2
		if big || boldLine {
			heading[i] = true
			styles[style{pdfSizeKey(first.size), first.bold}] = true
		}
	}
	order := make([]style, 0, len(styles))
	for s := range styles {
		order = append(order, s)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].size != order[j].size {
			return order[i].size > order[j].size
		}
		return order[i].bold && !order[j].bold
	})
	level := map[style]int{}
	for i, s := range order {
		level[s] = i
	}
	type crumb struct {
		level int
		text  string
	}
	var trail []crumb
	path := func() string {
		parts := make([]string, len(trail))
		for i, c := range trail {
			parts[i] = c.text
		}
		return strings.Join(parts, " > ")
	}
	paras := make([]Paragraph, 0, len(blocks))
	for i, b := range blocks {
		if texts[i] == "" {
			continue
		}
		if heading[i] {
			lv := level[style{pdfSizeKey(b.lines[0].size), b.lines[0].bold}]
			for len(trail) > 0 && trail[len(trail)-1].level >= lv {
				trail = trail[:len(trail)-1]
			}
			trail = append(trail, crumb{lv, texts[i]})
		}
		paras = append(paras, Paragraph{Text: texts[i], PageNum: b.page, Heading: heading[i], Breadcrumb: path()})
	}
	return paras
}
