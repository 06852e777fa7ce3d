package engine

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// ErrInvalidDocx is the name ErrInvalidDocument had for .docx files; it is
// the same error value.
//
// Deprecated: Use ErrInvalidDocument.
var ErrInvalidDocx = ErrInvalidDocument

// docxLimits bounds the work the .docx reader does on one archive.
type docxLimits struct {
	maxEntries  int    // entries in the zip directory
	maxDeclared uint64 // sum of the declared uncompressed sizes
	maxPart     int64  // bytes inflated from one XML part
	maxTotal    int64  // bytes inflated from all parts
	maxDepth    int    // nesting of tables and text boxes
	maxBlocks   int    // paragraphs and table rows, all parts together
}

// zip returns the archive part of the limits.
func (l docxLimits) zip() zipLimits {
	return zipLimits{maxEntries: l.maxEntries, maxDeclared: l.maxDeclared, maxPart: l.maxPart, maxTotal: l.maxTotal}
}

var docxDefaultLimits = docxLimits{
	maxEntries:  10000,
	maxDeclared: 1 << 30,
	maxPart:     128 << 20,
	maxTotal:    256 << 20,
	maxDepth:    32,
	maxBlocks:   maxDocumentParagraphs,
}

// extractDocx returns the paragraphs of the .docx file at path.
func extractDocx(path string) ([]Paragraph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	paras, err := extractDocxReader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	return paras, nil
}

// extractDocxReader returns the paragraphs of the .docx archive of size
// bytes read from r. Errors wrap ErrInvalidDocument or ErrDocumentTooLarge.
//
// What it produces, in document order: one Paragraph per non-empty
// paragraph; a heading (Heading true) for paragraphs whose style resolves,
// through its basedOn chain, to the style name "Title" (top level) or
// "heading 1".."heading 9", or that carry an outline level; one Paragraph
// per table row; list items prefixed with "- " (bullets) or their rendered
// number ("1.", "a)", "1.2." ...); the paragraphs of a text box right after
// the paragraph it is anchored in; footnotes and endnotes as their own
// paragraphs ("[1] text", endnotes "[i] text") right after the paragraph
// that references them, which gets the marker "[1]" in its text. PageNum
// counts explicit page breaks, page-break-before paragraphs, section breaks
// that start a new page and the page breaks Word recorded when it last laid
// out the document (a rendered break directly after an explicit one is the
// same break). Deleted revisions, field codes, content controls still
// showing their placeholder text, list items with no text, headers and
// footers are left out.
func extractDocxReader(r io.ReaderAt, size int64) ([]Paragraph, error) {
	return readDocx(r, size, docxDefaultLimits)
}

func readDocx(r io.ReaderAt, size int64, lim docxLimits) ([]Paragraph, error) {
	a, err := openZipArchive(r, size, lim.zip(), ErrInvalidDocument, ".docx")
	if err != nil {
		return nil, err
	}
	mainPart, err := a.opcMainPart("word/document.xml")
	if err != nil {
		return nil, err
	}
	if !a.has(mainPart) {
		return nil, fmt.Errorf("%w: no main document part %s", ErrInvalidDocument, mainPart)
	}
	dir := path.Dir(mainPart)
	rels, err := a.rels(path.Join(dir, "_rels", path.Base(mainPart)+".rels"), dir)
	if err != nil {
		return nil, err
	}
	part := func(relType, def string) string {
		if t := rels[relType]; t != "" {
			return t
		}
		return path.Join(dir, def)
	}

	p := &docxParser{lim: lim, page: 1, notes: map[string]string{}, endnotes: map[string]string{}}
	if p.styles, err = a.readStyles(part("styles", "styles.xml")); err != nil {
		return nil, err
	}
	if p.nums, err = a.readNumbering(part("numbering", "numbering.xml"), p.styles); err != nil {
		return nil, err
	}
	for _, n := range []struct {
		part, elem string
		into       map[string]string
	}{
		{part("footnotes", "footnotes.xml"), "footnote", p.notes},
		{part("endnotes", "endnotes.xml"), "endnote", p.endnotes},
	} {
		if err := a.parse(n.part, false, func(d *xml.Decoder) error {
			return p.readNotes(d, n.elem, n.into)
		}); err != nil {
			return nil, err
		}
	}
	var blocks []docxBlock
	err = a.parse(mainPart, true, func(d *xml.Decoder) error {
		p.d = d
		for {
			tok, err := d.Token()
			if err == io.EOF {
				return errors.New("no w:body element")
			}
			if err != nil {
				return err
			}
			if se, ok := tok.(xml.StartElement); ok && docxW(se.Name, "body") {
				blocks, err = p.parseBlocks(nil)
				return err
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return p.paragraphs(blocks), nil
}

// WordprocessingML namespaces: transitional and strict.
const (
	docxNS       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	docxNSStrict = "http://purl.oclc.org/ooxml/wordprocessingml/main"
	docxNSMC     = "http://schemas.openxmlformats.org/markup-compatibility/2006"
	docxNSMath   = "http://schemas.openxmlformats.org/officeDocument/2006/math"
)

// docxW reports whether n is the WordprocessingML element local.
func docxW(n xml.Name, local string) bool {
	return n.Local == local && (n.Space == docxNS || n.Space == docxNSStrict)
}

// docxAttr returns the value of the attribute with local name local.
func docxAttr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// docxOn reports whether an on/off property element is on (no val, or a
// val other than false/0/off).
func docxOn(se xml.StartElement) bool {
	return docxOnVal(docxAttr(se, "val"))
}

// docxOnVal reports whether an on/off val attribute value means on (an
// empty value, from an absent attribute, does).
func docxOnVal(v string) bool {
	switch strings.ToLower(v) {
	case "false", "0", "off", "none":
		return false
	}
	return true
}
