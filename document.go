package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Paragraph is one block of text extracted from a document or web page, in
// reading order. ExtractParagraphs and HTMLToStructuredText produce them;
// BuildChunks groups them into chunks.
type Paragraph struct {
	// Text is the paragraph's text with whitespace normalised (see
	// NormalizeSpaces). A table row is one paragraph, a list item carries its
	// marker ("- " or "1. ") in front.
	Text string
	// PageNum is the 1-based page the paragraph starts on (0 when the source
	// has no pages, such as a web page).
	PageNum int
	// Heading reports whether the paragraph is a section heading.
	Heading bool
	// Breadcrumb is the path of headings above (and including, for a
	// heading) this paragraph, joined with " > ".
	Breadcrumb string
}

// Chunk is a piece of a document sized for embedding, built by BuildChunks.
//
// A chunk never spans two sections: a section starts at a heading (a run of
// headings with no text between them counts as one, so a heading always
// stays with the text that follows it) and, for sources without heading
// paragraphs, wherever the paragraphs' Breadcrumb changes.
type Chunk struct {
	// Text is the chunk's text: whole words of the section's paragraphs, in
	// order, words separated by one space and paragraphs by one newline
	// ("\n"). It holds at most BuildChunks' maxSize characters (runes) and
	// starts with up to overlapSize characters of the previous chunk of the
	// same section. The first chunk of a section starts with the section's
	// heading line(s). Index this text for embedding.
	Text string
	// ParentText is the text around the chunk, for the language model at
	// answer time: a window of whole words of up to max(2*maxSize, 3000)
	// characters containing Text, centred on it where possible and bounded by
	// the section (it never reaches into the previous or next section; a
	// short section is its own ParentText, heading included). It contains
	// Text as a substring, and equals Text when Text alone is that long.
	ParentText string
	// Pages is the page range the chunk's paragraphs lie on: "3" or "3-4"
	// (lowest and highest non-zero Paragraph.PageNum); "" when the source
	// has no pages.
	Pages string
	// Section is the nearest heading: the text of the heading the chunk's
	// section starts with (the last one of a run of headings); for a section
	// without a heading paragraph, the last element of Breadcrumb; "" before
	// the first heading.
	Section string
	// Top is the top-level heading of the chunk: the first element of
	// Breadcrumb ("" when Breadcrumb is empty).
	Top string
	// Breadcrumb is the heading path of the chunk's section, joined with
	// " > " (the Breadcrumb of the section's heading, which includes the
	// heading itself; for a section without a heading, that of its first
	// paragraph).
	Breadcrumb string
	// URL is left empty by BuildChunks; callers set it to the page URL or
	// file path the chunk came from.
	URL string
}

// ErrUnsupportedFormat is returned by ExtractParagraphs for a file whose
// extension is neither .pdf nor .docx.
var ErrUnsupportedFormat = errors.New("unsupported document format")

// SupportedDocumentExt reports whether ExtractParagraphs handles files with
// the extension ext (".pdf" or ".docx", with the dot, in any case).
func SupportedDocumentExt(ext string) bool {
	switch strings.ToLower(ext) {
	case ".pdf", ".docx":
		return true
	}
	return false
}

// ExtractParagraphs returns the paragraphs of the PDF or .docx file at path,
// in reading order. The extension decides the format, in any case; any other
// extension gives an error wrapping ErrUnsupportedFormat. Empty paragraphs
// are left out.
func ExtractParagraphs(path string) ([]Paragraph, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pdf":
		return extractPDF(path)
	case ".docx":
		return extractDocx(path)
	}
	return nil, fmt.Errorf("extract paragraphs from %s: %w (want .pdf or .docx)", path, ErrUnsupportedFormat)
}

