package engine

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

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
	blocks int  // paragraphs read so far, against lim.maxBlocks
	text   int  // bytes of their text, against maxDocumentTextBytes
	inNote bool // reading footnotes.xml/endnotes.xml

	notes, endnotes     map[string]string // note ID -> text
	footCount, endCount int

	page       int
	brokeSince bool   // a page break since the last text
	sawText    bool   // body text seen
	sect       int    // section breaks seen
	sectBreak  []bool // per section break: does it start a new page (known later)
	altTaken   []bool // mc:AlternateContent stack: a branch was taken
	// sdtPlaceholder: the last w:sdtPr read says its content is placeholder
	// text.
	sdtPlaceholder bool
}

// wrapper handles the elements that decide which of their content is read:
// of an mc:AlternateContent, only the first mc:Choice (or the mc:Fallback
// when there is no choice); of a content control (w:sdt) showing its
// placeholder ("Click here to enter text."), nothing. It reports whether se
// was consumed.
func (p *docxParser) wrapper(se xml.StartElement) (bool, error) {
	if docxW(se.Name, "sdtPr") {
		placeholder := false
		nest := 0
		for {
			tok, err := p.d.Token()
			if err != nil {
				return true, err
			}
			switch t := tok.(type) {
			case xml.StartElement:
				if nest == 0 && docxW(t.Name, "showingPlcHdr") {
					placeholder = docxOn(t)
				}
				nest++
			case xml.EndElement:
				if nest == 0 {
					p.sdtPlaceholder = placeholder
					return true, nil
				}
				nest--
			}
		}
	}
	if docxW(se.Name, "sdtContent") {
		skip := p.sdtPlaceholder
		p.sdtPlaceholder = false
		if skip {
			return true, p.d.Skip()
		}
		return false, nil
	}
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
			if skipped, err := p.wrapper(t); err != nil {
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
				if p.blocks++; p.lim.maxBlocks > 0 && p.blocks > p.lim.maxBlocks {
					return nil, fmt.Errorf("%w: more than %d paragraphs", ErrDocumentTooLarge, p.lim.maxBlocks)
				}
				if p.text += len(b.text); p.text > maxDocumentTextBytes {
					return nil, fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxDocumentTextBytes)
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
	err   error // the paragraph passed xmlMaxText
}

// add appends text s; visible text fixes the block's page. Past
// xmlMaxText it keeps nothing and sets t.err.
func (t *docxText) add(s string) {
	if t.b.Len()+len(s) > xmlMaxText {
		t.err = xmlTextError()
		return
	}
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
		if txt.err != nil {
			return blk, txt.err
		}
		tok, err := p.d.Token()
		if err != nil {
			return blk, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skipped, err := p.wrapper(t); err != nil {
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
				if body := NormalizeSpaces(txt.b.String()); body != "" {
					blk.text = prefix + body // a list marker alone is no text
				}
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
