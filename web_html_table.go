package engine

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/html/atom"
)

type htmlCell struct {
	paras     []htmlRawPara
	th        bool
	heading   bool // a heading ended in the cell
	nested    bool // a table ended in the cell
	colspan   int32
	rowspan   int32
	col       int32
	linkChars int32
	textChars int32
}

type htmlRow struct {
	cells []htmlCell
	head  bool
}

// htmlTable collects a table until its end decides how it is emitted.
type htmlTable struct {
	out       *[]htmlRawPara // where the table's paragraphs go
	zone      htmlFlags
	boil      int32
	layout    bool
	rows      []htmlRow
	rowOpen   bool
	cellOpen  bool
	caption   []htmlRawPara
	inCaption bool
	thCount   int
	cells     int // cells in rows, counted in htmlBuilder.cells too
}

// htmlMaxCells bounds the cells the open tables of a page hold at once
// (about 100 bytes each until the table ends): a table of a million
// cells is far beyond what the chunk limit lets a page give.
const htmlMaxCells = 1_000_000

// openCell returns the cell being filled, or nil.
func (t *htmlTable) openCell() *htmlCell {
	if !t.cellOpen || t.inCaption || len(t.rows) == 0 {
		return nil
	}
	r := &t.rows[len(t.rows)-1]
	if len(r.cells) == 0 {
		return nil
	}
	return &r.cells[len(r.cells)-1]
}

// emitTable writes a finished table to its sink: as ordinary content when it
// is a layout table, not at all when it is a navigation table, else as one
// paragraph per data row (see HTMLToStructuredText).
func (b *htmlBuilder) emitTable(t *htmlTable) {
	b.cells -= t.cells
	out := t.out
	*out = append(*out, t.caption...)
	var linkChars, textChars int32
	maxCols, heading := 0, false
	for _, r := range t.rows {
		maxCols = max(maxCols, len(r.cells))
		for _, c := range r.cells {
			linkChars += c.linkChars
			textChars += c.textChars
			heading = heading || c.heading
		}
	}
	switch {
	case t.layout || heading || maxCols <= 1:
		for _, r := range t.rows {
			for _, c := range r.cells {
				if c.linkChars > 0 && c.textChars == 0 && !c.heading && !c.nested {
					continue // a cell of links only: navigation
				}
				*out = append(*out, c.paras...)
			}
		}
	case t.thCount == 0 && linkChars > 0 && textChars == 0:
		// A table of links only: a navigation bar laid out as a table.
	default:
		// The rows repeat the column labels: they spend their own text,
		// and the cells' text (spent when each cell's paragraph ended)
		// goes back once the rows replace it.
		rows, size := htmlDataRows(t, b.textLeft)
		if !b.spend(size) {
			return
		}
		for _, r := range t.rows {
			for _, c := range r.cells {
				for _, p := range c.paras {
					b.textLeft += len(p.text)
				}
			}
		}
		for _, row := range rows {
			*out = append(*out, htmlRawPara{text: row, zone: t.zone, boil: t.boil})
		}
	}
}

// htmlCellText joins the paragraphs of a cell with spaces.
func htmlCellText(c *htmlCell) string {
	switch len(c.paras) {
	case 0:
		return ""
	case 1:
		return c.paras[0].text
	}
	var sb strings.Builder
	for i, p := range c.paras {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(p.text)
	}
	return sb.String()
}

