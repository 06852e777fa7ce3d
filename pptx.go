package engine

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// DrawingML and PresentationML namespaces (transitional and strict).
const (
	ooxmlNSDrawing       = "http://schemas.openxmlformats.org/drawingml/2006/main"
	ooxmlNSDrawingStrict = "http://purl.oclc.org/ooxml/drawingml/main"
	ooxmlNSMC            = "http://schemas.openxmlformats.org/markup-compatibility/2006"
)

// readZipFile opens the file at path and runs read on it as a zip archive
// reader, adding the path to errors.
func readZipFile(filePath string, read func(io.ReaderAt, int64) ([]Paragraph, error)) ([]Paragraph, error) {
	f, err := os.Open(filePath)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", filePath, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", filePath, err)
	}
	paras, err := read(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", filePath, err)
	}
	return paras, nil
}

// extractPptx returns the paragraphs of the .pptx archive of size bytes in
// r, slide by slide in the presentation's slide order. Errors wrap
// ErrInvalidDocument or ErrDocumentTooLarge.
//
// For slide N (counting every slide, so N is the number PowerPoint shows):
// the title placeholder becomes a Heading paragraph, and every paragraph of
// the slide gets the breadcrumb "Slide N: title" ("Slide N" without a
// title) and PageNum N. The other text boxes and placeholders follow in
// reading order (top to bottom, then left to right, by their position on the
// slide; shapes whose position comes from the layout keep their place in
// the shape tree), one paragraph per text paragraph. Tables give one
// paragraph per row, labelled with the first row's cells ("Name: Alice |
// Age: 42", as HTMLToStructuredText does) unless the table says its first
// row is not a header (firstRow="0"; PowerPoint sets the flag on new
// tables, LibreOffice drops it when it saves). The speaker notes come last, each paragraph
// starting with "Notes: ". Date, footer and slide number placeholders and
// hidden slides are left out.
func extractPptx(r io.ReaderAt, size int64) ([]Paragraph, error) {
	a, err := openZipArchive(r, size, zipDefaultLimits, ErrInvalidDocument, ".pptx")
	if err != nil {
		return nil, err
	}
	main, err := a.opcMainPart("ppt/presentation.xml")
	if err != nil {
		return nil, err
	}
	rels, err := a.partRels(main)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]string, len(rels))
	for _, r := range rels {
		byID[r.ID] = r.Target
	}
	// The slide order is that of p:sldIdLst; each entry names its part
	// through its r:id relationship.
	var ids []string
	if err := a.parse(main, true, func(d *xml.Decoder) error {
		return xmlEachToken(d, func(tok xml.Token) error {
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sldId" {
				for _, at := range se.Attr {
					if at.Name.Local == "id" && strings.HasSuffix(at.Name.Space, "/relationships") {
						ids = append(ids, at.Value)
						if len(ids) > a.lim.maxEntries {
							return fmt.Errorf("%w: more slides than archive entries", ErrInvalidDocument)
						}
					}
				}
			}
			return nil
		})
	}); err != nil {
		return nil, err
	}

	var out []Paragraph
	tableText := 0 // bytes of table row text given so far
	for i, id := range ids {
		n := i + 1
		part := byID[id]
		if part == "" {
			return nil, fmt.Errorf("%w: slide %d has no part (relationship %q)", ErrInvalidDocument, n, id)
		}
		var s pptxSlide
		if err := a.parse(part, true, s.read); err != nil {
			return nil, err
		}
		if s.hidden {
			continue
		}
		srels, err := a.partRels(part)
		if err != nil {
			return nil, err
		}
		var notes pptxSlide
		for _, r := range srels {
			if r.Type == "notesSlide" {
				if err := a.parse(r.Target, false, notes.read); err != nil {
					return nil, err
				}
				break
			}
		}
		if out, err = s.paragraphs(out, n, &notes, &tableText); err != nil {
			return nil, err
		}
		if len(out) > maxDocumentParagraphs {
			return nil, fmt.Errorf("%w: more than %d paragraphs", ErrDocumentTooLarge, maxDocumentParagraphs)
		}
	}
	return out, nil
}

// pptxShape is one shape of a slide with its text.
type pptxShape struct {
	ph       string // placeholder type ("title", "body", ...), "" for none
	isPH     bool
	x, y     int64
	hasPos   bool
	paras    []string
	rows     [][]string
	header   bool
	hasTable bool
}

// pptxSlide collects the shapes of a slide (or of a notes page).
type pptxSlide struct {
	shapes []pptxShape
	hidden bool
}

