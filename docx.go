package engine

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
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
// same break). Deleted revisions, field codes, headers and footers are left
// out.
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

// docxBlock is a paragraph or table row of the document body, before
// headings are resolved into breadcrumbs.
type docxBlock struct {
	text  string
	page  int    // page of the first character, 0 if no text
	sect  int    // section breaks seen before page was taken
	level int    // heading level (0 Title, 1-9), -1 for body text
	style string // lower-case style name
	notes []string
	boxes []docxBlock // paragraphs of text boxes anchored here
}

// docxParser reads the body of a document (or of its notes) with the
// styles, list counters and page state they share.
type docxParser struct {
	d      *xml.Decoder
	styles *docxStyles
	nums   *docxNumbering
	lim    docxLimits
	depth  int  // nesting of tables and text boxes
	inNote bool // reading footnotes.xml/endnotes.xml

	notes, endnotes     map[string]string // note ID -> text
	footCount, endCount int

	page       int
	brokeSince bool   // a page break since the last text
	sawText    bool   // body text seen
	sect       int    // section breaks seen
	sectBreak  []bool // per section break: does it start a new page (known later)
	altTaken   []bool // mc:AlternateContent stack: a branch was taken
}

// alternate handles the markup-compatibility elements: of an
// mc:AlternateContent, only the first mc:Choice (or the mc:Fallback when
// there is no choice) is read. It reports whether se was consumed (skipped).
func (p *docxParser) alternate(se xml.StartElement) (bool, error) {
	if se.Name.Space != docxNSMC {
		return false, nil
	}
	switch se.Name.Local {
	case "AlternateContent":
		p.altTaken = append(p.altTaken, false)
	case "Choice", "Fallback":
		if n := len(p.altTaken); n > 0 {
			if p.altTaken[n-1] {
				return true, p.d.Skip()
			}
			p.altTaken[n-1] = true
		}
	}
	return false, nil
}

// altEnd pops the AlternateContent stack at its end element.
func (p *docxParser) altEnd(ee xml.EndElement) {
	if ee.Name.Space == docxNSMC && ee.Name.Local == "AlternateContent" && len(p.altTaken) > 0 {
		p.altTaken = p.altTaken[:len(p.altTaken)-1]
	}
}

// parseBlocks reads the block-level content (paragraphs, tables) up to the
// end of the element whose start was just read. Unknown elements (content
// controls, custom XML, ...) are transparent.
func (p *docxParser) parseBlocks(cellSpan *int) ([]docxBlock, error) {
	var out []docxBlock
	nest := 0
	for {
		tok, err := p.d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skipped, err := p.alternate(t); err != nil {
				return nil, err
			} else if skipped {
				continue
			}
			switch {
			case docxW(t.Name, "p"):
				b, err := p.parseParagraph()
				if err != nil {
					return nil, err
				}
				out = append(out, b)
			case docxW(t.Name, "tbl"):
				if p.depth >= p.lim.maxDepth {
					if err := p.d.Skip(); err != nil {
						return nil, err
					}
					continue
				}
				p.depth++
				rows, err := p.parseTable()
				p.depth--
				if err != nil {
					return nil, err
				}
				out = append(out, rows...)
			case docxW(t.Name, "sectPr"):
				if err := p.sectionProps(); err != nil {
					return nil, err
				}
			case docxW(t.Name, "tcPr") && cellSpan != nil:
				if err := p.cellProps(cellSpan); err != nil {
					return nil, err
				}
			case docxW(t.Name, "del"), docxW(t.Name, "moveFrom"), docxW(t.Name, "tblPr"), docxW(t.Name, "tblGrid"):
				if err := p.d.Skip(); err != nil {
					return nil, err
				}
			default:
				nest++
			}
		case xml.EndElement:
			p.altEnd(t)
			if nest == 0 {
				return out, nil
			}
			nest--
		}
	}
}

// sectionProps reads a w:sectPr: its type says whether the section it
// describes started on a new page (nextPage, the default, oddPage,
// evenPage) or not (continuous, nextColumn).
func (p *docxParser) sectionProps() error {
	newPage := true
	nest := 0
	for {
		tok, err := p.d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if nest == 0 && docxW(t.Name, "type") {
				switch docxAttr(t, "val") {
				case "continuous", "nextColumn":
					newPage = false
				}
			}
			nest++
		case xml.EndElement:
			if nest == 0 {
				// A sectPr ends the section it describes, so it comes after
				// the break that started that section: break p.sect-1.
				if k := p.sect; k >= 1 && k <= len(p.sectBreak) && !p.inNote {
					p.sectBreak[k-1] = newPage
				}
				return nil
			}
			nest--
		}
	}
}

