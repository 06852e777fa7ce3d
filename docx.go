package engine

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// ErrDocxTooLarge is wrapped by the error ExtractParagraphs returns for a
// .docx archive beyond the reader's limits: more than 10,000 entries, more
// than 1 GiB of declared uncompressed content, or an XML part that really
// inflates to more than 128 MiB (256 MiB for all parts read together). The
// sizes are counted while inflating, so an archive lying about them in its
// headers is caught too. Such files are zip bombs or not documents.
var ErrDocxTooLarge = errors.New("docx archive exceeds the size limits")

// ErrInvalidDocx is wrapped by the error ExtractParagraphs returns for a
// .docx file that is not a readable OOXML document: not a zip archive, no
// main document part, or malformed XML in a part it needs.
var ErrInvalidDocx = errors.New("invalid .docx file")

// docxLimits bounds the work the .docx reader does on one archive.
type docxLimits struct {
	maxEntries  int    // entries in the zip directory
	maxDeclared uint64 // sum of the declared uncompressed sizes
	maxPart     int64  // bytes inflated from one XML part
	maxTotal    int64  // bytes inflated from all parts
	maxDepth    int    // nesting of tables and text boxes
}

var docxDefaultLimits = docxLimits{
	maxEntries:  10000,
	maxDeclared: 1 << 30,
	maxPart:     128 << 20,
	maxTotal:    256 << 20,
	maxDepth:    32,
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
// bytes read from r. Errors wrap ErrInvalidDocx or ErrDocxTooLarge.
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
	zr, err := zip.NewReader(r, size)
	if err != nil {
		var magic [8]byte
		if n, _ := r.ReadAt(magic[:], 0); n == 8 && string(magic[:]) == "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" {
			return nil, fmt.Errorf("%w: an OLE compound file (a password-protected document or a legacy .doc), not an OOXML zip", ErrInvalidDocx)
		}
		return nil, fmt.Errorf("%w: not a zip archive: %w", ErrInvalidDocx, err)
	}
	if len(zr.File) > lim.maxEntries {
		return nil, fmt.Errorf("%w: %d entries (limit %d)", ErrDocxTooLarge, len(zr.File), lim.maxEntries)
	}
	a := &docxArchive{files: make(map[string]*zip.File, len(zr.File)), lim: lim}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
		if declared > lim.maxDeclared || declared < f.UncompressedSize64 {
			return nil, fmt.Errorf("%w: declared uncompressed size over %d bytes", ErrDocxTooLarge, lim.maxDeclared)
		}
		name := strings.ToLower(strings.TrimPrefix(f.Name, "/"))
		if _, dup := a.files[name]; !dup {
			a.files[name] = f
		}
	}

	mainPart := "word/document.xml"
	if rels, err := a.rels("_rels/.rels", ""); err != nil {
		return nil, err
	} else if t := rels["officeDocument"]; t != "" {
		mainPart = t
	}
	if a.files[strings.ToLower(mainPart)] == nil {
		return nil, fmt.Errorf("%w: no main document part %s", ErrInvalidDocx, mainPart)
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

// docxArchive is an opened .docx zip with its entries by lower-case name
// (OPC part names are case-insensitive) and the bytes inflated so far.
type docxArchive struct {
	files map[string]*zip.File
	lim   docxLimits
	read  int64
}

// parse runs fn on a decoder reading the named part, counting the bytes
// inflated against the limits. A missing part is an error only if required.
func (a *docxArchive) parse(name string, required bool, fn func(*xml.Decoder) error) error {
	f := a.files[strings.ToLower(name)]
	if f == nil {
		if required {
			return fmt.Errorf("%w: missing part %s", ErrInvalidDocx, name)
		}
		return nil
	}
	left := min(a.lim.maxPart, a.lim.maxTotal-a.read)
	if f.UncompressedSize64 > uint64(max(left, 0)) {
		return fmt.Errorf("%w: part %s declares %d bytes (limit %d)", ErrDocxTooLarge, name, f.UncompressedSize64, left)
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%w: open part %s: %w", ErrInvalidDocx, name, err)
	}
	defer rc.Close()
	lr := &docxLimitedReader{r: rc, left: left, part: name, count: &a.read}
	if err := fn(xml.NewDecoder(lr)); err != nil {
		if errors.Is(err, ErrDocxTooLarge) {
			return err
		}
		return fmt.Errorf("%w: part %s: %w", ErrInvalidDocx, name, err)
	}
	return nil
}

// docxLimitedReader reads at most left bytes from r, adding them to *count;
// reading past the limit is an error wrapping ErrDocxTooLarge.
type docxLimitedReader struct {
	r     io.Reader
	left  int64
	part  string
	count *int64
}

func (l *docxLimitedReader) Read(b []byte) (int, error) {
	if l.left <= 0 {
		var probe [1]byte
		if n, err := l.r.Read(probe[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: part %s inflates beyond the limit", ErrDocxTooLarge, l.part)
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	*l.count += int64(n)
	return n, err
}

// rels returns the targets of the relationships in the named part by the
// last element of their type (officeDocument, styles, numbering, ...),
// resolved against dir. A missing part gives no relationships.
func (a *docxArchive) rels(name, dir string) (map[string]string, error) {
	var doc struct {
		Rels []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
			Mode   string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := a.parse(name, false, func(d *xml.Decoder) error { return d.Decode(&doc) }); err != nil {
		return nil, err
	}
	out := make(map[string]string)
	for _, r := range doc.Rels {
		if strings.EqualFold(r.Mode, "External") || r.Target == "" {
			continue
		}
		typ := r.Type[strings.LastIndexByte(r.Type, '/')+1:]
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = path.Clean(t[1:])
		} else {
			t = path.Join(dir, t)
		}
		if _, ok := out[typ]; !ok {
			out[typ] = t
		}
	}
	return out, nil
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
