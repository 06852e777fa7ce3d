package main

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf8"
)

// termSafeWriter keeps control characters that came from documents, file
// names or web pages off the user's terminal: everything the CLI prints
// goes through it. It passes text, newlines and tabs and drops every other
// C0 and C1 control character, DEL, the bidirectional overrides and
// isolates (U+202A-U+202E, U+2066-U+2069) and whole escape sequences. On a
// terminal it keeps exactly the sequences the CLI draws itself: the colours
// of ui.go (SGR 0, 1, 2, 31, 32, 33, 36), OSC-8 hyperlinks, and "\r\033[K"
// (clear the line) at the start of a write, where the progress bar and
// spinner put it. A write is expected to hold whole sequences (the CLI
// never splits one). Not safe for concurrent use beyond what w allows.
type termSafeWriter struct {
	w io.Writer
	// own: keep the CLI's own sequences (w is a terminal).
	own bool
}

// newTermSafeWriter wraps w; the CLI's own sequences pass only when w is
// a terminal.
func newTermSafeWriter(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &termSafeWriter{w: w, own: isTerminal(w)}
}

// Write writes the cleaned p and reports len(p) on success.
func (t *termSafeWriter) Write(p []byte) (int, error) {
	if _, err := t.w.Write(termClean(p, t.own)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the underlying writer (isTerminal and terminalWidth look
// through it).
func (t *termSafeWriter) Unwrap() io.Writer { return t.w }

// ownSGR are the colour sequences ui.go writes.
var ownSGR = [][]byte{[]byte("\033[0m"), []byte("\033[1m"), []byte("\033[2m"), []byte("\033[31m"),
	[]byte("\033[32m"), []byte("\033[33m"), []byte("\033[36m")}

// termClean returns p without control characters and escape sequences,
// keeping the CLI's own when own is set.
func termClean(p []byte, own bool) []byte {
	if !needsClean(p) {
		return p
	}
	out := make([]byte, 0, len(p))
	i := 0
	if own && bytes.HasPrefix(p, []byte("\r\033[K")) {
		out = append(out, "\r\033[K"...)
		i = 4
	}
	for i < len(p) {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
			i++
		case c == 0x1b:
			if own {
				if n := ownSequence(p[i:]); n > 0 {
					out = append(out, p[i:i+n]...)
					i += n
					continue
				}
			}
			i += escapeLen(p[i:])
		case c < 0x20 || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(p[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				if c >= 0x80 && c <= 0x9f { // a raw 8-bit C1 control (0x9b is CSI)
					i++
					continue
				}
				out = append(out, c)
			case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
				// C1 controls and bidirectional overrides: dropped.
			default:
				out = append(out, p[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// needsClean reports whether p holds anything termClean changes.
func needsClean(p []byte) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return true
		}
	}
	return false
}

// ownSequence returns the length of the CLI's own escape sequence at the
// start of p (an SGR colour or an OSC-8 hyperlink), 0 if there is none.
func ownSequence(p []byte) int {
	for _, s := range ownSGR {
		if bytes.HasPrefix(p, s) {
			return len(s)
		}
	}
	// OSC 8: "\033]8;;" target "\033\\", the target printable ASCII.
	if bytes.HasPrefix(p, []byte("\033]8;;")) {
		for j := 5; j < len(p); j++ {
			switch c := p[j]; {
			case c == 0x1b:
				if j+1 < len(p) && p[j+1] == '\\' {
					return j + 2
				}
				return 0
			case c < 0x21 || c > 0x7e:
				return 0
			}
		}
	}
	return 0
}

// escapeLen returns the length of the escape sequence at the start of p
// (ESC followed by a CSI, OSC, DCS, APC, PM or SOS string, or by one
// character), at most len(p).
func escapeLen(p []byte) int {
	if len(p) < 2 {
		return len(p)
	}
	switch p[1] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for j := 2; j < len(p); j++ {
			if p[j] >= 0x40 && p[j] <= 0x7e {
				return j + 1
			}
			if p[j] < 0x20 || p[j] > 0x7e {
				return j
			}
		}
		return len(p)
	case ']', 'P', '_', '^', 'X': // strings ended by BEL or ST (ESC \)
		for j := 2; j < len(p); j++ {
			if p[j] == 0x07 {
				return j + 1
			}
			if p[j] == 0x1b {
				if j+1 < len(p) && p[j+1] == '\\' {
					return j + 2
				}
				return j
			}
			if p[j] == '\n' {
				return j // an unterminated string ends at the line
			}
		}
		return len(p)
	}
	return 2
}

// printable returns s (a file name, URL or error reason) as one line of
// printable text for human output: when s holds a newline, tab, other
// control character or invalid UTF-8, it is escaped as Go's %q escapes it,
// without the quotes ("evil\nIndexed 999 sources.txt" prints as
// evil\nIndexed 999 sources.txt on one line); else s is returned as it
// is. --json output keeps the real name.
func printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || r != ' ' && !strconv.IsPrint(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