// htmlDataRows formats a data table's rows. Cells are placed on a grid that
// honours colspan and rowspan (a spanned cell's text is not repeated); the
// leading rows that are in <thead> or consist of <th> cells only give each
// column its label. size is the bytes of the rows; past left it stops
// early, returning size > left.
func htmlDataRows(t *htmlTable, left int) (rows []string, size int) {
	var (
		labels      []string
		span        []int32 // rows a column stays occupied by a rowspan
		spanActive  int
		headerPhase = true
		headerRows  []string
		dataRows    []string
		parts       []string
	)
	for ri := range t.rows {
		r := &t.rows[ri]
		if len(r.cells) == 0 {
			continue
		}
		col := 0
		for ci := range r.cells {
			c := &r.cells[ci]
			for col < len(span) && span[col] > 0 {
				col++
			}
			c.col = int32(min(col, htmlMaxCols))
			for k := col; k < col+int(c.colspan) && k < htmlMaxCols; k++ {
				for len(span) <= k {
					span = append(span, 0)
				}
				if c.rowspan > 1 {
					if span[k] == 0 {
						spanActive++
					}
					span[k] = c.rowspan
				}
			}
			col += int(c.colspan)
		}
		if spanActive > 0 {
			for k := range span {
				if span[k] > 0 {
					span[k]--
					if span[k] == 0 {
						spanActive--
					}
				}
			}
		}

		isHeader := r.head
		if !isHeader && headerPhase {
			isHeader = true
			for _, c := range r.cells {
				if !c.th {
					isHeader = false
					break
				}
			}
		}
		parts = parts[:0]
		if isHeader {
			for ci := range r.cells {
				c := &r.cells[ci]
				text := htmlCellText(c)
				if text == "" {
					continue
				}
				parts = append(parts, text)
				for k := int(c.col); k < int(c.col)+int(c.colspan) && k < htmlMaxCols; k++ {
					for len(labels) <= k {
						labels = append(labels, "")
					}
					switch {
					case labels[k] == "":
						labels[k] = text
					case labels[k] != text && len(labels[k])+len(text) < htmlMaxLabel:
						labels[k] += " " + text
					}
				}
			}
			if len(parts) > 0 {
				headerRows = append(headerRows, strings.Join(parts, " | "))
			}
			continue
		}
		headerPhase = false
		rowHeader := ""
		for ci := range r.cells {
			c := &r.cells[ci]
			text := htmlCellText(c)
			if text == "" {
				continue
			}
			label := ""
			if int(c.col) < len(labels) {
				label = labels[c.col]
			}
			switch {
			case c.th && label == "" && ci == 0 && len(labels) == 0:
				rowHeader = text
			case label != "" && label != text:
				parts = append(parts, label+": "+text)
			default:
				parts = append(parts, text)
			}
		}
		var row string
		switch {
		case rowHeader != "" && len(parts) > 0:
			row = rowHeader + ": " + strings.Join(parts, " | ")
		case rowHeader != "":
			row = rowHeader
		default:
			row = strings.Join(parts, " | ")
		}
		if row != "" {
			dataRows = append(dataRows, row)
			if size += len(row); size > left {
				return nil, size
			}
		}
	}
	if len(dataRows) == 0 {
		size = 0
		for _, h := range headerRows {
			size += len(h)
		}
		return headerRows, size
	}
	return dataRows, size
}

// openStructure starts the table, row, cell or list item e opened.
func (b *htmlBuilder) openStructure(a atom.Atom, at htmlTagAttrs) {
	e := b.top()
	var t *htmlTable
	if n := len(b.tables); n > 0 {
		t = b.tables[n-1]
	}
	switch a {
	case atom.Table:
		if t != nil {
			t.layout = true
			if c := t.openCell(); c != nil {
				c.nested = true
			}
		}
		nt := &htmlTable{out: b.sink(), zone: e.flags, boil: e.boil, layout: at.role == "presentation" || at.role == "none"}
		b.tables = append(b.tables, nt)
		e.table = true
	case atom.Caption:
		if t != nil {
			t.inCaption = true
			e.table = true
		}
	case atom.Tr:
		if t != nil {
			head := false
			if s := e.scope[htmlScopeTSect]; s >= 0 && b.stack[s].a == atom.Thead {
				head = true
			}
			t.rows = append(t.rows, htmlRow{head: head})
			t.rowOpen, t.cellOpen = true, false
			e.table = true
		}
	case atom.Td, atom.Th:
		if t != nil && !t.inCaption {
			if !t.rowOpen {
				t.rows = append(t.rows, htmlRow{})
				t.rowOpen = true
			}
			r := &t.rows[len(t.rows)-1]
			r.cells = append(r.cells, htmlCell{th: a == atom.Th, colspan: int32(at.colspan), rowspan: int32(at.rowspan)})
			t.cells++
			if b.cells++; b.cells > htmlMaxCells && b.err == nil {
				b.err = fmt.Errorf("%w: tables of more than %d cells", ErrDocumentTooLarge, htmlMaxCells)
			}
			t.cellOpen = true
			if a == atom.Th {
				t.thCount++
			}
			e.table = true
		}
	case atom.Li:
		b.prefix = "- "
		if l := e.scope[htmlScopeList]; l >= 0 && b.stack[l].ordered {
			b.prefix = strconv.Itoa(b.stack[l].next) + ". "
			b.stack[l].next++
		}
	}
}
