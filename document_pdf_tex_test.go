package engine

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// pdfTestTeXBitmapFont adds to d a Type 3 font named name as pdfTeX and
// dvips write TeX's bitmap (pk) fonts: no ToUnicode, no base encoding, each
// glyph used named "a<code>" in /Differences, its procedure empty. codes
// are the byte strings the page will show.
func pdfTestTeXBitmapFont(d *pdfTestDoc, name string, shown ...string) {
	used := map[int]bool{}
	for _, s := range shown {
		for i := 0; i < len(s); i++ {
			used[int(s[i])] = true
		}
	}
	codes := make([]int, 0, len(used))
	for c := range used {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	glyph := d.addStream("", "500 0 0 0 400 600 d1")
	var diffs, procs strings.Builder
	widths := make([]string, 256)
	for i := range widths {
		widths[i] = "0"
	}
	for _, c := range codes {
		fmt.Fprintf(&diffs, "%d/a%d ", c, c)
		fmt.Fprintf(&procs, "/a%d %d 0 R ", c, glyph)
		widths[c] = "500"
	}
	d.addFont(name, fmt.Sprintf("<< /Type /Font /Subtype /Type3 /FontMatrix [0.001 0 0 0.001 0 0] /FontBBox [0 0 1000 1000] "+
		"/FirstChar 0 /LastChar 255 /Widths [%s] /Encoding << /Type /Encoding /Differences [%s] >> /CharProcs << %s >> /Resources << >> >>",
		strings.Join(widths, " "), diffs.String(), procs.String()))
}

// TestPDFTeXBitmapLigatures: the ligature glyphs of TeX's bitmap fonts,
// in OT1 (Computer Modern: ff fi fl ffi ffl at codes 11-15) and in T1
// (EC fonts: at 27-31), read as their letters: "flattened", "firmware",
// "defined" and "different" whole, as in the device-tree-compiler paper
// that read "attened", "rmware", "de ned" and "di erent".
func TestPDFTeXBitmapLigatures(t *testing.T) {
	ot1 := "a \x0dattened tree, the \x0crmware, de\x0cned, di\x0berent, o\x0ece, ba\x0fe"
	t1 := "a \x1dattened tree, the \x1crmware, de\x1cned, di\x1berent, o\x1ece, ba\x1fe"
	want := "a flattened tree, the firmware, defined, different, office, baffle"
	for _, tc := range []struct{ name, shown string }{{"OT1", ot1}, {"T1", t1}} {
		t.Run(tc.name, func(t *testing.T) {
			d := newPDFTestDoc()
			pdfTestTeXBitmapFont(d, "T", tc.shown)
			d.page(fmt.Sprintf("BT /T 10 Tf 72 700 Td (%s) Tj ET\n", pdfTestEscape(tc.shown)))
			got := strings.Join(pdfTestTexts(t, d.bytes()), "|")
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
