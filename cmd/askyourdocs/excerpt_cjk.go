package main

import (
	"unicode"
)

// Chinese, Japanese and Korean characters take two terminal columns: the
// progress line counts them so. (The engine's answer quotes count them
// the same way for their length.)

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
