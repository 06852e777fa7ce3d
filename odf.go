package engine

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// OpenDocument namespaces.
const (
	odfNSText   = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	odfNSTable  = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
	odfNSOffice = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
	odfNSDraw   = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
	odfNSStyle  = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
	odfNSPres   = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
)

// odfMaxRepeat caps how often one repeated table row or cell with content
// is written out.
const odfMaxRepeat = 1000

// extractODF returns the paragraphs of the OpenDocument text (.odt),
// spreadsheet (.ods) or presentation (.odp) of size bytes in r. Errors wrap
// ErrInvalidDocument or ErrDocumentTooLarge. Text documents give headings,
// lists, labelled table rows and notes like .docx; each visible sheet is a
// section like an .xlsx sheet (the same cell cap); each page like a .pptx
// slide. The rules in full: docs/api-reference.md.
func extractODF(r io.ReaderAt, size int64) ([]Paragraph, error) {
	return readODF(r, size, maxSheetCells)
}

// readODF is extractODF with a cap of maxCells non-empty table cells.
func readODF(r io.ReaderAt, size int64, maxCells int) ([]Paragraph, error) {
	a, err := openZipArchive(r, size, zipDefaultLimits, ErrInvalidDocument, "an OpenDocument file")
	if err != nil {
		return nil, err
	}
	o := &odfReader{
		listStyles:   map[string]map[int]bool{},
		hiddenTables: map[string]bool{},
		titleStyles:  map[string]bool{"Title": true},
		maxCells:     maxCells,
		page:         1,
	}
	// styles.xml holds the named list and table styles a text document or
	// spreadsheet may use; a presentation's is mostly master pages, large
	// and of no use here, so it is not read.
	mime, err := a.readHead("mimetype", 256)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(mime, []byte("presentation")) {
		if err := a.parse("styles.xml", false, o.readStyles); err != nil {
			return nil, err
		}
	}
	if err := a.parse("content.xml", true, o.readContent); err != nil {
		return nil, err
	}
	return o.out, nil
}

// odfPara is a paragraph being built.
type odfPara struct {
	sb      strings.Builder
	heading bool
	level   int
	marker  string
	after   []Paragraph // notes and frame paragraphs to emit after it
}

// odfList is an open text:list.
type odfList struct {
	style   string
	counter int
	item    bool // the current item's first paragraph has not been seen
}

// odfCell is an open table cell.
type odfCell struct {
	texts  []string
	repeat int
}

// odfTable is an open table.
type odfTable struct {
	name      string
	hidden    bool
	inHeader  bool
	headerN   int
	rows      [][]sheetCell
	row       []sheetCell
	rowRepeat int
	cell      *odfCell
	col       int
	after     []Paragraph // paragraphs of frames inside cells
}

// odfReader streams an OpenDocument content part.
type odfReader struct {
	out          []Paragraph
	trail        headingTrail
	page         int
	kind         string // "text", "spreadsheet", "presentation"
	listStyles   map[string]map[int]bool
	hiddenTables map[string]bool
	curListStyle string
	curTblStyle  string
	titleStyles  map[string]bool // paragraph styles that are, or derive from, Title

	paras  []*odfPara
	lists  []*odfList
	tables []*odfTable
	notes  []*odfPara // open note bodies
	cite   string

	slide      int
	slideCrumb string
	frameClass string
	inNotes    bool
	cells      int
	maxCells   int
	tableText  int // bytes of table row text given so far
}

// readStyles reads the list styles and the hidden table styles of a styles
// or content part's style sections.
func (o *odfReader) readStyles(d *xml.Decoder) error {
	return xmlEachToken(d, func(tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok {
			o.styleElement(se)
		}
		return nil
	})
}