// cellProps reads a w:tcPr for the cell's grid span.
func (p *docxParser) cellProps(span *int) error {
	nest := 0
	for {
		tok, err := p.d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if nest == 0 && docxW(t.Name, "gridSpan") {
				if n, err := strconv.Atoi(docxAttr(t, "val")); err == nil && n > 1 && n <= 64 {
					*span = n
				}
			}
			nest++
		case xml.EndElement:
			if nest == 0 {
				return nil
			}
			nest--
		}
	}
}

// docxParaProps is what the reader uses of a w:pPr.
type docxParaProps struct {
	style       string
	numID       string
	ilvl        int
	hasNum      bool
	pageBreak   int // -1 unset
	outline     int // -1 unset
	endsSection bool
}

// paraProps reads a w:pPr. Revision records (w:pPrChange) and run
// properties are skipped.
func (p *docxParser) paraProps() (docxParaProps, error) {
	pp := docxParaProps{pageBreak: -1, outline: -1}
	for {
		tok, err := p.d.Token()
		if err != nil {
			return pp, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case docxW(t.Name, "pStyle"):
				pp.style = docxAttr(t, "val")
			case docxW(t.Name, "numPr"):
				pp.hasNum = true
				pp.ilvl = -1
				if err := p.numProps(&pp); err != nil {
					return pp, err
				}
				continue
			case docxW(t.Name, "pageBreakBefore"):
				pp.pageBreak = 0
				if docxOn(t) {
					pp.pageBreak = 1
				}
			case docxW(t.Name, "outlineLvl"):
				if n, err := strconv.Atoi(docxAttr(t, "val")); err == nil && n >= 0 && n <= 9 {
					pp.outline = n
				}
			case docxW(t.Name, "sectPr"):
				pp.endsSection = true
				if err := p.sectionProps(); err != nil {
					return pp, err
				}
				continue
			}
			if err := p.d.Skip(); err != nil {
				return pp, err
			}
		case xml.EndElement:
			return pp, nil
		}
	}
}

