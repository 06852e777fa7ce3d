package engine

import (
	"strings"
	"unicode/utf8"

	snowball "github.com/blevesearch/snowballstem"
)

// Identifiers: besides its parts, the analyzer emits an identifier whole
// as one more term, unstemmed and lower-cased: a run of words joined by
// "_", ".", "::" or a single "-" ("max_log_file_size",
// "http.server.read_timeout", "HashMap::new", "e-mail", "1.4.2"), and a
// word or such a run after "-" or "--" at the start of a token
// ("--allow-private", "-O2"). A CamelCase word ("HashMap", "HTTPServer")
// is a term as it is and its parts ("hash", "map") are extra terms. A
// query naming an identifier whole thus has one keyword more, which only
// the chunks holding the identifier whole have: they rank in the stage of
// chunks having every keyword, above chunks with the parts scattered.

// identTerms calls fn with the extra terms of the identifier whole (lower
// case, as textIdentSpan delimits it): the whole; and for a one-letter
// option glued to a name ("-DCMAKE_BUILD_TYPE", "-Wno-unused"), the name
// and its first word ("cmake_build_type", "cmake"), which a query names
// without the option letter.
func (a *textAnalyzer) identTerms(whole string, env *snowball.Env, fn func(word, term string, extra bool)) *snowball.Env {
	fn(whole, whole, true)
	if len(whole) < 4 || whole[0] != '-' || whole[1] == '-' || !isTextWordRune(rune(whole[1])) {
		return env
	}
	name := whole[2:]
	end := textWordEnd(name, 0)
	if end == 0 || end == len(name) || end < 2 {
		return env // no connector after the option letter's word: "-Wall", "-O2"
	}
	first, term := name[:end], name[:end]
	if a.stem != nil && len(first) > 2 && textASCIILetters(first) {
		term, env = a.stemWord(first, env)
	}
	fn(first, term, true)
	fn(name, name, true)
	return env
}

// textIdentMaxBytes bounds the length of a whole identifier term; longer
// runs (long dotted paths, encoded data) are indexed by their parts only.
const textIdentMaxBytes = 96

// textIdentSpan returns the end of the identifier that starts with the
// word at i of lower (lower-case text) and the start of its whole term
// (before a "-" or "--" flag prefix), and whether there is one: two words
// or more joined by connectors, or a flag.
func textIdentSpan(lower string, i int) (start, end int, ok bool) {
	start = i
	if i >= 1 && lower[i-1] == '-' {
		p := i - 1
		if p >= 1 && lower[p-1] == '-' {
			p--
		}
		if p == 0 || !textIdentJoined(lower, p) {
			start = p
		}
	}
	end = textWordEnd(lower, i)
	parts := 1
	for end < len(lower) {
		k := end
		switch {
		case lower[k] == '_':
			for k < len(lower) && lower[k] == '_' {
				k++
			}
		case lower[k] == '.':
			k++
		case lower[k] == '-' && (k+1 >= len(lower) || lower[k+1] != '-'):
			k++
		case strings.HasPrefix(lower[k:], "::"):
			k += 2
		}
		if k == end || k >= len(lower) || !isTextWordRune(firstRune(lower[k:])) {
			break
		}
		end = textWordEnd(lower, k)
		parts++
	}
	ok = (parts > 1 || start < i) && end-start <= textIdentMaxBytes
	return start, end, ok
}

// textIdentJoined reports whether the rune before byte p of s belongs to
// a word or an operator run: a "-" there joins or continues, it does not
// start a flag.
func textIdentJoined(s string, p int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:p])
	return isTextWordRune(r) || isTextOperator(r) || r == '_' || r == '.' || r == ':'
}

// textWordEnd returns the end of the run of word runes starting at i.
func textWordEnd(s string, i int) int { return textRunEnd(s, i, isTextWordRune) }

// textRunEnd returns the end of the run of runes of s starting at i for
// which in holds.
func textRunEnd(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += size
	}
	return i
}

// textCamelParts calls fn with each part of the CamelCase word w (ASCII
// letters and digits as written, at least two parts: "HashMap" gives
// "Hash" and "Map", "HTTPServer" gives "HTTP" and "Server"); words that
// are not CamelCase give nothing. An acronym's plural is one word
// ("BIGNUMs", "URLs", "APIs" are not "BIGNU" and "Ms": their stem is the
// acronym's), as is one ending in "s" after an upper-case run inside a
// CamelCase word ("ParseURLs" gives "Parse" and "URLs").
func textCamelParts(w string, fn func(part string)) {
	if len(w) < 3 {
		return
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return
		}
	}
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	isLower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	var cuts []int
	for i := 1; i < len(w); i++ {
		plural := i+2 == len(w) && w[i+1] == 's' // "URLs": no cut before "Ls"
		if isUpper(w[i]) && (isLower(w[i-1]) || i+1 < len(w) && isUpper(w[i-1]) && isLower(w[i+1]) && !plural) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return
	}
	prev := 0
	for _, c := range cuts {
		fn(w[prev:c])
		prev = c
	}
	fn(w[prev:])
}