// styleElement records what the style element se says about list
// numbering and table visibility.
func (o *odfReader) styleElement(se xml.StartElement) {
	switch {
	case se.Name.Space == odfNSText && se.Name.Local == "list-style":
		o.curListStyle = odfAttr(se, odfNSStyle, "name")
		if o.listStyles[o.curListStyle] == nil && len(o.listStyles) < 10000 {
			o.listStyles[o.curListStyle] = map[int]bool{}
		}
	case se.Name.Space == odfNSText && se.Name.Local == "list-level-style-number":
		if m := o.listStyles[o.curListStyle]; m != nil {
			lvl, _ := strconv.Atoi(odfAttr(se, odfNSText, "level"))
			if len(m) < 20 {
				m[lvl] = odfAttr(se, odfNSStyle, "num-format") != ""
			}
		}
	case se.Name.Space == odfNSStyle && se.Name.Local == "style":
		o.curTblStyle = ""
		name := odfAttr(se, odfNSStyle, "name")
		switch odfAttr(se, odfNSStyle, "family") {
		case "table":
			o.curTblStyle = name
		case "paragraph":
			if o.titleStyles[odfAttr(se, odfNSStyle, "parent-style-name")] && len(o.titleStyles) < 10000 {
				o.titleStyles[name] = true
			}
		}
	case se.Name.Space == odfNSStyle && se.Name.Local == "table-properties":
		if o.curTblStyle != "" && odfAttr(se, odfNSTable, "display") == "false" && len(o.hiddenTables) < 10000 {
			o.hiddenTables[o.curTblStyle] = true
		}
	}
}

// odfAttr returns the attribute space:local of se.
func odfAttr(se xml.StartElement, space, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local && a.Name.Space == space {
			return a.Value
		}
	}
	return ""
}

// odfSkipped reports whether the element's content is left out.
func odfSkipped(n xml.Name) bool {
	switch n.Space {
	case odfNSOffice:
		return n.Local == "annotation" || n.Local == "annotation-end" || n.Local == "forms" || n.Local == "scripts"
	case odfNSText:
		switch n.Local {
		case "tracked-changes", "table-of-content", "illustration-index", "table-index", "object-index",
			"user-index", "alphabetical-index", "bibliography", "note-citation", "sequence-decls",
			"variable-decls", "user-field-decls":
			return true
		}
	case "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0":
		return n.Local == "title" || n.Local == "desc"
	}
	return false
}

// readContent streams content.xml.
func (o *odfReader) readContent(d *xml.Decoder) error {
	return xmlEachToken(d, func(tok xml.Token) error {
		if len(o.out) > maxDocumentParagraphs {
			return fmt.Errorf("%w: more than %d paragraphs", ErrDocumentTooLarge, maxDocumentParagraphs)
		}
		var err error
		switch t := tok.(type) {
		case xml.StartElement:
			if odfSkipped(t.Name) {
				if t.Name.Space == odfNSText && t.Name.Local == "note-citation" {
					o.cite, err = odfText(d)
				} else {
					err = d.Skip()
				}
				if err != nil {
					return err
				}
				return nil
			}
			if err := o.start(t); err != nil {
				return err
			}
		case xml.CharData:
			if p := o.para(); p != nil {
				if err := xmlWriteText(&p.sb, t); err != nil {
					return err
				}
			}
		case xml.EndElement:
			if err := o.end(t); err != nil {
				return err
			}
		}
		return nil
	})
}

// odfText returns the text inside the element whose start was just read.
func odfText(d *xml.Decoder) (string, error) {
	var sb strings.Builder
	for depth := 1; depth > 0; {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if err := xmlWriteText(&sb, t); err != nil {
				return "", err
			}
		}
	}
	return NormalizeSpaces(sb.String()), nil
}

// para returns the innermost open paragraph, nil when none.
func (o *odfReader) para() *odfPara {
	if len(o.paras) == 0 {
		return nil
	}
	return o.paras[len(o.paras)-1]
}

