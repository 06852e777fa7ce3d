package engine

import (
	"fmt"
	"slices"
)

// sheetCell is one non-empty cell of a spreadsheet or OpenDocument table
// row, by its 0-based column. Rows are kept as lists of these rather than
// as slices padded to the last column, so a file whose few cells sit far
// to the right (column XFD, or behind a repeated empty cell) costs memory
// by its cells, not by rows times columns.
type sheetCell struct {
	col  int
	text string
}

// sheetRowSorted returns row ordered by column, keeping only the last cell
// of a column given twice (as writing the cells into a padded row would).
// Cells usually arrive in column order; then row is returned as it is.
func sheetRowSorted(row []sheetCell) []sheetCell {
	if slices.IsSortedFunc(row, func(a, b sheetCell) int { return a.col - b.col }) {
		dup := false
		for i := 1; i < len(row) && !dup; i++ {
			dup = row[i].col == row[i-1].col
		}
		if !dup {
			return row
		}
	}
	slices.SortStableFunc(row, func(a, b sheetCell) int { return a.col - b.col })
	out := row[:0]
	for _, c := range row {
		if n := len(out); n > 0 && out[n-1].col == c.col {
			out[n-1] = c
			continue
		}
		out = append(out, c)
	}
	return out
}

// sheetLabels returns the texts of the header rows as one label per
// column (up to the last column they use): the cells of a column joined
// with a space, a text repeated in the next row not repeated.
func sheetLabels(rows [][]sheetCell) []string {
	var labels []string
	for _, r := range rows {
		for _, c := range r {
			for len(labels) <= c.col {
				labels = append(labels, "")
			}
			if c.text != "" && labels[c.col] != c.text {
				if labels[c.col] != "" {
					labels[c.col] += " "
				}
				labels[c.col] += c.text
			}
		}
	}
	return labels
}

// sheetRowTexts is tableRowTextsMax for sparse rows (each in column order):
// with header, the first headerRows rows label the columns of the others.
// text counts the bytes of text the document has given so far; past
// maxDocumentTextBytes the error wraps ErrDocumentTooLarge, before the row
// that would pass it is built (a long cell repeated across a sheet would
// otherwise be copied into every row's text).
func sheetRowTexts(rows [][]sheetCell, header bool, headerRows int, text *int) ([]string, error) {
	if !header || len(rows) == 0 {
		return sheetLabelledRows(nil, rows, text)
	}
	headerRows = min(max(headerRows, 1), len(rows))
	labels := sheetLabels(rows[:headerRows])
	if rows = rows[headerRows:]; len(rows) == 0 {
		if err := sheetCountText(text, labels, nil); err != nil {
			return nil, err
		}
		if t := labelledRow(nil, labels); t != "" {
			return []string{t}, nil
		}
		return nil, nil
	}
	return sheetLabelledRows(labels, rows, text)
}

// sheetCountText adds to *text an upper bound of the bytes labelledRow
// gives for cells labelled labs, failing past maxDocumentTextBytes.
func sheetCountText(text *int, cells, labs []string) error {
	n := 0
	for i, c := range cells {
		n += len(c) + len(" | ")
		if i < len(labs) {
			n += len(labs[i]) + len(": ")
		}
	}
	if *text += n; *text > maxDocumentTextBytes {
		return fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxDocumentTextBytes)
	}
	return nil
}

// sheetLabelledRows returns the text of each row with text, its cells
// labelled as labelledRow does.
func sheetLabelledRows(labels []string, rows [][]sheetCell, text *int) ([]string, error) {
	out := make([]string, 0, len(rows))
	var cells, labs []string
	for _, r := range rows {
		cells, labs = cells[:0], labs[:0]
		for _, c := range r {
			cells = append(cells, c.text)
			l := ""
			if c.col < len(labels) {
				l = labels[c.col]
			}
			labs = append(labs, l)
		}
		if err := sheetCountText(text, cells, labs); err != nil {
			return nil, err
		}
		if t := labelledRow(labs, cells); t != "" {
			out = append(out, t)
		}
	}
	return out, nil
}

// tableRowTextsMax returns one paragraph text per data row of a table given
// as rows of cell texts, in the shape HTMLToStructuredText gives data
// tables: when header is true the first row labels the columns and every
// later cell is written "Label: value" (cells joined with " | ");
// otherwise cells are joined with " | ". Empty cells are left out, and so
// are rows without text; a table whose only row is its header gives that
// row. It counts the text it builds in *text as sheetRowTexts does: past
// maxDocumentTextBytes it fails with an error wrapping ErrDocumentTooLarge
// before building the row (a long header cell is copied into every data
// row's text).
func tableRowTextsMax(rows [][]string, header bool, text *int) ([]string, error) {
	sparse := make([][]sheetCell, len(rows))
	for i, r := range rows {
		for j, c := range r {
			if c != "" {
				sparse[i] = append(sparse[i], sheetCell{col: j, text: c})
			}
		}
	}
	return sheetRowTexts(sparse, header, 1, text)
}
