package engine

import (
	"encoding/xml"
	"fmt"
	"strings"
)

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
			if skipped, err := p.wrapper(t); err != nil {
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
				return docxRowBlocksMax(rows, &p.text)
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
			if skipped, err := p.wrapper(t); err != nil {
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
	out, _ := docxRowBlocksMax(rows, nil)
	return out
}

// docxRowBlocksMax is docxRowBlocks adding the bytes of the labels it
// copies into data rows to *text (nil: not counted): past
// maxDocumentTextBytes it stops with an error wrapping ErrDocumentTooLarge
// before building the row, as a long header cell over many rows would be
// copied into each (the cells' own text is counted where it is read).
func docxRowBlocksMax(rows []docxRow, text *int) ([]docxBlock, error) {
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
		if text != nil {
			col := 0
			for _, c := range r.cells {
				if l := labels[col]; c.text != "" && l != "" && l != c.text {
					*text += len(l) + len(": ")
				}
				col += c.span
			}
			if *text > maxDocumentTextBytes {
				return nil, fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxDocumentTextBytes)
			}
		}
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
	return out, nil
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