func (o *odfReader) start(t xml.StartElement) error {
	switch t.Name.Space {
	case odfNSOffice:
		switch t.Name.Local {
		case "text", "spreadsheet", "presentation":
			if o.kind == "" {
				o.kind = t.Name.Local
			}
		}
	case odfNSStyle:
		o.styleElement(t)
	case odfNSText:
		switch t.Name.Local {
		case "list-style", "list-level-style-number":
			o.styleElement(t)
		case "h", "p":
			p := &odfPara{}
			if t.Name.Local == "h" && len(o.tables) == 0 && len(o.notes) == 0 && o.kind == "text" {
				p.heading = true
				p.level, _ = strconv.Atoi(odfAttr(t, odfNSText, "outline-level"))
				if p.level < 1 {
					p.level = 1
				}
			} else if len(o.tables) == 0 && len(o.notes) == 0 && o.kind == "text" && o.titleStyles[odfAttr(t, odfNSText, "style-name")] {
				p.heading = true // the document title, above every outline level
			}
			if n := len(o.lists); n > 0 && o.lists[n-1].item && !p.heading {
				l := o.lists[n-1]
				l.item = false
				p.marker = "- "
				if o.numbered(n) {
					p.marker = strconv.Itoa(l.counter) + ". "
				}
			}
			if len(o.paras) > 64 {
				return fmt.Errorf("%w: paragraphs nested more than 64 deep", ErrInvalidDocument)
			}
			o.paras = append(o.paras, p)
		case "list":
			if len(o.lists) > 64 {
				return fmt.Errorf("%w: lists nested more than 64 deep", ErrInvalidDocument)
			}
			style := odfAttr(t, odfNSText, "style-name")
			if style == "" && len(o.lists) > 0 {
				style = o.lists[len(o.lists)-1].style
			}
			o.lists = append(o.lists, &odfList{style: style})
		case "list-item", "list-header":
			if n := len(o.lists); n > 0 {
				l := o.lists[n-1]
				l.item = t.Name.Local == "list-item"
				if l.item {
					l.counter++
					if v, err := strconv.Atoi(odfAttr(t, odfNSText, "start-value")); err == nil && v > 0 && v < 1e6 {
						l.counter = v
					}
				}
			}
		case "s":
			if p := o.para(); p != nil {
				p.sb.WriteByte(' ')
			}
		case "tab", "line-break":
			if p := o.para(); p != nil {
				p.sb.WriteByte(' ')
			}
		case "soft-page-break":
			o.page++
		case "note":
			o.cite = ""
		case "note-body":
			if len(o.notes) > 16 {
				return fmt.Errorf("%w: notes nested more than 16 deep", ErrInvalidDocument)
			}
			n := &odfPara{}
			n.sb.WriteString("[" + o.cite + "] ")
			if p := o.para(); p != nil {
				p.sb.WriteString("[" + o.cite + "]")
			}
			o.notes = append(o.notes, n)
		}
	case odfNSTable:
		switch t.Name.Local {
		case "table":
			if len(o.tables) > 32 {
				return fmt.Errorf("%w: tables nested more than 32 deep", ErrInvalidDocument)
			}
			o.tables = append(o.tables, &odfTable{
				name:   NormalizeSpaces(odfAttr(t, odfNSTable, "name")),
				hidden: o.hiddenTables[odfAttr(t, odfNSTable, "style-name")],
			})
		case "table-header-rows":
			if tb := o.table(); tb != nil {
				tb.inHeader = true
			}
		case "table-row":
			if tb := o.table(); tb != nil {
				tb.row, tb.col = nil, 0
				tb.rowRepeat = odfRepeat(t, "number-rows-repeated")
			}
		case "table-cell", "covered-table-cell":
			if tb := o.table(); tb != nil {
				tb.cell = &odfCell{repeat: odfRepeat(t, "number-columns-repeated")}
			}
		}
	case odfNSDraw:
		switch t.Name.Local {
		case "page":
			o.slide++
			o.slideCrumb = "Slide " + strconv.Itoa(o.slide)
		case "frame":
			o.frameClass = odfAttr(t, odfNSPres, "class")
		}
	case odfNSPres:
		if t.Name.Local == "notes" {
			o.inNotes = true
		}
	}
	return nil
}

// numbered reports whether the list at depth n (1-based) numbers its items.
func (o *odfReader) numbered(n int) bool {
	style := o.lists[n-1].style
	for i := n - 1; style == "" && i >= 0; i-- {
		style = o.lists[i].style
	}
	return o.listStyles[style][n]
}

