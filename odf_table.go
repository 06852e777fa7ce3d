package engine

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// table returns the innermost open table, nil when none.
func (o *odfReader) table() *odfTable {
	if len(o.tables) == 0 {
		return nil
	}
	return o.tables[len(o.tables)-1]
}

// odfRepeat returns a table:number-*-repeated attribute, at least 1.
func odfRepeat(se xml.StartElement, local string) int {
	n, err := strconv.Atoi(odfAttr(se, odfNSTable, local))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func (o *odfReader) endCell() error {
	tb := o.table()
	if tb == nil || tb.cell == nil {
		return nil
	}
	c := tb.cell
	tb.cell = nil
	txt := NormalizeSpaces(strings.Join(c.texts, " "))
	if txt == "" {
		tb.col += c.repeat
		return nil
	}
	for k := 0; k < min(c.repeat, odfMaxRepeat) && tb.col < maxSheetCols; k++ {
		o.cells++
		if o.cells > o.maxCells {
			return fmt.Errorf("%w: more than %d non-empty cells", ErrDocumentTooLarge, o.maxCells)
		}
		tb.row = append(tb.row, sheetCell{col: tb.col, text: txt})
		tb.col++
	}
	return nil
}

func (o *odfReader) endRow() error {
	tb := o.table()
	if tb == nil || len(tb.row) == 0 {
		return nil
	}
	row := sheetRowSorted(tb.row)
	for k := 0; k < min(tb.rowRepeat, odfMaxRepeat); k++ {
		if k > 0 {
			o.cells += len(tb.row)
			if o.cells > o.maxCells {
				return fmt.Errorf("%w: more than %d non-empty cells", ErrDocumentTooLarge, o.maxCells)
			}
		}
		tb.rows = append(tb.rows, row)
		if tb.inHeader {
			tb.headerN++
		}
	}
	tb.row = nil
	return nil
}

func (o *odfReader) endTable() error {
	n := len(o.tables)
	if n == 0 {
		return nil
	}
	tb := o.tables[n-1]
	o.tables = o.tables[:n-1]
	if o.kind == "spreadsheet" && n == 1 {
		if !tb.hidden {
			out, err := appendSheet(o.out, tb.name, tb.rows, &o.tableText)
			if err != nil {
				return err
			}
			o.out = out
		}
		return nil
	}
	// Slide tables rarely mark a header row; like .pptx, their first row
	// labels the others. Several header rows join into one label per
	// column.
	header := tb.headerN > 0 || o.kind == "presentation"
	texts, err := sheetRowTexts(tb.rows, header, tb.headerN, &o.tableText)
	if err != nil {
		return err
	}
	for _, txt := range texts {
		o.emit(Paragraph{Text: txt, PageNum: o.pageFor(), Breadcrumb: o.crumb()})
	}
	for _, p := range tb.after {
		o.emit(p)
	}
	return nil
}
