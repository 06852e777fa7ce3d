package engine

import (
	"bytes"
	"fmt"
	"strings"
)

// pdfTestDoc writes small, valid PDF files for tests: uncompressed content
// streams, Helvetica-like simple fonts with explicit widths and optional
// extra fonts, so each layout rule can be exercised in isolation.
type pdfTestDoc struct {
	objs  []string // object bodies; object n is objs[n-1]
	pages []int    // page object numbers
	fonts string   // font resource dictionary entries
}

// pdfTestWidth is the advance of every glyph of the test font, in 1/1000 em;
// the space is pdfTestSpaceWidth.
const (
	pdfTestWidth      = 500
	pdfTestSpaceWidth = 250
)

func newPDFTestDoc() *pdfTestDoc {
	d := &pdfTestDoc{}
	widths := make([]string, 95)
	for i := range widths {
		widths[i] = fmt.Sprint(pdfTestWidth)
	}
	widths[0] = fmt.Sprint(pdfTestSpaceWidth)
	w := "[" + strings.Join(widths, " ") + "]"
	regular := d.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 32 /LastChar 126 /Widths " + w + " /Encoding /WinAnsiEncoding >>")
	bold := d.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /FirstChar 32 /LastChar 126 /Widths " + w + " /Encoding /WinAnsiEncoding >>")
	d.fonts = fmt.Sprintf("/F1 %d 0 R /F2 %d 0 R", regular, bold)
	return d
}

func (d *pdfTestDoc) add(body string) int {
	d.objs = append(d.objs, body)
	return len(d.objs)
}

// addFont adds a font dictionary under the resource name name.
func (d *pdfTestDoc) addFont(name, dict string) {
	d.fonts += fmt.Sprintf(" /%s %d 0 R", name, d.add(dict))
}

// addStream adds a stream object with the given dictionary entries.
func (d *pdfTestDoc) addStream(dict, data string) int {
	return d.add(fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
}

// page adds an A4 page with the given content stream.
func (d *pdfTestDoc) page(content string) {
	c := d.addStream("", content)
	d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Contents %d 0 R >>", c)))
}

// bytes returns the finished file.
func (d *pdfTestDoc) bytes() []byte {
	res := d.add("<< /Font << " + d.fonts + " >> >>")
	kids := make([]string, len(d.pages))
	for i, p := range d.pages {
		kids[i] = fmt.Sprintf("%d 0 R", p)
	}
	pagesObj := len(d.objs) + 1
	d.add(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d /Resources %d 0 R >>", strings.Join(kids, " "), len(d.pages), res))
	catalog := d.add(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj))
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(d.objs))
	for i, o := range d.objs {
		offsets[i] = b.Len()
		o = strings.ReplaceAll(o, "/Parent PAGES", fmt.Sprintf("/Parent %d 0 R", pagesObj))
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(d.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(d.objs)+1, catalog, xref)
	return b.Bytes()
}

// pdfTestText returns content-stream operators showing each word of line
// at its own position (no space glyphs), with gap em of space between
// words, at font size size starting at (x, y).
func pdfTestWords(font string, size, x, y, gap float64, line string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BT /%s %g Tf %g %g Td ", font, size, x, y)
	for i, w := range strings.Fields(line) {
		if i > 0 {
			fmt.Fprintf(&b, "%g 0 Td ", size*(gap+float64(len(strings.Fields(line)[i-1]))*pdfTestWidth/1000))
		}
		fmt.Fprintf(&b, "(%s) Tj ", pdfTestEscape(w))
	}
	b.WriteString("ET\n")
	return b.String()
}

// pdfTestLine returns operators showing line with real space characters.
func pdfTestLine(font string, size, x, y float64, line string) string {
	return fmt.Sprintf("BT /%s %g Tf %g %g Td (%s) Tj ET\n", font, size, x, y, pdfTestEscape(line))
}

func pdfTestEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	return r.Replace(s)
}
