package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
)

// pdfTestCIDs returns the CIDs of text in the Adobe collection ordering,
// by inverting the collection's CID-to-Unicode map: the lowest CID of each
// character, except that Japan1's half-width block (CIDs 231-632, whose
// kana poppler-data's tables leave unmapped) is passed over, as Adobe's
// UniJIS-UTF16-H passes it over for full-width text.
func pdfTestCIDs(t *testing.T, ordering, text string) []uint16 {
	t.Helper()
	m := pdfCollectionCMap(ordering)
	if m == nil {
		t.Fatalf("no CMap for %s", ordering)
	}
	var out []uint16
	for _, r := range text {
		found := false
		for cid := range 1 << 16 {
			if ordering == "Japan1" && cid >= 231 && cid <= 632 {
				continue
			}
			if s, ok := m.lookup(uint32(cid), 2); ok && s == string(r) {
				out, found = append(out, uint16(cid)), true
				break
			}
		}
		if !found {
			t.Fatalf("%s has no CID for %q", ordering, r)
		}
	}
	return out
}

// pdfTestCIDFont returns a Type0 font dictionary with encoding and no
// ToUnicode CMap and no embedded font program (a reader has only the
// codes and the collection to go on).
func pdfTestCIDFont(encoding, ordering string) string {
	return fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /TestCJK /Encoding /%s /DescendantFonts [<< /Type /Font "+
		"/Subtype /CIDFontType0 /BaseFont /TestCJK /CIDSystemInfo << /Registry (Adobe) /Ordering (%s) /Supplement 2 >> "+
		"/DW 1000 /FontDescriptor << /Type /FontDescriptor /FontName /TestCJK /Flags 4 /FontBBox [0 -120 1000 880] "+
		"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >> >>] >>", encoding, ordering)
}

// pdfTestHex is a content-stream hex string of two-byte codes.
func pdfTestHex(codes []uint16) string {
	var b strings.Builder
	b.WriteByte('<')
	for _, c := range codes {
		fmt.Fprintf(&b, "%04x", c)
	}
	b.WriteByte('>')
	return b.String()
}

// TestPDFCIDFontsWithoutToUnicode reads Type0 fonts that have neither a
// ToUnicode CMap nor an embedded font: Identity-H codes through the
// Adobe-Japan1, -GB1, -CNS1 and -Korea1 collections, and UniJIS-UCS2-H
// codes as UTF-16. The text comes out whole (lines of Chinese and
// Japanese joined without a space), and pdftotext, reading the same file
// with poppler-data's own tables, agrees: word F1 >= 0.95 (CJK characters
// and Latin words as the words).
func TestPDFCIDFontsWithoutToUnicode(t *testing.T) {
	lines := []struct{ font, ordering, text string }{
		{"J", "Japan1", "設定ファイルは起動時に一度だけ読み込まれます"},
		{"J", "Japan1", "変更を反映するにはサーバーを再起動してください"},
		{"G", "GB1", "配置文件在启动时读取一次"},
		{"C", "CNS1", "設定檔在啟動時讀取一次"},
		{"K", "Korea1", "설정 파일은 시작할 때 한 번 읽힙니다"},
	}
	d := newPDFTestDoc()
	d.addFont("J", pdfTestCIDFont("Identity-H", "Japan1"))
	d.addFont("G", pdfTestCIDFont("Identity-H", "GB1"))
	d.addFont("C", pdfTestCIDFont("Identity-H", "CNS1"))
	d.addFont("K", pdfTestCIDFont("Identity-H", "Korea1"))
	d.addFont("U", pdfTestCIDFont("UniJIS-UCS2-H", "Japan1"))
	var content strings.Builder
	y := 780.0
	for _, l := range lines {
		fmt.Fprintf(&content, "BT /%s 12 Tf 72 %g Td %s Tj ET\n", l.font, y, pdfTestHex(pdfTestCIDs(t, l.ordering, l.text)))
		y -= 40 // a paragraph gap: each line is its own paragraph
	}
	uni := "日本語のテキストはUTF-16のコードです"
	fmt.Fprintf(&content, "BT /U 12 Tf 72 %g Td %s Tj ET\n", y, pdfTestHex(utf16.Encode([]rune(uni))))
	d.page(content.String())
	data := d.bytes()

	paras, err := extractPDFBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paras {
		got = append(got, p.Text)
	}
	text := strings.Join(got, "\n")
	for _, l := range lines {
		if !strings.Contains(text, l.text) {
			t.Errorf("missing %q in:\n%s", l.text, text)
		}
	}
	if !strings.Contains(text, uni) {
		t.Errorf("missing the UniJIS-UCS2-H line %q in:\n%s", uni, text)
	}

	path := filepath.Join(t.TempDir(), "cid.pdf")
	if p := os.Getenv("CID_DUMP"); p != "" {
		path = p
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || os.Getenv("ASKYOURDOCS_REQUIRE_OCR") == "1" {
			t.Fatalf("pdftotext (poppler-utils, with poppler-data): %v", err)
		}
		t.Skipf("pdftotext not installed: %v", err)
	}
	f1 := pdfTestWordF1(text, string(out))
	t.Logf("word F1 against pdftotext: %.3f", f1)
	if f1 < 0.95 {
		t.Errorf("word F1 against pdftotext %.3f < 0.95\nours:\n%s\npdftotext:\n%s", f1, text, out)
	}
}

var pdfTestWordRE = regexp.MustCompile(`[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]|[\p{L}\p{N}]+`)

// pdfTestWordF1 is the F1 of the multisets of words of got and want, a
// CJK character counting as a word.
func pdfTestWordF1(got, want string) float64 {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, w := range pdfTestWordRE.FindAllString(s, -1) {
			m[w]++
		}
		return m
	}
	g, w := count(got), count(want)
	var inter, ng, nw int
	for k, n := range g {
		ng += n
		inter += min(n, w[k])
	}
	for _, n := range w {
		nw += n
	}
	if ng == 0 || nw == 0 {
		return 0
	}
	p, r := float64(inter)/float64(ng), float64(inter)/float64(nw)
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// TestPDFUndecodableGlyphs: a document whose glyphs mostly have no text
// (a CID font whose collection is unknown) is refused with ErrNoText
// saying so, rather than indexed as the few digits that did decode.
func TestPDFUndecodableGlyphs(t *testing.T) {
	d := newPDFTestDoc()
	d.addFont("X", pdfTestCIDFont("Identity-H", "Unknown1"))
	codes := make([]uint16, 60)
	for i := range codes {
		codes[i] = uint16(1000 + i)
	}
	d.page(fmt.Sprintf("BT /X 12 Tf 72 780 Td %s Tj ET\n", pdfTestHex(codes)) + pdfTestLine("F1", 12, 72, 740, "2001 2002"))
	_, err := extractPDFBytes(d.bytes())
	if !errors.Is(err, ErrNoText) || !strings.Contains(err.Error(), "could not be decoded") {
		t.Fatalf("err = %v, want ErrNoText naming the undecodable glyphs", err)
	}
	if bytes.ContainsAny([]byte(err.Error()), "\x00") {
		t.Errorf("error carries raw bytes: %q", err)
	}
}