// numProps reads a w:numPr into pp.
func (p *docxParser) numProps(pp *docxParaProps) error {
	for {
		tok, err := p.d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case docxW(t.Name, "numId"):
				pp.numID = docxAttr(t, "val")
			case docxW(t.Name, "ilvl"):
				pp.ilvl, _ = strconv.Atoi(docxAttr(t, "val"))
			}
			if err := p.d.Skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// pageBreak records a page break; a break Word rendered (lastRendered)
// right after another break, with no text between, is the same break.
func (p *docxParser) pageBreak(rendered bool) {
	if p.inNote || (rendered && p.brokeSince) {
		return
	}
	p.page++
	p.brokeSince = true
}

// docxText collects the text of one paragraph.
type docxText struct {
	b     strings.Builder
	block *docxBlock
	p     *docxParser
}

// add appends text s; visible text fixes the block's page.
func (t *docxText) add(s string) {
	t.b.WriteString(s)
	if t.block.page == 0 && strings.TrimSpace(s) != "" {
		t.block.page, t.block.sect = t.p.page, t.p.sect
		if !t.p.inNote {
			t.p.brokeSince, t.p.sawText = false, true
		}
	}
}

// parseParagraph reads a w:p whose start was just read.
func (p *docxParser) parseParagraph() (docxBlock, error) {
	blk := docxBlock{level: -1}
	txt := &docxText{block: &blk, p: p}
	prefix := ""
	var props docxParaProps
	nest := 0
	for {
		tok, err := p.d.Token()
		if err != nil {
			return blk, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skipped, err := p.alternate(t); err != nil {
				return blk, err
			} else if skipped {
				continue
			}
			if t.Name.Space == docxNSMath && t.Name.Local == "t" {
				if err := p.charData(txt); err != nil { // equation text
					return blk, err
				}
				continue
			}
			if t.Name.Space != docxNS && t.Name.Space != docxNSStrict {
				nest++ // drawing, VML, math and compatibility wrappers: look inside
				continue
			}
			skip := true // the element's content is not needed (or was read)
			switch t.Name.Local {
			case "pPr":
				if props, err = p.paraProps(); err != nil {
					return blk, err
				}
				prefix = p.applyParaProps(&blk, props)
				skip = false
			case "t":
				if err := p.charData(txt); err != nil {
					return blk, err
				}
				skip = false
			case "tab", "ptab", "cr":
				txt.add(" ")
			case "br":
				if docxAttr(t, "type") == "page" {
					p.pageBreak(false)
				} else {
					txt.add(" ")
				}
			case "lastRenderedPageBreak":
				p.pageBreak(true)
			case "noBreakHyphen":
				txt.add("-")
			case "sym":
				if n, err := strconv.ParseUint(docxAttr(t, "char"), 16, 32); err == nil && (n < 0xE000 || n > 0xF8FF) && n > 0x20 && n < 0x110000 {
					txt.add(string(rune(n)))
				}
			case "footnoteReference", "endnoteReference":
				p.noteReference(t, txt, &blk)
			case "txbxContent":
				if p.depth < p.lim.maxDepth {
					p.depth++
					box, err := p.parseBlocks(nil)
					p.depth--
					if err != nil {
						return blk, err
					}
					blk.boxes = append(blk.boxes, box...)
					skip = false
				}
			case "delText", "instrText", "delInstrText", "rPr", "del", "moveFrom", "footnoteRef", "endnoteRef", "commentReference", "rt":
			default:
				nest++ // runs, hyperlinks, fields, insertions, drawings: look inside
				skip = false
			}
			if skip {
				if err := p.d.Skip(); err != nil {
					return blk, err
				}
			}
		case xml.EndElement:
			p.altEnd(t)
			if nest == 0 {
				blk.text = NormalizeSpaces(prefix + txt.b.String())
				if props.endsSection {
					p.sectionEnd()
				}
				return blk, nil
			}
			nest--
		}
	}
}

// sectionEnd records the end of a section after its last paragraph: the
// next section starts on a new page unless its sectPr, read later, says it
// is continuous; paragraphs then get their page corrected.
func (p *docxParser) sectionEnd() {
	if p.inNote || p.depth > 0 {
		return
	}
	p.sectBreak = append(p.sectBreak, true)
	p.sect++
	p.page++
	p.brokeSince = true
}

// charData reads the text of a w:t whose start was just read.
func (p *docxParser) charData(txt *docxText) error {
	for {
		tok, err := p.d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			txt.add(string(t))
		case xml.StartElement:
			if err := p.d.Skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// applyParaProps applies a paragraph's properties: style, heading level,
// page break before; it returns the list marker prefix.
func (p *docxParser) applyParaProps(blk *docxBlock, pp docxParaProps) string {
	st := p.styles
	blk.style = st.name(pp.style)
	if p.sawText && (pp.pageBreak == 1 || pp.pageBreak == -1 && st.pageBreakBefore(pp.style)) {
		p.pageBreak(false)
	}
	switch {
	case p.depth > 0 || p.inNote:
	case pp.outline >= 0 && pp.outline <= 8:
		blk.level = pp.outline + 1
	case pp.outline == 9:
	default:
		blk.level = st.headingLevel(pp.style)
	}
	numID, ilvl := st.numbering(pp.style)
	if pp.hasNum {
		if pp.numID != "" {
			numID = pp.numID
		}
		if pp.ilvl >= 0 {
			ilvl = pp.ilvl
		}
	}
	if numID == "" || numID == "0" {
		return ""
	}
	return p.nums.prefix(numID, ilvl)
}

// noteReference puts the marker of a footnote or endnote reference into
// the paragraph's text and queues the note's text to follow the paragraph.
func (p *docxParser) noteReference(se xml.StartElement, txt *docxText, blk *docxBlock) {
	if p.inNote {
		return
	}
	id := docxAttr(se, "id")
	var marker, text string
	if se.Name.Local == "footnoteReference" {
		p.footCount++
		marker, text = "["+strconv.Itoa(p.footCount)+"]", p.notes[id]
	} else {
		p.endCount++
		marker, text = "["+docxRoman(p.endCount)+"]", p.endnotes[id]
	}
	txt.add(" " + marker + " ")
	if text != "" {
		blk.notes = append(blk.notes, marker+" "+text)
	}
}

// readNotes reads the notes (elem "footnote" or "endnote") of a notes part
// into into by ID, each note's paragraphs joined into one text. Separator
// notes are skipped.
func (p *docxParser) readNotes(d *xml.Decoder, elem string, into map[string]string) error {
	p.d, p.inNote = d, true
	defer func() { p.inNote = false }()
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || !docxW(se.Name, elem) {
			continue
		}
		switch docxAttr(se, "type") {
		case "separator", "continuationSeparator", "continuationNotice":
			if err := d.Skip(); err != nil {
				return err
			}
			continue
		}
		blocks, err := p.parseBlocks(nil)
		if err != nil {
			return err
		}
		var b strings.Builder
		docxJoinText(&b, blocks)
		if len(into) < 100000 {
			into[docxAttr(se, "id")] = NormalizeSpaces(b.String())
		}
	}
}

// docxJoinText writes the text of blocks and their text boxes, separated
// by spaces.
func docxJoinText(b *strings.Builder, blocks []docxBlock) {
	for _, blk := range blocks {
		if blk.text != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(blk.text)
		}
		docxJoinText(b, blk.boxes)
	}
}

// docxNotes returns the queued notes of blocks and their text boxes.
func docxNotes(blocks []docxBlock, out []string) []string {
	for _, blk := range blocks {
		out = append(out, blk.notes...)
		out = docxNotes(blk.boxes, out)
	}
	return out
}

// docxCell is one table cell.
type docxCell struct {
	text      string
	span      int
	page      int
	sect      int
	notes     []string
	headStyle bool // all its paragraphs are in a "Table Heading" style
}

// docxRow is one table row.
type docxRow struct {
	cells  []docxCell
	header bool // repeated as header row (w:tblHeader)
}

// parseTable reads a w:tbl whose start was just read and returns one block
// per row (see rowBlocks).
func (p *docxParser) parseTable() ([]docxBlock, error) {
	var rows []docxRow
	nest := 0
	for {
		tok, err := p.d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skipped, err := p.alternate(t); err != nil {
				return nil, err
			} else if skipped {
				continue
			}
			switch {
			case docxW(t.Name, "tr"):
				row, err := p.parseRow()
				if err != nil {
					return nil, err
				}
				rows = append(rows, row)
			case docxW(t.Name, "tblPr"), docxW(t.Name, "tblGrid"), docxW(t.Name, "del"):
				if err := p.d.Skip(); err != nil {
					return nil, err
				}
			default:
				nest++
			}
		case xml.EndElement:
			p.altEnd(t)
			if nest == 0 {
				return docxRowBlocks(rows), nil
			}
			nest--
		}
	}
}

