package engine

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMalformedPDFErrorPrintable: the parser's error for a malformed PDF
// quotes bytes of the file; the error and its reason carry them escaped,
// never raw, and errors.Is still finds ErrInvalidDocument.
func TestMalformedPDFErrorPrintable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	data := []byte("%PDF-1.4\n")
	for range 400 {
		data = append(data, byte(0x80+rng.IntN(0x80)))
	}
	// startxref points at the junk: the parser's "cross-reference table
	// not found" error quotes the token it found there.
	data = append(data, "\nYns\x1b]0;x\x07\nstartxref\n9\n%%EOF\n"...)
	p := filepath.Join(t.TempDir(), "broken.pdf")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ExtractParagraphs(p)
	if !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("err = %v, want ErrInvalidDocument", err)
	}
	var de *DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("err = %T, want *DocumentError", err)
	}
	for what, s := range map[string]string{"Error()": err.Error(), "Reason": de.Reason, "Err": de.Err.Error()} {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\x1b\x07\n\r") {
			t.Errorf("%s carries raw bytes of the file: %q", what, s)
		}
		if len(s) > 4*parserErrorMax+len(p)+100 {
			t.Errorf("%s quotes %d bytes of the file", what, len(s))
		}
	}
}

// TestPrintableText: the escapes of error text.
func TestPrintableText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "plain",
		"Straße 日本":              "Straße 日本",
		"a\nb\tc":                `a\nb\tc`,
		"\xbd\xef x":             `\xbd\xef x`,
		"esc \x1b[31m":           `esc \x1b[31m`,
		"bidi \u202e and \u200b": `bidi \u202e and \u200b`,
	} {
		if got := printableText(in); got != want {
			t.Errorf("printableText(%q) = %q, want %q", in, got, want)
		}
	}
}
