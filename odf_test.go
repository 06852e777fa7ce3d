package engine

import (
	"bytes"
	"errors"
	"testing"
)

const odfNSDecl = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ` +
	`xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ` +
	`xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"`

// odfPackage returns an OpenDocument archive whose content.xml has the
// automatic styles and the body given.
func odfPackage(t testing.TB, styles, body string) []byte {
	return zipOf(t, map[string]string{
		"mimetype":    "application/vnd.oasis.opendocument.text",
		"content.xml": `<office:document-content ` + odfNSDecl + `><office:automatic-styles>` + styles + `</office:automatic-styles><office:body>` + body + `</office:body></office:document-content>`,
	})
}

func TestExtractODFText(t *testing.T) {
	styles := `<text:list-style style:name="N"><text:list-level-style-number text:level="1" style:num-format="1"/><text:list-level-style-bullet text:level="2"/></text:list-style>` +
		`<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/>`
	body := `<office:text><text:p text:style-name="P1">Manual</text:p>` +
		`<text:h text:outline-level="1">Setup</text:h>` +
		`<text:p>Read<text:s text:c="3"/>this<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>A note.</text:p></text:note-body></text:note> first.<office:annotation><text:p>a comment</text:p></office:annotation></text:p>` +
		`<text:soft-page-break/>` +
		`<text:list text:style-name="N"><text:list-item><text:p>one</text:p><text:list><text:list-item><text:p>sub</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>two</text:p></text:list-item></text:list>` +
		`<text:h text:outline-level="2">Data</text:h>` +
		`<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell><table:table-cell><text:p>Age</text:p></table:table-cell></table:table-row></table:table-header-rows>` +
		`<table:table-row><table:table-cell><text:p>Alice</text:p></table:table-cell><table:table-cell><text:p>42</text:p></table:table-cell></table:table-row></table:table>` +
		`<text:table-of-content><text:index-body><text:p>Setup 1</text:p></text:index-body></text:table-of-content>` +
		`<text:p>Frame anchor<draw:frame><draw:text-box><text:p>boxed</text:p></draw:text-box></draw:frame></text:p>` +
		`<text:tracked-changes><text:changed-region><text:deletion><text:p>deleted</text:p></text:deletion></text:changed-region></text:tracked-changes>` +
		`</office:text>`
	data := odfPackage(t, styles, body)
	paras, err := extractODF(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "H|Manual|Manual\nH|Manual > Setup|Setup\nP|Manual > Setup|Read this[1] first.\nP|Manual > Setup|[1] A note.\n" +
		"P|Manual > Setup|1. one\nP|Manual > Setup|- sub\nP|Manual > Setup|2. two\nH|Manual > Setup > Data|Data\nP|Manual > Setup > Data|Name: Alice | Age: 42\n" +
		"P|Manual > Setup > Data|Frame anchor\nP|Manual > Setup > Data|boxed\n"
	if got := mdTexts(paras); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if paras[2].PageNum != 1 || paras[4].PageNum != 2 {
		t.Errorf("soft page break not counted: %d %d", paras[2].PageNum, paras[4].PageNum)
	}
}

func TestExtractODFSpreadsheet(t *testing.T) {
	styles := `<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style>`
	body := `<office:spreadsheet><table:table table:name="Visible">` +
		`<table:table-row><table:table-cell><text:p>K</text:p></table:table-cell><table:table-cell><text:p>V</text:p></table:table-cell><table:table-cell table:number-columns-repeated="16000"/></table:table-row>` +
		`<table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>` +
		`<table:table-row table:number-rows-repeated="2"><table:table-cell><text:p>a</text:p></table:table-cell><table:table-cell><text:p>b</text:p></table:table-cell></table:table-row>` +
		`</table:table><table:table table:name="Hidden" table:style-name="ta2"><table:table-row><table:table-cell><text:p>secret</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`
	data := odfPackage(t, styles, body)
	paras, err := extractODF(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mdTexts(paras), "H|Visible|Visible\nP|Visible|K: a | V: b\nP|Visible|K: a | V: b\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	bomb := odfPackage(t, "", `<office:spreadsheet><table:table><table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="1000000"><text:p>x</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`)
	if _, err := readODF(bytes.NewReader(bomb), int64(len(bomb)), 10000); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("repeated cells past the cap: %v", err)
	}
}

func TestExtractODFPresentation(t *testing.T) {
	body := `<office:presentation><draw:page draw:name="p1"><draw:frame presentation:class="title"><draw:text-box><text:p>Hello</text:p></draw:text-box></draw:frame>` +
		`<draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item><text:p>point</text:p></text:list-item></text:list></draw:text-box></draw:frame>` +
		`<draw:frame presentation:class="page-number"><draw:text-box><text:p>1</text:p></draw:text-box></draw:frame>` +
		`<presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>Speak slowly.</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>` +
		`<draw:page><draw:frame><draw:text-box><text:p>untitled</text:p></draw:text-box></draw:frame></draw:page></office:presentation>`
	data := odfPackage(t, "", body)
	paras, err := extractODF(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "H|Slide 1: Hello|Hello\nP|Slide 1: Hello|- point\nP|Slide 1: Hello|Notes: Speak slowly.\nP|Slide 2|untitled\n"
	if got := mdTexts(paras); got != want || paras[3].PageNum != 2 {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := extractODF(bytes.NewReader(zipOf(t, map[string]string{"mimetype": "x"})), 0); err == nil {
		t.Error("no error for an empty reader")
	}
	noContent := zipOf(t, map[string]string{"mimetype": "x"})
	if _, err := extractODF(bytes.NewReader(noContent), int64(len(noContent))); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("missing content.xml: %v", err)
	}
}

func FuzzExtractODF(f *testing.F) {
	f.Add([]byte(`<office:text><text:h text:outline-level="2">H</text:h><text:p>a<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>n</text:p></text:note-body></text:note></text:p></office:text>`))
	f.Add([]byte(`<office:spreadsheet><table:table table:name="S"><table:table-row table:number-rows-repeated="9"><table:table-cell table:number-columns-repeated="9"><text:p>x</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`))
	f.Add([]byte(`<office:presentation><draw:page><draw:frame presentation:class="title"><draw:text-box><text:p>T</text:p></draw:text-box></draw:frame></draw:page></office:presentation>`))
	f.Add([]byte(`<office:text><text:list><text:list-item><text:list><text:list-item><table:table><table:table-row><table:table-cell><text:p>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		data := odfPackage(t, `<text:list-style style:name="L"><text:list-level-style-number text:level="1" style:num-format="1"/></text:list-style>`, string(body))
		paras, err := readODF(bytes.NewReader(data), int64(len(data)), 10000)
		if err != nil {
			if !errors.Is(err, ErrInvalidDocument) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("unwrapped error: %v", err)
			}
			return
		}
		checkParagraphs(t, paras)
	})
}
