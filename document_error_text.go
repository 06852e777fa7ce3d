package engine

import (
	"strconv"
	"unicode/utf8"
)

// printableText returns s with every rune that is not printable (control
// characters, bidirectional overrides and other format characters,
// invalid UTF-8) escaped as Go's %q escapes it, without the quotes: "\n",
// "\x1b", "\xbd", "\u202e". Text that needs no escape is returned as it
// is. Error messages pass through it wherever they may quote bytes of a
// file, so that no byte of a document reaches a terminal or a log line
// raw.
func printableText(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || r != ' ' && !strconv.IsPrint(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
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
