package engine

import (
	"bytes"
	"errors"
	"testing"
)

// xlsxPackage returns the parts of a workbook: sheets (name, state, the
// sheetData content), the shared strings and the styles part content.
func xlsxPackage(sheets [][3]string, sst, styles string) map[string]string {
	rel := func(id, typ, target string) string {
		return `<Relationship Id="` + id + `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/` + typ + `" Target="` + target + `"/>`
	}
	files := map[string]string{
		"_rels/.rels":                `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rel("rId1", "officeDocument", "xl/workbook.xml") + `</Relationships>`,
		"xl/sharedStrings.xml":       `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + sst + `</sst>`,
		"xl/styles.xml":              `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + styles + `</styleSheet>`,
		"xl/_rels/workbook.xml.rels": "",
	}
	rels := rel("rS", "sharedStrings", "sharedStrings.xml") + rel("rT", "styles", "styles.xml")
	var list string
	for i, s := range sheets {
		id := "rId" + string(rune('a'+i))
		state := ""
		if s[1] != "" {
			state = ` state="` + s[1] + `"`
		}
		list += `<sheet name="` + s[0] + `" sheetId="1"` + state + ` r:id="` + id + `"/>`
		rels += rel(id, "worksheet", "worksheets/sheet"+string(rune('a'+i))+".xml")
		files["xl/worksheets/sheet"+string(rune('a'+i))+".xml"] = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + s[2] + `</sheetData></worksheet>`
	}
	files["xl/workbook.xml"] = `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>` + list + `</sheets></workbook>`
	files["xl/_rels/workbook.xml.rels"] = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels + `</Relationships>`
	return files
}

func TestExtractXlsx(t *testing.T) {
	sst := `<si><t>Item</t></si><si><r><t>Pri</t></r><r><t>ce</t></r><rPh><t>ignored</t></rPh></si><si><t>Kayak</t></si>`
	styles := `<numFmts><numFmt numFmtId="164" formatCode="[$-409]d\-mmm\-yyyy;@"/></numFmts>` +
		`<cellXfs><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="9"/><xf numFmtId="164"/><xf numFmtId="20"/></cellXfs>`
	data := `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="D1" t="inlineStr"><is><t>When</t></is></c><c r="E1" t="str"><v>Share</v></c></row>` +
		`<row r="3"><c r="A3" t="s"><v>2</v></c><c r="B3"><f>1+2</f><v>0.30000000000000004</v></c><c r="C3" t="b"><v>1</v></c><c r="D3" s="1"><v>45810</v></c><c r="E3" s="2"><v>0.125</v></c></row>` +
		`<row><c t="s"><v>2</v></c><c t="e"><v>#DIV/0!</v></c><c/><c s="3"><v>45811.5</v></c><c s="4"><v>0.75</v></c></row>`
	pkg := xlsxPackage([][3]string{{"Stock", "", data}, {"Secret", "hidden", `<row><c t="inlineStr"><is><t>x</t></is></c></row>`}, {"Empty", "", ""}}, sst, styles)
	zipped := zipOf(t, pkg)
	paras, err := extractXlsx(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	want := "H|Stock|Stock\n" +
		"P|Stock|Item: Kayak | Price: 0.3 | TRUE | When: 2025-06-02 | Share: 12.5%\n" +
		"P|Stock|Item: Kayak | Price: #DIV/0! | When: 2025-06-03 | Share: 18:00:00\n"
	if got := mdTexts(paras); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	if _, err := readXlsx(bytes.NewReader(zipped), int64(len(zipped)), 5); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("past the cell cap: %v", err)
	}
	delete(pkg, "xl/worksheets/sheeta.xml")
	zipped = zipOf(t, pkg)
	if _, err := extractXlsx(bytes.NewReader(zipped), int64(len(zipped))); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("missing sheet part: %v", err)
	}
}

func TestXlsxColumnAndNumber(t *testing.T) {
	for ref, want := range map[string]int{"A1": 0, "Z9": 25, "AA10": 26, "xfd1": 16383} {
		if got, ok := xlsxColumn(ref); !ok || got != want {
			t.Errorf("xlsxColumn(%q) = %d, %v", ref, got, ok)
		}
	}
	for f, want := range map[float64]string{1e21: "1e+21", 123456789012: "123456789012", -0.5: "-0.5", 1.0000000000000002: "1"} {
		if got := xlsxNumber(f); got != want {
			t.Errorf("xlsxNumber(%v) = %q, want %q", f, got, want)
		}
	}
}

func FuzzExtractXlsx(f *testing.F) {
	f.Add([]byte(`<row><c t="s"><v>0</v></c><c r="C1" s="1"><v>3</v></c></row><row><c t="s"><v>9</v></c></row>`), []byte(`<si><t>a</t></si>`))
	f.Add([]byte(`<row><c r="ZZZZZ1" t="inlineStr"><is><t>x</t><rPh><t>y</t></rPh></is></c></row>`), []byte(`<si><r><t>`))
	f.Fuzz(func(t *testing.T, sheet, sst []byte) {
		pkg := xlsxPackage([][3]string{{"S", "", string(sheet)}}, string(sst), `<cellXfs><xf numFmtId="14"/><xf numFmtId="10"/></cellXfs>`)
		data := zipOf(t, pkg)
		paras, err := readXlsx(bytes.NewReader(data), int64(len(data)), 1000)
		if err != nil {
			if !errors.Is(err, ErrInvalidDocument) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("unwrapped error: %v", err)
			}
			return
		}
		checkParagraphs(t, paras)
	})
}
