package engine

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ocrWord is one word of tesseract's TSV output (level 5 rows).
type ocrWord struct {
	page, block, par, line int
	height                 int
	conf                   float64
	text                   string
}

// ocrParseTSV returns the words of tesseract TSV output (columns level,
// page_num, block_num, par_num, line_num, word_num, left, top, width,
// height, conf, text), in output order. Malformed rows are skipped.
func ocrParseTSV(tsv []byte) []ocrWord {
	var words []ocrWord
	for len(tsv) > 0 {
		var line []byte
		line, tsv, _ = bytes.Cut(tsv, []byte("\n"))
		if len(line) < 2 || line[0] != '5' || line[1] != '\t' {
			continue // not a word row (the header, pages, blocks, lines)
		}
		f := strings.SplitN(strings.TrimRight(string(line), "\r"), "\t", 12)
		if len(f) != 12 {
			continue
		}
		n := make([]int, 9)
		ok := true
		for i := 1; i <= 9; i++ {
			v, err := strconv.Atoi(f[i])
			ok = ok && err == nil
			n[i-1] = v
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		text := strings.TrimSpace(f[11])
		if !ok || err != nil || text == "" || !utf8.ValidString(text) {
			continue
		}
		words = append(words, ocrWord{page: n[0], block: n[1], par: n[2], line: n[3], height: n[8], conf: conf, text: text})
	}
	return words
}

// ocrPara is one paragraph tesseract found, before headings are decided.
type ocrPara struct {
	page       int
	text       string
	lines      int
	words      int
	lineHeight int // the tallest line's height in pixels
}

// ocrGroup turns words into paragraphs (tesseract's block and paragraph
// numbers), dropping words under minConf and paragraphs left without a
// letter or digit. A word broken with a hyphen at a line end is joined
// when the next line starts in lower case.
func ocrGroup(words []ocrWord, minConf float64) []ocrPara {
	var paras []ocrPara
	var b strings.Builder
	var cur ocrPara
	lineH := map[int]int{}
	lastLine := -1
	flush := func() {
		text := b.String()
		b.Reset()
		if strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			cur.text = text
			cur.lines = len(lineH)
			for _, h := range lineH {
				cur.lineHeight = max(cur.lineHeight, h)
			}
			paras = append(paras, cur)
		}
		cur = ocrPara{}
		clear(lineH)
		lastLine = -1
	}
	var key [3]int
	for i, w := range words {
		if k := [3]int{w.page, w.block, w.par}; i == 0 || k != key {
			flush()
			key = k
			cur.page = w.page
		}
		if minConf >= 0 && w.conf < minConf {
			continue
		}
		if !ocrPlausibleWord(w.text) {
			continue
		}
		lineH[w.line] = max(lineH[w.line], w.height)
		s := b.String()
		switch {
		case b.Len() == 0:
		case w.line != lastLine && strings.HasSuffix(s, "-") && len(s) > 1 && ocrLowerStart(w.text) &&
			unicode.IsLetter(lastRune(s[:len(s)-1])):
			// "exam-" + "ple": a hyphenated line break.
			b.Reset()
			b.WriteString(s[:len(s)-1])
		default:
			b.WriteByte(' ')
		}
		b.WriteString(w.text)
		cur.words++
		lastLine = w.line
	}
	flush()
	return paras
}

// ocrPlausibleWord rejects what scanner noise typically turns into: runs of
// punctuation and box-drawing strokes ("|", "~~", "—_"), which tesseract
// sometimes reports with a high confidence.
func ocrPlausibleWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	// Keep a lone dash or bullet used as a list marker or table cell.
	return s == "-" || s == "–" || s == "•" || s == "&" || s == "%"
}

func ocrLowerStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// ocrHeadingStack builds breadcrumbs from OCR headings across pages: a
// heading replaces the headings of its size and smaller on the stack.
type ocrHeadingStack struct {
	entries []ocrHeadingEntry
}

type ocrHeadingEntry struct {
	height int
	text   string
}

func (s *ocrHeadingStack) push(height int, text string) string {
	for len(s.entries) > 0 && s.entries[len(s.entries)-1].height*10 <= height*11 {
		s.entries = s.entries[:len(s.entries)-1]
	}
	s.entries = append(s.entries, ocrHeadingEntry{height, text})
	return s.breadcrumb()
}

func (s *ocrHeadingStack) breadcrumb() string {
	names := make([]string, len(s.entries))
	for i, e := range s.entries {
		names[i] = e.text
	}
	return strings.Join(names, " > ")
}

// ocrParagraphs turns one OCR run's paragraphs into Paragraphs: a short
// paragraph (at most 2 lines, 14 words, not ending in a full stop) whose
// tallest line is at least 1.15 times the median line height of its page's
// longer paragraphs is a heading. page maps tesseract's page number to
// PageNum (identity when nil).
func ocrParagraphs(paras []ocrPara, stack *ocrHeadingStack, page func(int) int) []Paragraph {
	body := map[int][]int{} // page -> line heights of body paragraphs
	for _, p := range paras {
		if p.words >= 6 {
			body[p.page] = append(body[p.page], p.lineHeight)
		}
	}
	median := map[int]int{}
	for pg, hs := range body {
		slices.Sort(hs)
		median[pg] = hs[len(hs)/2]
	}
	out := make([]Paragraph, 0, len(paras))
	for _, p := range paras {
		text := NormalizeSpaces(p.text)
		if text == "" {
			continue
		}
		pn := p.page
		if page != nil {
			pn = page(p.page)
		}
		m := median[p.page]
		heading := m > 0 && p.lines <= 2 && p.words <= 14 && p.lineHeight*100 >= m*115 &&
			!strings.HasSuffix(text, ".")
		if heading {
			out = append(out, Paragraph{Text: text, PageNum: pn, Heading: true, Breadcrumb: stack.push(p.lineHeight, text)})
			continue
		}
		out = append(out, Paragraph{Text: text, PageNum: pn, Breadcrumb: stack.breadcrumb()})
	}
	return out
}