// NormalizeSpaces returns s with every run of whitespace replaced by one
// ASCII space and leading and trailing whitespace removed.
//
// Whitespace is what unicode.IsSpace reports: ASCII space, tab and line
// breaks, U+0085, NO-BREAK SPACE U+00A0, U+1680, the spaces U+2000-U+200A,
// the line and paragraph separators U+2028/U+2029, U+202F, U+205F and the
// ideographic space U+3000. The invisible characters ZERO WIDTH SPACE
// U+200B, WORD JOINER U+2060, ZERO WIDTH NO-BREAK SPACE (byte-order mark)
// U+FEFF and SOFT HYPHEN U+00AD are removed without leaving a space, so a
// word they sit in stays one word. ZERO WIDTH (NON-)JOINER U+200C/U+200D
// are kept: they change how Indic and Arabic scripts and emoji render.
// Invalid UTF-8 bytes are kept as they are. When s needs no change, s itself
// is returned without allocating.
func NormalizeSpaces(s string) string {
	s, _ = normalizeSpacesASCII(s)
	return s
}

// normalizeSpacesASCII is NormalizeSpaces that also reports whether the
// result is pure ASCII (so its length in bytes is its length in runes).
func normalizeSpacesASCII(s string) (string, bool) {
	prevSpace := true // at the start, a space would be leading
	ascii := true
	for i := 0; i < len(s); {
		// Fast loop over printable ASCII other than space.
		for i < len(s) && s[i] > ' ' && s[i] < utf8.RuneSelf {
			i++
			prevSpace = false
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c != ' ' || prevSpace {
				if c < ' ' && !asciiSpaceNorm[c] {
					prevSpace = false // a control character, kept
					i++
					continue
				}
				return normalizeSpacesFrom(s, i)
			}
			prevSpace = true
			i++
			continue
		}
		ascii = false
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) || zeroWidthNorm(r) {
			return normalizeSpacesFrom(s, i)
		}
		prevSpace = false
		i += n
	}
	if prevSpace && len(s) > 0 {
		return s[:len(s)-1], ascii // exactly one trailing ASCII space
	}
	return s, ascii
}

// asciiSpaceNorm marks the ASCII bytes unicode.IsSpace reports as spaces.
var asciiSpaceNorm = [33]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// zeroWidthNorm reports whether NormalizeSpaces drops r.
func zeroWidthNorm(r rune) bool {
	return r == 0x200B || r == 0x2060 || r == 0xFEFF || r == 0x00AD
}

