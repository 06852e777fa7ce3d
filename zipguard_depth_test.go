package engine

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestZipGuardDeepXML checks that every zip-based reader refuses a part
// nested a million elements deep (5 MB inflated from 8 KB) as invalid,
// without building the decoder's stack: that cost about 120 MB per million
// levels, so the 128 MiB a part may inflate to (25 million levels) would
// have taken about 3 GB.
func TestZipGuardDeepXML(t *testing.T) {
	deep := strings.Repeat("<a>", 1_000_000)
	parts := map[string]string{"pptx": "_rels/.rels", "xlsx": "_rels/.rels", "odf": "content.xml", "epub": "META-INF/container.xml", "docx": "_rels/.rels"}
	for kind, read := range zipReaders {
		t.Run(kind, func(t *testing.T) {
			data := zipOf(t, map[string]string{parts[kind]: `<?xml version="1.0"?><r>` + deep})
			var err error
			n := allocatedBy(func() { _, err = read(bytes.NewReader(data), int64(len(data))) })
			if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), "nested more than 10000 deep") {
				t.Errorf("err = %v, want ErrInvalidDocument for the nesting", err)
			}
			if n > 32<<20 {
				t.Errorf("allocated %d MB refusing it", n>>20)
			}
		})
	}
}

// TestXMLDepthReader checks the nesting count against markup that holds
// '<', '>' or "/>" outside of tags, and the limit's edge.
func TestXMLDepthReader(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("<e>", n) + strings.Repeat("</e>", n) }
	cases := []struct {
		in   string
		fail bool
	}{
		{nest(3), false},
		{nest(4), true},
		{strings.Repeat("<e/>", 100) + strings.Repeat("<e></e>", 100), false},
		{`<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "<<<<"> <!ELEMENT a ANY>]><a><b><c/></b></a>`, false},
		{`<a t="<b><c><d>" u='/>'><b><c></c></b></a>`, false},
		{`<a t="x>y"><b t="/"><c/></b></a>`, false},
		{`<a><!-- <b><c><d> --><![CDATA[<b><c><d>]]><?pi <b><c><d> ?><b/></a>`, false},
		{`<a><!-- --><b><c><d>`, true},
		{`<a><![CDATA[]]><b><c><d>`, true},
		{`<a><b><c></c></b><b><c><d/></c></b></a>`, true},
	}
	for _, c := range cases {
		// Read one byte at a time too: the scanner's state spans reads.
		for _, chunk := range []int{1, 4096} {
			r := &xmlDepthReader{r: &chunkReader{s: c.in, n: chunk}, max: 3, part: "p", invalid: ErrInvalidDocument}
			_, err := io.ReadAll(r)
			if got := errors.Is(err, ErrInvalidDocument); got != c.fail {
				t.Errorf("%q (reads of %d): err = %v, want failure %v", c.in, chunk, err, c.fail)
			}
		}
	}
	// An ordinary part of a real package reads unchanged.
	zr, err := zip.OpenReader("testdata/formats/report.odt")
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".xml") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		x := &xmlDepthReader{r: rc, max: 20, part: f.Name, invalid: ErrInvalidDocument}
		if _, err := io.Copy(io.Discard, x); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		if x.depth != 0 || x.state != xmlScanText {
			t.Errorf("%s: ends at depth %d, state %d", f.Name, x.depth, x.state)
		}
		rc.Close()
	}
}

// chunkReader reads s at most n bytes at a time.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(b []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(b[:min(len(b), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

