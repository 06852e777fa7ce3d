package engine

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestSheetFarColumnsBoundedMemory reads a 2 KB workbook (and the same as
// .ods) whose 2,000 rows each hold one cell in the last column. Rows padded
// to their last column cost 2,000 x 16,384 strings, 2.2 GB; 20,000 such rows
// (20 KB zipped) would not fit in memory at all. Sparse rows cost a few MB.
func TestSheetFarColumnsBoundedMemory(t *testing.T) {
	const rows = 2000
	var xl, od strings.Builder
	od.WriteString(`<office:spreadsheet><table:table table:name="S">`)
	for range rows {
		xl.WriteString(`<row><c r="XFD1" t="b"><v>1</v></c></row>`)
		od.WriteString(`<table:table-row><table:table-cell table:number-columns-repeated="16383"/><table:table-cell><text:p>x</text:p></table:table-cell></table:table-row>`)
	}
	od.WriteString(`</table:table></office:spreadsheet>`)
	for name, c := range map[string]struct {
		data []byte
		read func(*bytes.Reader, int64) ([]Paragraph, error)
		want string
	}{
		"xlsx": {zipOf(t, xlsxPackage([][3]string{{"S", "", xl.String()}}, "", "")),
			func(r *bytes.Reader, n int64) ([]Paragraph, error) { return extractXlsx(r, n) }, "TRUE"},
		"ods": {odfPackage(t, "", od.String()),
			func(r *bytes.Reader, n int64) ([]Paragraph, error) { return extractODF(r, n) }, "x"},
	} {
		t.Run(name, func(t *testing.T) {
			var paras []Paragraph
			var err error
			n := allocatedBy(func() { paras, err = c.read(bytes.NewReader(c.data), int64(len(c.data))) })
			if err != nil {
				t.Fatal(err)
			}
			// The sheet's heading, then the rows after the header row; a
			// label equal to the cell's text is left out, so each row reads
			// just its value.
			if len(paras) != rows || paras[1].Text != c.want || paras[rows-1].Text != c.want {
				t.Fatalf("%d paragraphs, second %+v", len(paras), paras[1])
			}
			if n > 64<<20 {
				t.Errorf("%d-byte file allocated %d MB reading %d one-cell rows", len(c.data), n>>20, rows)
			}
		})
	}
}

// TestSheetSparseRowOrder checks the sparse rows keep what padded rows
// gave: cells given out of column order are read in column order, a
// column given twice keeps its last cell, and several .odt header rows
// join into one label per column.
func TestSheetSparseRowOrder(t *testing.T) {
	sheet := `<row><c r="B1" t="inlineStr"><is><t>Age</t></is></c><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row>` +
		`<row><c r="B2"><v>42</v></c><c r="A2" t="inlineStr"><is><t>Bob</t></is></c><c r="A2" t="inlineStr"><is><t>Alice</t></is></c></row>`
	data := zipOf(t, xlsxPackage([][3]string{{"S", "", sheet}}, "", ""))
	paras, err := extractXlsx(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mdTexts(paras), "H|S|S\nP|S|Name: Alice | Age: 42\n"; got != want {
		t.Errorf("xlsx: got\n%s\nwant\n%s", got, want)
	}

	cell := func(s string) string { return `<table:table-cell><text:p>` + s + `</text:p></table:table-cell>` }
	body := `<office:text><table:table><table:table-header-rows>` +
		`<table:table-row>` + cell("Price") + `<table:table-cell table:number-columns-repeated="2"/></table:table-row>` +
		`<table:table-row>` + cell("Price") + cell("net") + cell("gross") + `</table:table-row>` +
		`</table:table-header-rows><table:table-row>` + cell("Kayak") + cell("100") + cell("119") + `</table:table-row></table:table></office:text>`
	data = odfPackage(t, "", body)
	if paras, err = extractODF(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if got, want := mdTexts(paras), "P||Price: Kayak | net: 100 | gross: 119\n"; got != want {
		t.Errorf("odt: got\n%s\nwant\n%s", got, want)
	}
}

// TestSheetTextBudget checks that a spreadsheet cannot make its readers
// build more text than a document may hold (64 MiB) before refusing it: a
// 100 KB shared string named by 1,000 cells gave 100 MB of row text, and
// an .ods cell of 100 KB repeated across 1,000 columns and 1,000 rows (1
// million cells, within the cell cap, a few KB zipped) would have built
// 100 GB. Both now fail with ErrDocumentTooLarge while reading.
func TestSheetTextBudget(t *testing.T) {
	long := strings.Repeat("word ", 20_000)
	sheet := strings.Repeat(`<row><c t="s"><v>0</v></c></row>`, 1000)
	xl := zipOf(t, xlsxPackage([][3]string{{"S", "", sheet}}, "<si><t>"+long+"</t></si>", ""))
	od := odfPackage(t, "", `<office:spreadsheet><table:table table:name="S"><table:table-row table:number-rows-repeated="1000">`+
		`<table:table-cell table:number-columns-repeated="1000"><text:p>`+long+`</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`)
	for name, read := range map[string]func() ([]Paragraph, error){
		"xlsx": func() ([]Paragraph, error) { return extractXlsx(bytes.NewReader(xl), int64(len(xl))) },
		"ods":  func() ([]Paragraph, error) { return extractODF(bytes.NewReader(od), int64(len(od))) },
	} {
		if _, err := read(); !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "bytes of text") {
			t.Errorf("%s: err = %v, want ErrDocumentTooLarge for the text", name, err)
		}
	}
}

// TestTableLabelBudget checks the same for the .pptx and Markdown tables,
// whose first row labels the others: a 1 KB deck (or a 130 KB Markdown
// file) with a 120 KB header cell over 2,000 one-letter rows gave 228 MB
// of text without an error.
func TestTableLabelBudget(t *testing.T) {
	long := strings.Repeat("label ", 20_000)
	slide := `<p:graphicFrame><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>` + long + `</a:t></a:r></a:p></a:txBody></a:tc></a:tr>` +
		strings.Repeat(`<a:tr><a:tc><a:txBody><a:p><a:r><a:t>x</a:t></a:r></a:p></a:txBody></a:tc></a:tr>`, 2000) + `</a:tbl></p:graphicFrame>`
	deck := zipOf(t, pptxPackage([]string{slide}, nil, []string{""}))
	md := "| " + long + " |\n|---|\n" + strings.Repeat("| x |\n", 2000)
	for name, read := range map[string]func() ([]Paragraph, error){
		"pptx":     func() ([]Paragraph, error) { return extractPptx(bytes.NewReader(deck), int64(len(deck))) },
		"markdown": func() ([]Paragraph, error) { return extractMarkdown([]byte(md)) },
	} {
		if _, err := read(); !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "bytes of text") {
			t.Errorf("%s: err = %v, want ErrDocumentTooLarge for the text", name, err)
		}
	}
}
