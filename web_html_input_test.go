package engine

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// htmlRepeatReader streams head, unit repeated until size bytes, then
// tail, without holding the input in memory.
type htmlRepeatReader struct {
	head, unit, tail string
	size             int64 // bytes of head and units
	off              int64
	tailOff          int
}

func (r *htmlRepeatReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) && r.off < r.size {
		var k int
		if r.off < int64(len(r.head)) {
			k = copy(b[n:], r.head[r.off:])
		} else {
			i := (r.off - int64(len(r.head))) % int64(len(r.unit))
			k = copy(b[n:], r.unit[i:])
		}
		k = int(min(int64(k), r.size-r.off))
		n += k
		r.off += int64(k)
	}
	if n < len(b) && r.tailOff < len(r.tail) {
		k := copy(b[n:], r.tail[r.tailOff:])
		r.tailOff += k
		n += k
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestHTMLToStructuredTextBounds checks that each bound of the HTML reader
// holds on a stream beyond it, refusing with ErrDocumentTooLarge.
func TestHTMLToStructuredTextBounds(t *testing.T) {
	cases := []struct {
		name string
		in   io.Reader
		want string
	}{
		{"input over 64 MiB", &htmlRepeatReader{head: "<html><body>", unit: "<p>word word word</p>\n", size: htmlMaxInputBytes + 100},
			"bytes of HTML"},
		{"one text node over 16 MiB", &htmlRepeatReader{head: "<p>", unit: "word ", size: htmlMaxToken + 100, tail: "</p>"},
			"text node or tag"},
		{"one attribute over 16 MiB", &htmlRepeatReader{head: `<p title="`, unit: "x", size: htmlMaxToken + 100, tail: `">a</p>`},
			"text node or tag"},
		{"tables holding a million cells", &htmlRepeatReader{head: "<table>", unit: "<tr><td><td><td><td>", size: htmlMaxCells * 6},
			"cells"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			paras, err := HTMLToStructuredText(c.in)
			if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %d paragraphs, err %v; want ErrDocumentTooLarge naming %q", len(paras), err, c.want)
			}
		})
	}
}

// TestHTMLToStructuredTextTextBudget checks the budget of text in the
// paragraphs, also where a data table repeats its column labels in every
// row (the rows are longer than the input).
func TestHTMLToStructuredTextTextBudget(t *testing.T) {
	label := strings.Repeat("L", 150)
	table := "<table><tr><th>" + label + "</th><th>" + label + "</th></tr>" + strings.Repeat("<tr><td>a<td>b", 2000) + "</table>"
	paras, err := htmlParseText(strings.NewReader(table), true, 1<<20)
	if err != nil || len(paras) != 2000 || paras[0].Text != label+": a | "+label+": b" {
		t.Fatalf("within the budget: %d paragraphs, err %v", len(paras), err)
	}
	// 2,000 rows of 310 bytes from 30 KB of input.
	if _, err := htmlParseText(strings.NewReader(table), true, 300_000); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("table rows past the budget: err %v, want ErrDocumentTooLarge", err)
	}
	text := strings.Repeat("<p>twenty bytes text</p>", 1000)
	if _, err := htmlParseText(strings.NewReader(text), true, 15_000); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("paragraphs past the budget: err %v, want ErrDocumentTooLarge", err)
	}
	if _, err := htmlParseText(strings.NewReader("<p>"+strings.Repeat("word ", 10_000)), true, 40_000); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("one paragraph past the budget: err %v, want ErrDocumentTooLarge", err)
	}
}

// TestHTMLToStructuredTextLongParagraph checks that a paragraph longer than
// htmlMaxParagraph goes on in new ones at spaces, losing no word.
func TestHTMLToStructuredTextLongParagraph(t *testing.T) {
	const words = 3 * htmlMaxParagraph / 10
	in := &htmlRepeatReader{head: "<p>", unit: "wordsmith ", size: 3 + 10*words, tail: "</p><p>after</p>"}
	paras, err := HTMLToStructuredText(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(paras) < 4 || paras[len(paras)-1].Text != "after" {
		t.Fatalf("got %d paragraphs, want the long one split in at least 3 and then \"after\"", len(paras))
	}
	n := 0
	for _, p := range paras[:len(paras)-1] {
		if len(p.Text) > htmlMaxParagraph+len("wordsmith") {
			t.Errorf("a paragraph of %d bytes", len(p.Text))
		}
		for _, w := range strings.Fields(p.Text) {
			if w != "wordsmith" {
				t.Fatalf("word %q: split inside a word", w)
			}
			n++
		}
	}
	if n != words {
		t.Errorf("%d words, want %d", n, words)
	}
}

// TestHTMLToStructuredTextLateCharset checks the streaming charset choice
// when the first non-ASCII byte comes after the decoder's first buffer.
func TestHTMLToStructuredTextLateCharset(t *testing.T) {
	pad := "<p>" + strings.Repeat("padding ", 20_000) + "</p>"
	cases := []struct{ name, in, want string }{
		{"windows-1252", pad + "<p>na\xefve</p>", "naïve"},
		{"UTF-8", pad + "<p>naïve</p>", "naïve"},
		{"declared Shift_JIS", "<meta charset=shift_jis>" + pad + "<p>\x93\xfa\x96\x7b\x8c\xea</p>", "日本語"},
		{"UTF-8 then an invalid byte", pad + "<p>naïve</p>" + strings.Repeat("x", 70_000) + "<p>a\xffb</p>", "a\uFFFDb"},
	}
	for _, c := range cases {
		paras, err := HTMLToStructuredText(strings.NewReader(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := paras[len(paras)-1].Text; got != c.want {
			t.Errorf("%s: last paragraph %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHTMLToStructuredTextLongTitle checks that a <title> past
// htmlMaxTitle is cut at a character boundary.
func TestHTMLToStructuredTextLongTitle(t *testing.T) {
	in := "<title>x" + strings.Repeat("é", htmlMaxTitle) + "</title><h2>A</h2><p>x</p><h2>B</h2><p>y</p>"
	paras, err := HTMLToStructuredText(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	crumb := paras[len(paras)-1].Breadcrumb
	if !utf8.ValidString(crumb) || len(crumb) > htmlMaxTitle+len(" > B") || !strings.HasPrefix(crumb, "xé") {
		t.Errorf("breadcrumb of %d bytes, valid UTF-8 %v: %.20q", len(crumb), utf8.ValidString(crumb), crumb)
	}
}