// TestXMLDepthReaderToken checks the bound on one token's bytes for each
// kind of token, across reads of any size, and that many tokens under the
// bound pass.
func TestXMLDepthReaderToken(t *testing.T) {
	long := strings.Repeat("x", 101)
	cases := []struct {
		in   string
		fail bool
	}{
		{"<a>" + strings.Repeat("x", 100) + "</a>", false},
		{"<a>" + long + "</a>", true},
		{"<a>" + long, true},
		{`<a t="` + long + `"/>`, true},
		{"<a><!--" + long + "--></a>", true},
		{"<a><![CDATA[" + long + "]]></a>", true},
		{"<a><![CDATA[" + strings.Repeat("<", 101) + "]]></a>", true},
		{"<a><?pi " + long + "?></a>", true},
		{"<a>" + strings.Repeat("<b>"+strings.Repeat("y", 90)+"</b>", 1000) + "</a>", false},
		{"<a>" + strings.Repeat(`<b t="`+strings.Repeat("y", 80)+`">z</b>`, 1000) + "</a>", false},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, 7, 4096} {
			r := &xmlDepthReader{r: &chunkReader{s: c.in, n: chunk}, max: 100, maxToken: 100, part: "p", invalid: ErrInvalidDocument}
			_, err := io.ReadAll(r)
			if got := errors.Is(err, ErrDocumentTooLarge); got != c.fail || !c.fail && err != nil {
				t.Errorf("%.30q (reads of %d): err = %v, want failure %v", c.in, chunk, err, c.fail)
			}
		}
	}
}

// TestZipGuardHugeToken checks that every zip-based reader refuses a part
// holding one text node past xmlMaxToken (33 MiB inflated from a few KB)
// before the decoder has buffered it: a 127 MiB <w:t> run took 550 MB.
func TestZipGuardHugeToken(t *testing.T) {
	// Twice the limit: read whole, the token's buffer would double past
	// 64 MiB (about 160 MB allocated); refused at the limit it stays near
	// 64 MB (the buffer doubling up to 16 MiB), also under -race.
	huge := strings.Repeat("x", 2*xmlMaxToken+1<<20)
	parts := map[string]string{"pptx": "_rels/.rels", "xlsx": "_rels/.rels", "odf": "content.xml", "epub": "META-INF/container.xml", "docx": "_rels/.rels"}
	for kind, read := range zipReaders {
		t.Run(kind, func(t *testing.T) {
			data := zipOf(t, map[string]string{parts[kind]: `<?xml version="1.0"?><r>` + huge + `</r>`})
			var err error
			n := allocatedBy(func() { _, err = read(bytes.NewReader(data), int64(len(data))) })
			if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "text node or tag") {
				t.Errorf("err = %v, want ErrDocumentTooLarge for the token", err)
			}
			if n > 100<<20 {
				t.Errorf("allocated %d MB refusing it", n>>20)
			}
		})
	}
}

// TestXMLParagraphTextBound checks that each XML format refuses a
// paragraph (or cell, shared string, EPUB table-of-contents label)
// gathering more than xmlMaxText
// from many runs, each far under xmlMaxToken, before its builder doubles
// past it: 60 MiB of one .docx paragraph took index to 330 MB.
func TestXMLParagraphTextBound(t *testing.T) {
	chunk := strings.Repeat("word ", 1000)
	n := xmlMaxText/len(chunk) + 10
	docs := map[string][]byte{
		"docx": docxBytes(t, docxPara("", strings.Repeat(docxRun(chunk), n))),
		"odf":  odfPackage(t, "", `<office:text><text:p>`+strings.Repeat(`<text:span>`+chunk+`</text:span>`, n)+`</text:p></office:text>`),
		"pptx": zipOf(t, pptxPackage([]string{pptxSp("", 0, 0, strings.Repeat(chunk+`</a:t></a:r><a:r><a:t>`, n))}, nil, nil)),
		"epub": epubPackage(t, `<navPoint><navLabel><text>`+strings.Repeat(chunk+`<!---->`, n)+`</text></navLabel><content src="text/c0.xhtml"/></navPoint>`, "<p>a</p>"),
		"xlsx": zipOf(t, xlsxPackage([][3]string{{"S", "", `<row r="1"><c r="A1" t="s"><v>0</v></c></row>`}},
			`<si>`+strings.Repeat(`<r><t>`+chunk+`</t></r>`, n)+`</si>`, "")),
	}
	for kind, data := range docs {
		t.Run(kind, func(t *testing.T) {
			var err error
			all := allocatedBy(func() { _, err = zipReaders[kind](bytes.NewReader(data), int64(len(data))) })
			if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "paragraph or cell") {
				t.Errorf("err = %v, want ErrDocumentTooLarge for the paragraph", err)
			}
			if all > 160<<20 { // all allocations, the inflated part's copies included
				t.Errorf("allocated %d MB refusing it", all>>20)
			}
		})
	}
}
