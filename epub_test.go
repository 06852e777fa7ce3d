package engine

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// epubPackage returns an EPUB 2 book (NCX table of contents) with the
// chapters given as XHTML bodies, in spine order.
func epubPackage(t testing.TB, ncx string, chapters ...string) []byte {
	files := map[string]string{
		"mimetype":               "application/epub+zip",
		"META-INF/container.xml": `<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`,
		"OEBPS/toc.ncx":          `<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>` + ncx + `</navMap></ncx>`,
		"OEBPS/style.css":        "p { color: red }",
	}
	var manifest, spine string
	for i, c := range chapters {
		id := "c" + string(rune('0'+i))
		manifest += `<item id="` + id + `" href="text/` + id + `.xhtml" media-type="application/xhtml+xml"/>`
		spine += `<itemref idref="` + id + `"/>`
		files["OEBPS/text/"+id+".xhtml"] = `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>` + c + `</body></html>`
	}
	manifest += `<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/><item id="css" href="style.css" media-type="text/css"/>`
	spine += `<itemref idref="css"/>`
	files["OEBPS/content.opf"] = `<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata/><manifest>` + manifest + `</manifest><spine toc="ncx">` + spine + `</spine></package>`
	return zipOf(t, files)
}

func TestExtractEpub(t *testing.T) {
	ncx := `<navPoint><navLabel><text>Chapter One</text></navLabel><content src="text/c0.xhtml#start"/></navPoint>` +
		`<navPoint><navLabel><text>Knots</text></navLabel><content src="text/c1.xhtml"/></navPoint>`
	data := epubPackage(t, ncx,
		`<p>Before any heading.</p><h2>Start</h2><p>Text one.</p>`,
		`<h1>Knots</h1><p>Bowline.</p><h2>Practice</h2><p>Tie it.</p>`,
		`<h1>Untitled in the table</h1><p>Last.</p>`)
	paras, err := extractEpub(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "H|Chapter One|Chapter One\nP|Chapter One|Before any heading.\nH|Chapter One > Start|Start\nP|Chapter One > Start|Text one.\n" +
		"H|Knots|Knots\nP|Knots|Bowline.\nH|Knots > Practice|Practice\nP|Knots > Practice|Tie it.\n" +
		"H|Untitled in the table|Untitled in the table\nP|Untitled in the table|Last.\n"
	if got := mdTexts(paras); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	broken := zipOf(t, map[string]string{"mimetype": "application/epub+zip"})
	if _, err := extractEpub(bytes.NewReader(broken), int64(len(broken))); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("no container: %v", err)
	}
}

// TestExtractEpubBounds checks that chapters are streamed through the HTML
// reader's bounds: one text node past 16 MiB is refused before it is
// buffered (a 127 MiB chapter took index to 835 MB when the chapter was
// read whole), and the chapters' text together stops at 64 MiB.
func TestExtractEpubBounds(t *testing.T) {
	node := epubPackage(t, "", "<p>"+strings.Repeat("word ", (htmlMaxToken>>2)+1000)+"</p>")
	var err error
	n := allocatedBy(func() { _, err = extractEpub(bytes.NewReader(node), int64(len(node))) })
	if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "text node or tag") {
		t.Errorf("one huge text node: err = %v, want ErrDocumentTooLarge", err)
	}
	if n > 100<<20 { // the tokenizer's buffer grows to 32 MiB by doubling
		t.Errorf("allocated %d MB refusing one text node", n>>20)
	}
	chapter := strings.Repeat("<p>"+strings.Repeat("word ", 200)+"</p>", (36<<20)/1007)
	two := epubPackage(t, "", chapter, chapter)
	if _, err := extractEpub(bytes.NewReader(two), int64(len(two))); !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "bytes of text") {
		t.Errorf("two chapters of 36 MiB: err = %v, want ErrDocumentTooLarge for the text", err)
	}
}

func FuzzExtractEpub(f *testing.F) {
	f.Add([]byte(`<navPoint><navLabel><text>A</text></navLabel><content src="text/c0.xhtml"/></navPoint>`), []byte(`<h1>A</h1><p>x</p>`))
	f.Add([]byte(`<navPoint><content src="../../x"/>`), []byte(`<table><tr><th>a</th></tr><tr><td>b</td></tr></table>`))
	f.Fuzz(func(t *testing.T, ncx, chapter []byte) {
		data := epubPackage(t, string(ncx), string(chapter))
		paras, err := extractEpub(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrInvalidDocument) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("unwrapped error: %v", err)
			}
			return
		}
		checkParagraphs(t, paras)
	})
}
