package main

import (
	"strings"
	"unicode/utf8"
)

// keywordPrefix is how a keyword is matched: words of more than 5 letters
// by their first 5 (inflections), as BestExcerpt does.
func keywordPrefix(k string) string {
	if r := []rune(k); len(r) > 5 {
		return string(r[:5])
	}
	return k
}

// isHeadingLine guesses whether a line of a passage is a heading: short,
// without sentence punctuation at its end (a question, as in an FAQ, is
// a heading), followed by more text. (The engine's Excerpt with
// ExcerptOptions.Heading uses the same rule.)
func isHeadingLine(l string) bool {
	l = strings.TrimSpace(l)
	if l == "" || utf8.RuneCountInString(l) > 80 || strings.HasPrefix(l, "- ") || strings.Contains(l, "|") {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(l)
	return !strings.ContainsRune(".!:;,)\"'…", last)
}
