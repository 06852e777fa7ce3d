package main

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileFormat is one file of TestIndexBoundedMemoryFormats: what its
// reader must say refusing it.
type hostileFormat struct {
	name string
	want string
}

// writeHostileFormats writes the hostile files of the per-format memory
// tests into dir, streaming (none is held in memory): HTML of 300 MB, of
// one 200 MB text node, of one 60 MB paragraph of inline elements and of a
// 60 MB table whose rows repeat 150-byte column labels (under the 64 MiB
// cap, so they are parsed); an EPUB whose one chapter inflates to
// 127 MiB; a .docx with one 127 MiB <w:t> run and one with a 127 MiB
// paragraph of small runs; an .odt and a .pptx with one 127 MiB text node.
// The zip-based files are 1-2 MB on disk. withBig false leaves out the
// HTML files over the cap, which serve's upload limit refuses anyway.
func writeHostileFormats(t *testing.T, dir string, withBig bool) []hostileFormat {
	t.Helper()
	const part = 127 << 20
	words := "alpha beta gamma delta epsilon zeta eta theta iota kappa "
	var out []hostileFormat
	if withBig {
		writeRepeated(t, filepath.Join(dir, "big.html"), "<html><body>", "<p>"+words+words+"</p>\n", 300_000_000, "</body></html>")
		writeRepeated(t, filepath.Join(dir, "node.html"), "<html><body><p>", words, 200_000_000, "</p></body></html>")
		out = append(out,
			hostileFormat{"big.html", "more than 67108864 bytes of HTML"},
			hostileFormat{"node.html", "more than 67108864 bytes of HTML"})
	}
	writeRepeated(t, filepath.Join(dir, "para.html"), "<html><body><p>", words+"<b>x</b> ", 60_000_000, "</p></body></html>")
	writeRepeated(t, filepath.Join(dir, "cells.html"), "<table><tr><th>"+strings.Repeat("L", 150)+"<th>"+strings.Repeat("M", 150)+"</tr>",
		"<tr><td>a<td>b", 60_000_000, "</table>")
	out = append(out, hostileFormat{"para.html", "more than the limit of 20000 per document"},
		hostileFormat{"cells.html", "tables of more than 1000000 cells"})

	writeZipPart(t, filepath.Join(dir, "chapter.epub"), map[string]string{
		"mimetype":               "application/epub+zip",
		"META-INF/container.xml": `<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`,
		"OEBPS/content.opf":      `<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata><title>Big</title></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`,
	}, "OEBPS/c1.xhtml", `<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>One</h1>`, "<p>"+words+words+"</p>\n", part, "</body></html>")
	out = append(out, hostileFormat{"chapter.epub", "more than 67108864 bytes of HTML"})

	docx := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels":         `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
	}
	const wdoc = `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t xml:space="preserve">`
	const wend = `</w:t></w:r></w:p></w:body></w:document>`
	writeZipPart(t, filepath.Join(dir, "run.docx"), docx, "word/document.xml", wdoc, words, part, wend)
	writeZipPart(t, filepath.Join(dir, "runs.docx"), docx, "word/document.xml", wdoc, words+`</w:t></w:r><w:r><w:t xml:space="preserve">`, part, wend)
	out = append(out,
		hostileFormat{"run.docx", "a text node or tag of more than 16777216 bytes"},
		hostileFormat{"runs.docx", "a paragraph or cell of more than 16777216 bytes"})

	writeZipPart(t, filepath.Join(dir, "node.odt"), map[string]string{"mimetype": "application/vnd.oasis.opendocument.text"}, "content.xml",
		`<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:p>`,
		words, part, `</text:p></office:text></office:body></office:document-content>`)
	out = append(out, hostileFormat{"node.odt", "a text node or tag of more than 16777216 bytes"})

	const rel = `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/`
	writeZipPart(t, filepath.Join(dir, "node.pptx"), map[string]string{
		"_rels/.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rel + `officeDocument" Target="ppt/presentation.xml"/></Relationships>`,
		"ppt/presentation.xml": `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
			`<p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`,
		"ppt/_rels/presentation.xml.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rel + `slide" Target="slides/slide1.xml"/></Relationships>`,
	}, "ppt/slides/slide1.xml",
		`<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>`,
		words, part, `</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`)
	out = append(out, hostileFormat{"node.pptx", "a text node or tag of more than 16777216 bytes"})
	return out
}

// TestIndexBoundedMemoryFormats indexes each file of writeHostileFormats
// through the CLI binary: each is refused naming the bound it passed, and
// the process's peak RSS stays under 300 MB (docs/formats.md).
func TestIndexBoundedMemoryFormats(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 560 MB of input")
	}
	dir := t.TempDir()
	for _, c := range writeHostileFormats(t, dir, true) {
		file := filepath.Join(dir, c.name)
		st, _ := os.Stat(file)
		out, rss := runCLIRSS(t, dir, "index", "--data", filepath.Join(dir, "index"), file)
		t.Logf("%s (%d bytes): peak RSS %d MB", c.name, st.Size(), rss>>20)
		if !strings.Contains(out, c.want) || strings.Contains(out, "Indexed 1 source") {
			t.Errorf("%s: output lacks %q:\n%s", c.name, c.want, out)
		}
		if rss > maxIndexRSS {
			t.Errorf("%s: peak RSS %d MB, want <= %d MB", c.name, rss>>20, maxIndexRSS>>20)
		}
		os.Remove(file)
	}
}

// writeRepeated writes head, unit repeated to about size bytes, and tail.
func writeRepeated(t *testing.T, path, head, unit string, size int, tail string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := repeatTo(f, head, unit, size, tail); err != nil {
		t.Fatal(err)
	}
}

// writeZipPart writes a zip archive with the small parts given and one
// part name of head, unit repeated to about size bytes, and tail,
// deflated at the fastest level.
func writeZipPart(t *testing.T, path string, small map[string]string, name, head, unit string, size int, tail string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	z.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	for n, body := range small {
		w, err := z.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	w, err := z.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := repeatTo(w, head, unit, size, tail); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// repeatTo writes head, unit repeated until size bytes are written, and
// tail to w.
func repeatTo(w io.Writer, head, unit string, size int, tail string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	n, _ := bw.WriteString(head)
	block := strings.Repeat(unit, max(1, (64<<10)/len(unit)))
	for n < size {
		k, err := bw.WriteString(block[:min(len(block), size-n)])
		if err != nil {
			return err
		}
		n += k
	}
	bw.WriteString(tail)
	return bw.Flush()
}
