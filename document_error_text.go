package engine

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printableText returns s with every rune that is not printable (control
// characters, bidirectional overrides, invalid UTF-8) escaped as Go's %q
// escapes it, without the quotes: "\n", "\x1b", "\xbd", "\u202e". Text
// that needs no escape is returned as it is. Error messages pass through
// it wherever they may quote bytes of a file, so that no byte of a
// document reaches a terminal or a log line raw.
func printableText(s string) string {
	if textIsPrintable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case r == ' ' || strconv.IsPrint(r) && !unicode.Is(unicode.Bidi_Control, r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// textIsPrintable reports whether s is valid UTF-8 of printable runes and
// spaces only.
func textIsPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			goto slow
		}
	}
	return true
slow:
	for _, r := range s {
		if r == utf8.RuneError || r != ' ' && (!strconv.IsPrint(r) || unicode.Is(unicode.Bidi_Control, r)) {
			return false
		}
	}
	return true
}

// parserError is the error of a third-party parser (ledongthuc/pdf and
// the like), whose message may quote bytes of the file it read: Error is
// the message made printable (printableText), Unwrap keeps errors.Is and
// errors.As working on the original.
type parserError struct{ err error }

// parserErrorMax bounds a parser's message: a token it quotes from a
// malformed file can run to kilobytes.
const parserErrorMax = 200

// Error returns the parser's message with non-printable bytes escaped, cut
// after parserErrorMax bytes (at a rune boundary) with "...".
func (e parserError) Error() string {
	msg := e.err.Error()
	if len(msg) > parserErrorMax {
		cut := parserErrorMax
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return printableText(msg)
}

// Unwrap returns the parser's error.
func (e parserError) Unwrap() error { return e.err }
