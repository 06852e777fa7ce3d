package main

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chinese, Japanese and Korean in the extractive answer: their words are
// not separated by spaces, so a question's keyword is a whole clause that
// no unit holds as a word; their characters take two terminal columns and
// carry about as much as a Latin word.

// wideRune reports whether r is a Han, kana or Hangul character, or CJK
// punctuation or a full-width form: two columns wide in a terminal.
func wideRune(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x3000 && r <= 0x303F, r >= 0xFF01 && r <= 0xFF60, r == 0x30FC:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// textWidth returns the columns s takes in a terminal: one per rune, two
// per wide rune (wideRune).
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is the columns r takes in a terminal: 2 when wide, else 1.
func runeWidth(r rune) int {
	if wideRune(r) {
		return 2
	}
	return 1
}

// joinsCJK reports whether two units meet inside Chinese or Japanese text
// (wide, not Hangul, on both sides), which puts no space between sentences.
func joinsCJK(prev, next string) bool {
	a, _ := utf8.DecodeLastRuneInString(prev)
	b, _ := utf8.DecodeRuneInString(next)
	noSpace := func(r rune) bool { return wideRune(r) && !unicode.Is(unicode.Hangul, r) }
	return noSpace(a) && noSpace(b)
}

// cjkTerms replaces each keyword that holds wide characters by the pairs
// of adjacent wide characters in it ("受験者数を" gives "受験", "験者",
// "者数", "数を"; pairs of hiragana alone, particles and endings, only
// when the keyword has nothing else), which unitScore finds inside a
// unit's text, and its runs of other letters of 3 or more ("PostgreSQLの"
// keeps "postgresql"). The engine's confidence rule expands keywords the
// same way (its cjkKeywords).
func cjkTerms(terms []string) []string {
	out := make([]string, 0, len(terms))
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range terms {
		if !strings.ContainsFunc(t, wideRune) {
			add(t)
			continue
		}
		rs := []rune(t)
		hira := func(r rune) bool { return unicode.Is(unicode.Hiragana, r) }
		kanaOnly := !strings.ContainsFunc(t, func(r rune) bool { return wideRune(r) && !hira(r) })
		start := -1 // start of the current run of other letters
		for i, r := range rs {
			if !wideRune(r) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && i-start >= 3 {
				add(string(rs[start:i]))
			}
			start = -1
			if i+1 < len(rs) && wideRune(rs[i+1]) && (kanaOnly || !hira(r) || !hira(rs[i+1])) {
				add(string(rs[i : i+2]))
			}
		}
		if start >= 0 && len(rs)-start >= 3 {
			add(string(rs[start:]))
		}
	}
	return out
}

// isCJKPair reports whether term is a pair of wide characters (cjkTerms),
// matched anywhere inside a unit's text.
func isCJKPair(term string) bool {
	r1, n := utf8.DecodeRuneInString(term)
	r2, m := utf8.DecodeRuneInString(term[n:])
	return n+m == len(term) && wideRune(r1) && wideRune(r2)
}