// normalizeSpacesFrom is the slow path of NormalizeSpaces: s[:i] is already
// normalised (it may end in one space).
func normalizeSpacesFrom(s string, i int) (string, bool) {
	ascii := true
	for k := 0; k < i; k++ {
		if s[k] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	pending := false
	if i > 0 && s[i-1] == ' ' {
		// s[:i] ends in a space: hold it back until a non-space follows.
		b.Reset()
		b.WriteString(s[:i-1])
		pending = true
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' && asciiSpaceNorm[c] {
				pending = b.Len() > 0
				i++
				continue
			}
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case n == 1: // invalid UTF-8: keep the byte
			ascii = false
		case unicode.IsSpace(r):
			pending = b.Len() > 0
			i += n
			continue
		case zeroWidthNorm(r):
			i += n
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		ascii = false
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String(), ascii
}

// BuildChunks groups paras into chunks of at most maxSize characters
// (runes, not bytes) for embedding, carrying up to overlapSize characters of
// each chunk over into the next one of the same section. Chunk documents
// what each field holds; URL is left empty for the caller to set.
//
// Paragraphs are split into sections (see Chunk) and chunks never cross a
// section boundary. Within a section, chunks hold whole words: a chunk ends
// at a paragraph end if that keeps it at least half full, else at a sentence
// end (a word ending in '.', '!' or '?') under the same condition, else
// after the last word that fits; it never ends right after a heading while
// text of its section follows. Only a word longer than maxSize is cut, into
// pieces of maxSize runes. The overlap is the longest run of whole words at
// the end of a chunk that is at most overlapSize runes long and shorter than
// the chunk.
//
// Degenerate input: paragraphs whose text is empty or only whitespace are
// ignored, and text is normalised with NormalizeSpaces; maxSize <= 0 means no
// size limit, so each section becomes one chunk; overlapSize < 0 is treated
// as 0 and overlapSize > maxSize/2 as maxSize/2, so every chunk advances by
// at least half a chunk. No paragraphs give no chunks (nil).
//
// BuildChunks is deterministic: the same input gives the same chunks. It
// runs in time linear in the size of the input plus the size of the output.
// The chunks' strings share memory with each other.
func BuildChunks(paras []Paragraph, maxSize, overlapSize int) []Chunk {
	cb := chunkBuilder{maxSize: maxSize, overlap: overlapSize, parentSize: max(2*maxSize, 3000)}
	if maxSize <= 0 {
		cb.maxSize, cb.overlap = 0, 0
	} else {
		cb.overlap = min(max(overlapSize, 0), maxSize/2)
	}
	var (
		sec      []Paragraph // the current section
		texts    []string    // normalised texts of sec
		ascii    []bool      // whether each text is pure ASCII
		sawBody  bool        // sec has a non-heading paragraph
		bodyPath string      // Breadcrumb of sec's first non-heading paragraph
	)
	for _, p := range paras {
		t, isASCII := normalizeSpacesASCII(p.Text)
		if t == "" {
			continue
		}
		if len(sec) > 0 && sawBody && (p.Heading || p.Breadcrumb != bodyPath) {
			cb.section(sec, texts, ascii)
			sec, texts, ascii, sawBody = sec[:0], texts[:0], ascii[:0], false
		}
		if !p.Heading && !sawBody {
			sawBody, bodyPath = true, p.Breadcrumb
		}
		sec = append(sec, p)
		texts = append(texts, t)
		ascii = append(ascii, isASCII)
	}
	if len(sec) > 0 {
		cb.section(sec, texts, ascii)
	}
	return cb.chunks
}

// chunkBuilder holds BuildChunks' settings, its output and scratch space
// reused from section to section.
type chunkBuilder struct {
	maxSize, overlap, parentSize int
	chunks                       []Chunk
	words                        []chunkWord
}

// chunkWord is one word (or piece of an over-long word) of a section's text.
type chunkWord struct {
	start, end         int // byte offsets in the section text
	runeStart, runeEnd int // rune offsets in the section text
	para               int // index of the paragraph in the section
	flags              uint8
}

const (
	chunkParaStart  uint8 = 1 << iota // first word of a paragraph
	chunkSentEnd                      // ends with '.', '!' or '?'
	chunkAfterHead                    // first word after a heading paragraph
	chunkWordPieces                   // continues the previous piece (no separator before)
)

// section appends the chunks of one section: its paragraphs, their
// normalised, non-empty texts and whether each text is pure ASCII.
func (cb *chunkBuilder) section(sec []Paragraph, texts []string, isASCII []bool) {
	// Section text: paragraphs joined by "\n"; texts are normalised, so
	// words are separated by single spaces.
	n := len(texts) - 1
	for _, t := range texts {
		n += len(t)
	}
	var sb strings.Builder
	sb.Grow(n)
	words := cb.words[:0]
	off, roff := 0, 0
	lastHead := -1
	for pi, t := range texts {
		if pi > 0 {
			sb.WriteByte('\n')
			off++
			roff++
		}
		sb.WriteString(t)
		ascii := isASCII[pi]
		flags := chunkParaStart
		if pi > 0 && sec[pi-1].Heading {
			flags |= chunkAfterHead
		}
		if sec[pi].Heading {
			lastHead = pi
		}
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
			if cb.maxSize > 0 && rl > cb.maxSize {
				words = cb.appendPieces(words, w, off+i, roff, pi, flags)
			} else {
				cw := chunkWord{start: off + i, end: off + j, runeStart: roff, runeEnd: roff + rl, para: pi, flags: flags}
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
		off += len(t)
	}
	cb.words = words
	text := sb.String()

	// Section metadata.
	var crumb, section string
	if lastHead >= 0 {
		crumb, section = sec[lastHead].Breadcrumb, texts[lastHead]
		if crumb == "" {
			crumb = section
		}
	} else {
		crumb = sec[0].Breadcrumb
		section = crumb
		if k := strings.LastIndex(crumb, " > "); k >= 0 {
			section = crumb[k+3:]
		}
	}
	top := crumb
	if k := strings.Index(crumb, " > "); k >= 0 {
		top = crumb[:k]
	}
	base := Chunk{Section: section, Top: top, Breadcrumb: crumb}

	nw := len(words)
	if cb.maxSize <= 0 {
		cb.emit(base, sec, text, 0, nw)
		return
	}
	i, j := 0, 0
	for i < nw {
		j = max(j, i+1)
		for j < nw && words[j].runeEnd-words[i].runeStart <= cb.maxSize {
			j++
		}
		if j < nw {
			j = cb.preferredEnd(i, j)
		}
		cb.emit(base, sec, text, i, j)
		if j >= nw {
			break
		}
		k := j
		for k-1 > i && words[j-1].runeEnd-words[k-1].runeStart <= cb.overlap {
			k--
		}
		i = k
	}
}

// appendPieces appends the word w, longer than maxSize runes, as pieces of
// maxSize runes (the last one shorter).
func (cb *chunkBuilder) appendPieces(words []chunkWord, w string, off, roff, para int, flags uint8) []chunkWord {
	start, rstart, count := 0, roff, 0
	for k := range w {
		if count == cb.maxSize {
			words = append(words, chunkWord{start: off + start, end: off + k, runeStart: rstart, runeEnd: rstart + count, para: para, flags: flags})
			flags = chunkWordPieces
			start, rstart, count = k, rstart+count, 0
		}
		count++
	}
	words = append(words, chunkWord{start: off + start, end: off + len(w), runeStart: rstart, runeEnd: rstart + count, para: para, flags: flags})
	return words
}

// preferredEnd returns where the chunk starting at word i ends, given that
// words i..jmax-1 are the most that fit and more words follow: the last
// paragraph end, else the last sentence end, that keeps the chunk at least
// half full and does not leave a heading at its end; else jmax.
func (cb *chunkBuilder) preferredEnd(i, jmax int) int {
	words := cb.words
	if words[jmax].flags&chunkWordPieces != 0 {
		return jmax // inside an over-long word: cut where it must be cut
	}
	half := (cb.maxSize + 1) / 2
	sentence := -1
	for k := jmax; k > i+1; k-- {
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

// emit appends the chunk of words i..j-1 of the section with text text.
func (cb *chunkBuilder) emit(base Chunk, sec []Paragraph, text string, i, j int) {
	words := cb.words
	c := base
	c.Text = text[words[i].start:words[j-1].end]
	c.ParentText = cb.parentWindow(text, i, j)
	lo, hi := 0, 0
	for p := words[i].para; p <= words[j-1].para; p++ {
		n := sec[p].PageNum
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
	switch {
	case lo == 0:
	case lo == hi:
		c.Pages = strconv.Itoa(lo)
	default:
		c.Pages = strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
	}
	cb.chunks = append(cb.chunks, c)
}

// parentWindow returns the ParentText of the chunk of words i..j-1: up to
// parentSize runes of whole words of the section around it, half of the
// spare room before and half after the chunk, any room one side cannot use
// going to the other.
func (cb *chunkBuilder) parentWindow(text string, i, j int) string {
	words := cb.words
	n := len(words)
	if words[n-1].runeEnd-words[0].runeStart <= cb.parentSize {
		return text
	}
	spare := cb.parentSize - (words[j-1].runeEnd - words[i].runeStart)
	if spare <= 0 {
		return text[words[i].start:words[j-1].end]
	}
	// b: end of the window after extending right by at most spare/2.
	b := cb.extendRight(j, words[j-1].runeEnd+spare/2)
	// a: start after extending left by whatever is left.
	used := words[b-1].runeEnd - words[j-1].runeEnd
	a := cb.extendLeft(i, words[i].runeStart-(spare-used))
	// b again, with the room the left side could not use.
	used = words[i].runeStart - words[a].runeStart
	b = cb.extendRight(j, words[j-1].runeEnd+(spare-used))
	return text[words[a].start:words[b-1].end]
}

// extendRight returns the largest b >= j with words[b-1].runeEnd <= limit.
func (cb *chunkBuilder) extendRight(j, limit int) int {
	w := cb.words[j:]
	lo, hi := 0, len(w) // find the first k with w[k].runeEnd > limit
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w[m].runeEnd <= limit {
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
		if w[m].runeStart < limit {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
