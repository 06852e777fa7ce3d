package engine

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// pdfTestDeflate returns data compressed for a /FlateDecode stream.
func pdfTestDeflate(data []byte) string {
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	w.Write(data)
	w.Close()
	return buf.String()
}

// TestPDFPageStreamBudget checks that the content one page decodes is
// bounded as a whole, not only per stream: a /Contents array naming one
// small compressed stream many times, or a form drawn many times, used to
// be decoded and concatenated in full (a 67 KB file naming a 64 MiB stream
// 8 times allocated 3.5 GB; 100 times would exhaust memory). Past 64 MiB a
// page is an error wrapping ErrDocumentTooLarge, as is a page with more
// than pdfMaxGlyphsPerPage characters (which was cut there silently).
func TestPDFPageStreamBudget(t *testing.T) {
	blank := pdfTestDeflate(bytes.Repeat([]byte(" "), 9<<20))
	cases := map[string]func(d *pdfTestDoc){
		"contents array": func(d *pdfTestDoc) {
			s := d.addStream("/Filter /FlateDecode", blank)
			refs := strings.Repeat(fmt.Sprintf("%d 0 R ", s), 8)
			d.pages = append(d.pages, d.add("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Contents ["+refs+"] >>"))
		},
		"form drawn often": func(d *pdfTestDoc) {
			x := d.addStream("/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Filter /FlateDecode", blank)
			c := d.addStream("", strings.Repeat("/X Do ", 8))
			d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Resources << /XObject << /X %d 0 R >> >> /Contents %d 0 R >>", x, c)))
		},
		"one stream over the limit": func(d *pdfTestDoc) {
			s := d.addStream("/Filter /FlateDecode", pdfTestDeflate(bytes.Repeat([]byte(" "), pdfMaxStreamBytes+1)))
			d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Contents %d 0 R >>", s)))
		},
		"too many characters": func(d *pdfTestDoc) {
			d.page("BT /F1 1 Tf 0 0 Td (" + strings.Repeat("x", pdfMaxGlyphsPerPage+1) + ") Tj ET")
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			d := newPDFTestDoc()
			d.page(pdfTestLine("F1", 10, 72, 700, "A page of text."))
			build(d)
			_, err := extractPDFBytes(d.bytes())
			if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "page 2") {
				t.Errorf("err = %v, want ErrDocumentTooLarge naming page 2", err)
			}
		})
	}
	// Within the budget, the same shapes read as before.
	d := newPDFTestDoc()
	s1 := d.addStream("", pdfTestLine("F1", 10, 72, 700, "First part."))
	s2 := d.addStream("", pdfTestLine("F1", 10, 72, 600, "Second part."))
	d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Contents [%d 0 R %d 0 R] >>", s1, s2)))
	if got := strings.Join(pdfTestTexts(t, d.bytes()), "|"); got != "First part.|Second part." {
		t.Errorf("contents array: got %q", got)
	}
}

// TestPDFTextBudget checks that a PDF stops being read once its text
// passes the document limit (64 MiB), instead of building all of it and
// leaving ExtractParagraphs to refuse it afterwards: a 41 KB file of 300
// pages sharing one compressed content stream gave 256 MB of text and
// allocated 28 GB. Here 40 pages share a stream whose 1,000 glyphs each
// map to 2,000 characters through a ToUnicode CMap, 80 MB of text.
func TestPDFTextBudget(t *testing.T) {
	d := newPDFTestDoc()
	long := strings.Repeat("0061", 2000)
	tu := d.addStream("", "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <41> <"+long+"> endbfchar")
	d.addFont("G", fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /G /FirstChar 65 /LastChar 65 /Widths [500] /ToUnicode %d 0 R >>", tu))
	c := d.addStream("/Filter /FlateDecode", pdfTestDeflate([]byte("BT /G 10 Tf 72 700 Td ("+strings.Repeat("A ", 1000)+") Tj ET")))
	for range 40 {
		d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Contents %d 0 R >>", c)))
	}
	_, err := extractPDFBytes(d.bytes())
	if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "bytes of text") {
		t.Errorf("err = %v, want ErrDocumentTooLarge for the text", err)
	}
}