// read streams a slide part. Shapes inside groups are read as shapes of
// their own; of a markup-compatibility block only the first branch is read.
func (s *pptxSlide) read(d *xml.Decoder) error {
	var (
		cur               *pptxShape
		para              strings.Builder
		inPara, inText    bool
		row               []string
		cell              []string
		inCell, cellMerge bool
		depth             int
		shapeDepth        = -1
	)
	return xmlEachToken(d, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			dml := t.Name.Space == ooxmlNSDrawing || t.Name.Space == ooxmlNSDrawingStrict
			switch {
			case t.Name.Local == "sld" && depth == 1:
				s.hidden = !docxOnVal(docxAttr(t, "show"))
			case t.Name.Space == ooxmlNSMC && t.Name.Local == "Fallback":
				if err := d.Skip(); err != nil {
					return err
				}
				depth--
			case !dml && (t.Name.Local == "sp" || t.Name.Local == "graphicFrame") && cur == nil:
				s.shapes = append(s.shapes, pptxShape{})
				cur = &s.shapes[len(s.shapes)-1]
				shapeDepth = depth
			case cur == nil:
			case t.Name.Local == "ph" && !dml:
				cur.isPH = true
				cur.ph = docxAttr(t, "type")
			case t.Name.Local == "off" && dml && !cur.hasPos:
				x, errX := strconv.ParseInt(docxAttr(t, "x"), 10, 64)
				y, errY := strconv.ParseInt(docxAttr(t, "y"), 10, 64)
				if errX == nil && errY == nil {
					cur.x, cur.y, cur.hasPos = x, y, true
				}
			case !dml:
			case t.Name.Local == "tbl":
				cur.hasTable, cur.header = true, true
			case t.Name.Local == "tblPr":
				cur.header = docxOnVal(docxAttr(t, "firstRow"))
			case t.Name.Local == "tr":
				row = row[:0:0]
			case t.Name.Local == "tc":
				inCell, cell = true, cell[:0]
				cellMerge = docxOnVal(docxAttr(t, "hMerge")) && docxAttr(t, "hMerge") != "" ||
					docxOnVal(docxAttr(t, "vMerge")) && docxAttr(t, "vMerge") != ""
			case t.Name.Local == "p":
				inPara = true
				para.Reset()
			case t.Name.Local == "t" && inPara:
				inText = true
			case t.Name.Local == "br" && inPara:
				para.WriteByte(' ')
			}
		case xml.CharData:
			if inText {
				if err := xmlWriteText(&para, t); err != nil {
					return err
				}
			}
		case xml.EndElement:
			depth--
			if cur == nil {
				return nil
			}
			dml := t.Name.Space == ooxmlNSDrawing || t.Name.Space == ooxmlNSDrawingStrict
			switch {
			case depth+1 == shapeDepth:
				cur, shapeDepth = nil, -1
			case !dml:
			case t.Name.Local == "t":
				inText = false
			case t.Name.Local == "p" && inPara:
				inPara = false
				txt := NormalizeSpaces(para.String())
				switch {
				case txt == "":
				case inCell:
					cell = append(cell, txt)
				default:
					cur.paras = append(cur.paras, txt)
				}
			case t.Name.Local == "tc":
				inCell = false
				if cellMerge {
					row = append(row, "")
				} else {
					row = append(row, strings.Join(cell, " "))
				}
			case t.Name.Local == "tr":
				cur.rows = append(cur.rows, row)
			}
		}
		return nil
	})
}

// paragraphs appends the paragraphs of slide n, with its notes, to out;
// text counts the deck's table row text (see tableRowTextsMax).
func (s *pptxSlide) paragraphs(out []Paragraph, n int, notes *pptxSlide, text *int) ([]Paragraph, error) {
	var title []string
	body := make([]*pptxShape, 0, len(s.shapes))
	for i := range s.shapes {
		sh := &s.shapes[i]
		switch sh.ph {
		case "title", "ctrTitle":
			title = append(title, sh.paras...)
			continue
		case "dt", "ftr", "sldNum", "hdr":
			continue
		}
		body = append(body, sh)
	}
	// Reading order: shapes without a position take that of the shape
	// before them, so they keep their place in the tree.
	var lastX, lastY int64
	for _, sh := range body {
		if sh.hasPos {
			lastX, lastY = sh.x, sh.y
		} else {
			sh.x, sh.y = lastX, lastY
		}
	}
	slices.SortStableFunc(body, func(a, b *pptxShape) int {
		if a.y != b.y {
			return cmpInt64(a.y, b.y)
		}
		return cmpInt64(a.x, b.x)
	})
	crumb := "Slide " + strconv.Itoa(n)
	if t := NormalizeSpaces(strings.Join(title, " ")); t != "" {
		crumb += ": " + t
		out = append(out, Paragraph{Text: t, Heading: true, PageNum: n, Breadcrumb: crumb})
	}
	for _, sh := range body {
		for _, p := range sh.paras {
			out = append(out, Paragraph{Text: p, PageNum: n, Breadcrumb: crumb})
		}
		rows, err := tableRowTextsMax(sh.rows, sh.header, text)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, Paragraph{Text: r, PageNum: n, Breadcrumb: crumb})
		}
	}
	for _, sh := range notes.shapes {
		if !sh.isPH || (sh.ph != "body" && sh.ph != "") {
			continue
		}
		for _, p := range sh.paras {
			out = append(out, Paragraph{Text: "Notes: " + p, PageNum: n, Breadcrumb: crumb})
		}
	}
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
