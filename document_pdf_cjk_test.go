package engine

import (
	"fmt"
	"strings"
	"testing"
)

// pdfTestCJKFont adds to d a Type0 font named name (Identity-H, a
// ToUnicode map, no font program) covering the runes of texts, and returns
// the hex string that shows a text in it.
func pdfTestCJKFont(d *pdfTestDoc, name string, texts ...string) func(string) string {
	cids := map[rune]int{}
	var bf strings.Builder
	for _, t := range texts {
		for _, r := range t {
			if _, ok := cids[r]; !ok {
				cids[r] = len(cids) + 1
				fmt.Fprintf(&bf, "<%04X> <%04X>\n", cids[r], r)
			}
		}
	}
	cmap := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n" +
		"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" +
		fmt.Sprintf("%d beginbfchar\n%sendbfchar\n", len(cids), bf.String()) +
		"endcmap CMapName currentdict /CMap defineresource pop end end"
	tu := d.addStream("", cmap)
	desc := d.add(`<< /Type /Font /Subtype /CIDFontType0 /BaseFont /TestMincho /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>`)
	d.addFont(name, fmt.Sprintf(`<< /Type /Font /Subtype /Type0 /BaseFont /TestMincho /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>`, desc, tu))
	return func(s string) string {
		var b strings.Builder
		b.WriteByte('<')
		for _, r := range s {
			fmt.Fprintf(&b, "%04X", cids[r])
		}
		b.WriteByte('>')
		return b.String()
	}
}

// TestPDFJoinsCJKLines: a Japanese paragraph broken across lines, and a
// line shown in pieces with gaps between them, read without spaces inside
// the text (受験者ごとの, not 受験者ごと の), as pdftotext reads it; Latin
// words in the same paragraph keep their spaces.
func TestPDFJoinsCJKLines(t *testing.T) {
	lines := []string{"問題の順番は受験者ごと", "の並べ替えができます。", "受験者数を入力します。"}
	d := newPDFTestDoc()
	show := pdfTestCJKFont(d, "J", lines...)
	var c strings.Builder
	// Two lines of one paragraph, the first shown in two pieces with a gap.
	fmt.Fprintf(&c, "BT /J 12 Tf 72 700 Td %s Tj 80 0 Td %s Tj ET\n", show("問題の順番は"), show("受験者ごと"))
	fmt.Fprintf(&c, "BT /J 12 Tf 72 685 Td %s Tj ET\n", show(lines[1]))
	fmt.Fprintf(&c, "BT /J 12 Tf 72 670 Td %s Tj ET\n", show(lines[2]))
	d.page(c.String())
	got := strings.Join(pdfTestTexts(t, d.bytes()), "|")
	want := "問題の順番は受験者ごとの並べ替えができます。受験者数を入力します。"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