func (o *odfReader) end(t xml.EndElement) error {
	switch t.Name.Space {
	case odfNSText:
		switch t.Name.Local {
		case "h", "p":
			return o.endPara()
		case "list":
			if n := len(o.lists); n > 0 {
				o.lists = o.lists[:n-1]
			}
		case "note-body":
			if n := len(o.notes); n > 0 {
				note := o.notes[n-1]
				o.notes = o.notes[:n-1]
				if txt := NormalizeSpaces(note.sb.String()); txt != "" {
					o.emit(Paragraph{Text: txt, PageNum: o.page})
				}
			}
		}
	case odfNSTable:
		switch t.Name.Local {
		case "table-header-rows":
			if tb := o.table(); tb != nil {
				tb.inHeader = false
			}
		case "table-cell", "covered-table-cell":
			return o.endCell()
		case "table-row":
			return o.endRow()
		case "table":
			return o.endTable()
		}
	case odfNSDraw:
		if t.Name.Local == "frame" {
			o.frameClass = ""
		}
	case odfNSPres:
		if t.Name.Local == "notes" {
			o.inNotes = false
		}
	}
	return nil
}

// emit sends a finished paragraph where it belongs: after the enclosing
// paragraph, into the enclosing table, or to the output.
func (o *odfReader) emit(p Paragraph) {
	switch {
	case len(o.paras) > 0:
		parent := o.paras[len(o.paras)-1]
		parent.after = append(parent.after, p)
	case o.table() != nil && o.table().cell == nil:
		tb := o.table()
		tb.after = append(tb.after, p)
	case o.table() != nil:
		o.table().cell.texts = append(o.table().cell.texts, p.Text)
	default:
		if p.Breadcrumb == "" && !p.Heading {
			p.Breadcrumb = o.crumb()
		}
		o.out = append(o.out, p)
	}
}

// crumb returns the breadcrumb for a body paragraph.
func (o *odfReader) crumb() string {
	if o.kind == "presentation" {
		return o.slideCrumb
	}
	return o.trail.crumb()
}

func (o *odfReader) endPara() error {
	n := len(o.paras)
	if n == 0 {
		return nil
	}
	p := o.paras[n-1]
	o.paras = o.paras[:n-1]
	txt := NormalizeSpaces(p.sb.String())
	if len(o.notes) > 0 {
		// A paragraph of a note body: part of the note's text.
		note := o.notes[len(o.notes)-1]
		note.sb.WriteString(txt)
		note.sb.WriteByte(' ')
		for _, a := range p.after {
			note.sb.WriteString(a.Text)
			note.sb.WriteByte(' ')
		}
		return nil
	}
	page := o.page
	switch {
	case txt == "":
	case p.heading && len(o.paras) == 0:
		level := p.level
		if len(o.trail.levels) == 1 && o.trail.levels[0] == 0 && o.trail.texts[0] == txt {
			level = 0 // a first heading repeating the title: one breadcrumb level
		}
		o.emit(Paragraph{Text: txt, Heading: true, PageNum: page, Breadcrumb: o.trail.push(level, txt)})
	case o.kind == "presentation" && o.frameClass == "title" && !o.inNotes && len(o.tables) == 0:
		o.slideCrumb = "Slide " + strconv.Itoa(o.slide) + ": " + txt
		o.emit(Paragraph{Text: txt, Heading: true, PageNum: o.slide, Breadcrumb: o.slideCrumb})
	case o.kind == "presentation" && odfFurniture(o.frameClass):
	case o.kind == "presentation" && o.inNotes:
		o.emit(Paragraph{Text: "Notes: " + txt, PageNum: o.slide, Breadcrumb: o.slideCrumb})
	case o.kind == "presentation":
		o.emit(Paragraph{Text: p.marker + txt, PageNum: o.slide, Breadcrumb: o.slideCrumb})
	default:
		o.emit(Paragraph{Text: p.marker + txt, PageNum: page})
	}
	for _, a := range p.after {
		o.emit(a)
	}
	return nil
}

// pageFor is the PageNum of a paragraph emitted now.
func (o *odfReader) pageFor() int {
	if o.kind == "presentation" {
		return o.slide
	}
	return o.page
}

// odfFurniture reports whether a presentation frame class is page
// furniture (numbers, footers, dates) rather than content.
func odfFurniture(class string) bool {
	switch class {
	case "page-number", "footer", "date-time", "header", "page":
		return true
	}
	return false
}