// parseRow reads a w:tr whose start was just read.
func (p *docxParser) parseRow() (docxRow, error) {
	var row docxRow
	nest := 0
	for {
		tok, err := p.d.Token()
		if err != nil {
			return row, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skipped, err := p.alternate(t); err != nil {
				return row, err
			} else if skipped {
				continue
			}
			switch {
			case docxW(t.Name, "tc"):
				span := 1
				blocks, err := p.parseBlocks(&span)
				if err != nil {
					return row, err
				}
				c := docxCell{span: span, headStyle: true}
				var b strings.Builder
				docxJoinText(&b, blocks)
				c.text = b.String()
				c.notes = docxNotes(blocks, nil)
				for _, blk := range blocks {
					if blk.page != 0 && c.page == 0 {
						c.page, c.sect = blk.page, blk.sect
					}
					if blk.text != "" && blk.style != "table heading" && blk.style != "table header" {
						c.headStyle = false
					}
				}
				row.cells = append(row.cells, c)
			case docxW(t.Name, "trPr"):
				nest++
			case docxW(t.Name, "tblHeader"):
				row.header = docxOn(t)
				if err := p.d.Skip(); err != nil {
					return row, err
				}
			case docxW(t.Name, "tblPrEx"), docxW(t.Name, "trPrChange"):
				if err := p.d.Skip(); err != nil {
					return row, err
				}
			default:
				nest++
			}
		case xml.EndElement:
			p.altEnd(t)
			if nest == 0 {
				return row, nil
			}
			nest--
		}
	}
}

