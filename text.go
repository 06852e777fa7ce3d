package engine

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// decodeText returns src as UTF-8: a UTF-8 byte-order mark is dropped, text
// with a UTF-16 byte-order mark (either byte order) is decoded from UTF-16,
// valid UTF-8 is kept as it is, and anything else is read as Latin-1 in its
// windows-1252 form (which gives the printable characters Windows puts in
// 0x80-0x9F, such as curly quotes and the euro sign, where ISO-8859-1 has
// control codes). Line ends are left as they are.
func decodeText(src []byte) []byte {
	switch {
	case bytes.HasPrefix(src, []byte{0xEF, 0xBB, 0xBF}):
		return src[3:]
	case bytes.HasPrefix(src, []byte{0xFF, 0xFE}), bytes.HasPrefix(src, []byte{0xFE, 0xFF}):
		be := src[0] == 0xFE
		src = src[2:]
		u := make([]uint16, len(src)/2)
		for i := range u {
			if be {
				u[i] = uint16(src[2*i])<<8 | uint16(src[2*i+1])
			} else {
				u[i] = uint16(src[2*i+1])<<8 | uint16(src[2*i])
			}
		}
		return []byte(string(utf16.Decode(u)))
	case utf8.Valid(src):
		return src
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(src)
	if err != nil { // windows-1252 decodes every byte; keep the input if not
		return src
	}
	return out
}

// extractText returns the paragraphs of the plain text src, decoded as
// decodeText describes.
//
// Blank lines separate paragraphs; the lines of a paragraph are joined with
// spaces (hard-wrapped text reads as one paragraph). Lines starting with a
// list marker ("- ", "* ", "+ ", "1. ", "1) ") start a new paragraph each,
// the lines after them joining the item. Headings are recognised
// conservatively, so prose is never taken for one:
//
//   - an underlined heading: one line of at most 100 characters followed by
//     a line of only '=' (level 1) or '-' (level 2), at least 3 long, in
//     the same block;
//   - a numbered heading: a block of exactly one line like "2. Methods" or
//     "2.1 Data sources" (at most 80 characters and 10 words, the word after
//     the number starting with an upper-case letter, no final '.', ':', ';',
//     ',', '?' or '!'), followed by a block that is not itself such a line.
//     Its level is the count of numbers ("2.1" is level 2), below the last
//     underlined heading when there was one. A run of numbered one-line
//     blocks is a list, not headings.
//
// Headings build the breadcrumb like HTML headings do. Form feeds count as
// line breaks; NUL bytes are dropped. PageNum is 0.
func extractText(src []byte) ([]Paragraph, error) {
	if len(src) > maxTextFileBytes {
		return nil, fmt.Errorf("%w: %d bytes of text (limit %d)", ErrDocumentTooLarge, len(src), maxTextFileBytes)
	}
	s := string(decodeText(src))
	// NUL is no text (a UTF-16 file without byte-order mark has one in
	// every other byte) and PostgreSQL refuses it in text and JSON.
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\f", "\n", "\x00", "").Replace(s)
	var blocks [][]string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				blocks = append(blocks, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		blocks = append(blocks, cur)
	}

	var (
		out   []Paragraph
		trail headingTrail
		base  int // level of the last underlined heading: numbered ones nest under it
	)
	heading := func(level int, t string) {
		t = NormalizeSpaces(t)
		out = append(out, Paragraph{Text: t, Heading: true, Breadcrumb: trail.push(level, t)})
	}
	for bi, b := range blocks {
		if len(b) == 1 {
			if level, ok := textNumberedHeading(b[0]); ok {
				prevNum := bi > 0 && len(blocks[bi-1]) == 1 && textNumberedLine(blocks[bi-1][0])
				nextNum := bi+1 < len(blocks) && len(blocks[bi+1]) == 1 && textNumberedLine(blocks[bi+1][0])
				if bi+1 < len(blocks) && !prevNum && !nextNum {
					heading(base+level, b[0])
					continue
				}
			}
		}
		var para []string
		flush := func() {
			if t := NormalizeSpaces(strings.Join(para, " ")); t != "" {
				out = append(out, Paragraph{Text: t, Breadcrumb: trail.crumb()})
			}
			para = para[:0]
		}
		for i := 0; i < len(b); i++ {
			line := b[i]
			if i+1 < len(b) {
				if level := textUnderline(b[i+1]); level > 0 && utf8.RuneCountInString(strings.TrimSpace(line)) <= 100 && textUnderline(line) == 0 {
					flush()
					heading(level, line)
					base = level
					i++
					continue
				}
			}
			if textListItem(line) {
				flush()
			}
			para = append(para, line)
		}
		flush()
	}
	return out, nil
}

// textUnderline returns 1 for a line of '=' and 2 for a line of '-' (at
// least 3, spaces around allowed), else 0.
func textUnderline(line string) int {
	t := strings.TrimSpace(line)
	if len(t) < 3 {
		return 0
	}
	switch {
	case strings.Trim(t, "=") == "":
		return 1
	case strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

// textListItem reports whether line starts with a list marker.
func textListItem(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return true
	}
	if strings.HasPrefix(t, "\u2022 ") {
		return true
	}
	i := 0
	for i < len(t) && i < 4 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// textNumberedLine reports whether line starts with a section number
// ("2.", "2.1", "2.1.") followed by a space.
func textNumberedLine(line string) bool {
	_, rest := textSectionNumber(strings.TrimSpace(line))
	return rest != ""
}

// textSectionNumber splits a leading section number off t, returning the
// count of its components and the text after it ("" when t does not start
// with one).
func textSectionNumber(t string) (int, string) {
	parts, i := 0, 0
	for {
		j := i
		for j < len(t) && j-i < 3 && t[j] >= '0' && t[j] <= '9' {
			j++
		}
		if j == i {
			return 0, ""
		}
		parts++
		i = j
		if i < len(t) && t[i] == '.' {
			i++
			if i < len(t) && t[i] >= '0' && t[i] <= '9' {
				continue
			}
		} else if parts == 1 {
			return 0, "" // "2 Methods" is too easily a sentence
		}
		break
	}
	if i >= len(t) || t[i] != ' ' {
		return 0, ""
	}
	return parts, strings.TrimSpace(t[i:])
}

// textNumberedHeading reports whether line looks like a numbered section
// heading and returns its level (see extractText).
func textNumberedHeading(line string) (int, bool) {
	t := strings.TrimSpace(line)
	if utf8.RuneCountInString(t) > 80 {
		return 0, false
	}
	level, rest := textSectionNumber(t)
	if rest == "" || len(strings.Fields(rest)) > 10 {
		return 0, false
	}
	first, _ := utf8.DecodeRuneInString(rest)
	if !unicode.IsUpper(first) {
		return 0, false
	}
	if strings.ContainsRune(".:;,?!", rune(rest[len(rest)-1])) {
		return 0, false
	}
	return level, true
}

// lazyRegexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp after: a process compiles only the
// patterns it uses (compiling them all at package init took a fifth of a
// cold `askyourdocs version`). expr must compile.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