// docxRowBlocks turns table rows into blocks, one per row, cells separated
// by " | ". Header rows (the leading rows marked as repeating header rows,
// or a first row in the "Table Heading" style) are not emitted while data
// rows follow: their cell texts label the data cells of the same grid
// column instead ("Name: Alice | Age: 42"). A header row with a single
// non-empty cell spanning several columns is a caption, emitted as is.
func docxRowBlocks(rows []docxRow) []docxBlock {
	nHead := 0
	for nHead < len(rows) && rows[nHead].header {
		nHead++
	}
	if nHead == 0 && len(rows) > 1 {
		head := false
		for _, c := range rows[0].cells {
			if c.text != "" {
				head = c.headStyle
				if !head {
					break
				}
			}
		}
		if head {
			nHead = 1
		}
	}
	if nHead == len(rows) {
		nHead = 0 // no data rows: the header rows are the data
	}
	var out []docxBlock
	labels := map[int]string{}
	var headNotes []string // notes referenced in header rows go with the first row
	for _, r := range rows[:nHead] {
		var filled []docxCell
		for _, c := range r.cells {
			if c.text != "" {
				filled = append(filled, c)
			}
		}
		if len(filled) == 1 && filled[0].span > 1 {
			out = append(out, docxRowBlock(filled, filled[0].text))
			continue
		}
		for _, c := range r.cells {
			headNotes = append(headNotes, c.notes...)
		}
		col := 0
		for _, c := range r.cells {
			for k := col; k < col+c.span; k++ {
				if c.text != "" && labels[k] != c.text {
					if labels[k] != "" {
						labels[k] += " "
					}
					labels[k] += c.text
				}
			}
			col += c.span
		}
	}
	for _, r := range rows[nHead:] {
		var b strings.Builder
		col := 0
		for _, c := range r.cells {
			if c.text != "" {
				if b.Len() > 0 {
					b.WriteString(" | ")
				}
				if l := labels[col]; l != "" && l != c.text {
					b.WriteString(l)
					b.WriteString(": ")
				}
				b.WriteString(c.text)
			}
			col += c.span
		}
		if b.Len() > 0 {
			blk := docxRowBlock(r.cells, b.String())
			blk.notes = append(headNotes, blk.notes...)
			headNotes = nil
			out = append(out, blk)
		}
	}
	return out
}

// docxRowBlock returns the block of a table row with text text.
func docxRowBlock(cells []docxCell, text string) docxBlock {
	blk := docxBlock{text: text, level: -1}
	for _, c := range cells {
		if blk.page == 0 && c.page != 0 {
			blk.page, blk.sect = c.page, c.sect
		}
		blk.notes = append(blk.notes, c.notes...)
	}
	return blk
}

// paragraphs turns the body's blocks into Paragraphs: headings build the
// breadcrumb path, text boxes follow their anchor paragraph and notes the
// paragraph that references them; pages are corrected for section breaks
// that turned out not to start a new page.
func (p *docxParser) paragraphs(blocks []docxBlock) []Paragraph {
	cancel := make([]int, len(p.sectBreak)+1)
	for i, newPage := range p.sectBreak {
		cancel[i+1] = cancel[i]
		if !newPage {
			cancel[i+1]++
		}
	}
	var (
		out   []Paragraph
		path  [10]string
		crumb string
		emit  func(bs []docxBlock, body bool)
	)
	emit = func(bs []docxBlock, body bool) {
		for i := range bs {
			b := &bs[i]
			page := 0
			if b.page > 0 {
				page = max(b.page-cancel[min(max(b.sect, 0), len(cancel)-1)], 1)
			}
			if b.text != "" {
				if b.level >= 0 && body {
					path[b.level] = b.text
					clear(path[b.level+1:])
					var parts []string
					for _, h := range path[:b.level+1] {
						if h != "" {
							parts = append(parts, h)
						}
					}
					crumb = strings.Join(parts, " > ")
					out = append(out, Paragraph{Text: b.text, PageNum: page, Heading: true, Breadcrumb: crumb})
				} else {
					out = append(out, Paragraph{Text: b.text, PageNum: page, Breadcrumb: crumb})
				}
			}
			emit(b.boxes, false)
			for _, n := range b.notes {
				out = append(out, Paragraph{Text: n, PageNum: page, Breadcrumb: crumb})
			}
		}
	}
	emit(blocks, true)
	return out
}
