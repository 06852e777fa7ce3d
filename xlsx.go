package engine

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxSheetCells caps the non-empty cells a spreadsheet reader accepts
// across a workbook (see ErrDocumentTooLarge).
const maxSheetCells = 2_000_000

// maxSheetCols caps the columns of a spreadsheet row (Excel's own limit).
const maxSheetCols = 16384

// extractXlsx returns the paragraphs of the .xlsx workbook of size bytes in
// r. Errors wrap ErrInvalidDocument or ErrDocumentTooLarge.
//
// Each visible sheet, in workbook order, is a section: a Heading paragraph
// with the sheet's name (also its breadcrumb), then one paragraph per
// non-empty row. The first non-empty row gives the column labels, and every
// later row is written "label: value" for each non-empty cell, cells joined
// with " | " (a cell under an empty label is written bare), as
// HTMLToStructuredText writes data tables. Cell values are shared strings,
// inline strings, or the cached values Excel stored for formulas; numbers
// are written with up to 15 significant digits, and numbers formatted as
// dates or times (built-in formats 14-22 and 45-47, and custom formats with
// day or year codes) as "2006-01-02", "2006-01-02 15:04" or "15:04:05";
// percentages as "12.5%"; booleans as TRUE and FALSE. Hidden and very hidden
// sheets are skipped. A workbook with more than 2,000,000 non-empty cells
// gives an error wrapping ErrDocumentTooLarge rather than a partial read.
func extractXlsx(r io.ReaderAt, size int64) ([]Paragraph, error) {
	return readXlsx(r, size, maxSheetCells)
}

// readXlsx is extractXlsx with a cap of maxCells non-empty cells.
func readXlsx(r io.ReaderAt, size int64, maxCells int) ([]Paragraph, error) {
	a, err := openZipArchive(r, size, zipDefaultLimits, ErrInvalidDocument, ".xlsx")
	if err != nil {
		return nil, err
	}
	main, err := a.opcMainPart("xl/workbook.xml")
	if err != nil {
		return nil, err
	}
	rels, err := a.partRels(main)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]string, len(rels))
	var sstPart, stylesPart string
	for _, r := range rels {
		byID[r.ID] = r.Target
		switch r.Type {
		case "sharedStrings":
			sstPart = r.Target
		case "styles":
			stylesPart = r.Target
		}
	}
	var wb struct {
		Pr struct {
			Date1904 string `xml:"date1904,attr"`
		} `xml:"workbookPr"`
		Sheets []struct {
			Name  string     `xml:"name,attr"`
			State string     `xml:"state,attr"`
			Attrs []xml.Attr `xml:",any,attr"`
		} `xml:"sheets>sheet"`
	}
	if err := a.parse(main, true, func(d *xml.Decoder) error { return d.Decode(&wb) }); err != nil {
		return nil, err
	}
	x := &xlsxReader{a: a, maxCells: maxCells, date1904: wb.Pr.Date1904 != "" && docxOnVal(wb.Pr.Date1904)}
	if sstPart != "" {
		if err := a.parse(sstPart, false, x.readSharedStrings); err != nil {
			return nil, err
		}
	}
	if stylesPart != "" {
		if err := a.parse(stylesPart, false, x.readStyles); err != nil {
			return nil, err
		}
	}
	var out []Paragraph
	for _, sh := range wb.Sheets {
		if sh.State == "hidden" || sh.State == "veryHidden" {
			continue
		}
		var rid string
		for _, at := range sh.Attrs {
			if at.Name.Local == "id" && strings.HasSuffix(at.Name.Space, "/relationships") {
				rid = at.Value
			}
		}
		part := byID[rid]
		if part == "" {
			return nil, fmt.Errorf("%w: sheet %q has no part (relationship %q)", ErrInvalidDocument, sh.Name, rid)
		}
		x.rows = x.rows[:0]
		if err := a.parse(part, true, x.readSheet); err != nil {
			return nil, err
		}
		if out, err = appendSheet(out, NormalizeSpaces(sh.Name), x.rows, &x.text); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendSheet appends a sheet's section to out: a heading with its name,
// then its rows labelled by the first one (see extractXlsx).
// text counts the document's bytes of text (see sheetRowTexts).
func appendSheet(out []Paragraph, name string, rows [][]sheetCell, text *int) ([]Paragraph, error) {
	var nonEmpty [][]sheetCell
	for _, r := range rows {
		for _, c := range r {
			if strings.TrimSpace(c.text) != "" {
				nonEmpty = append(nonEmpty, r)
				break
			}
		}
	}
	if len(nonEmpty) == 0 {
		return out, nil
	}
	if name != "" {
		out = append(out, Paragraph{Text: name, Heading: true, Breadcrumb: name})
	}
	texts, err := sheetRowTexts(nonEmpty, true, 1, text)
	if err != nil {
		return nil, err
	}
	for _, t := range texts {
		out = append(out, Paragraph{Text: t, Breadcrumb: name})
	}
	return out, nil
}

// xlsxReader holds a workbook's shared parts while its sheets are read.
type xlsxReader struct {
	a        *zipArchive
	sst      []string
	numFmts  map[int]string // custom number formats by id
	xfFmt    []int          // number format id by cell style index
	date1904 bool
	cells    int
	maxCells int
	rows     [][]sheetCell
	text     int // bytes of row text given so far
}

// readSharedStrings reads the shared string table: the text of each si
// (its t, or its runs' t), phonetic runs left out.
func (x *xlsxReader) readSharedStrings(d *xml.Decoder) error {
	var (
		sb           strings.Builder
		inSI, inText bool
		phonetic     int
	)
	return xmlEachToken(d, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inSI = true
				sb.Reset()
			case "rPh":
				phonetic++
			case "t":
				inText = inSI && phonetic == 0
			}
		case xml.CharData:
			if inText {
				if err := xmlWriteText(&sb, t); err != nil {
					return err
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				inSI = false
				if len(x.sst) >= x.maxCells {
					return fmt.Errorf("%w: more than %d shared strings", ErrDocumentTooLarge, x.maxCells)
				}
				x.sst = append(x.sst, sb.String())
			case "rPh":
				phonetic--
			case "t":
				inText = false
			}
		}
		return nil
	})
}

// readStyles reads the number format of each cell style.
func (x *xlsxReader) readStyles(d *xml.Decoder) error {
	x.numFmts = map[int]string{}
	inXfs := false
	return xmlEachToken(d, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "numFmt":
				if id, err := strconv.Atoi(docxAttr(t, "numFmtId")); err == nil && len(x.numFmts) < 10000 {
					x.numFmts[id] = docxAttr(t, "formatCode")
				}
			case "cellXfs":
				inXfs = true
			case "xf":
				if inXfs && len(x.xfFmt) < 1<<16 {
					id, _ := strconv.Atoi(docxAttr(t, "numFmtId"))
					x.xfFmt = append(x.xfFmt, id)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
		return nil
	})
}

// readSheet reads a worksheet's rows into x.rows.
func (x *xlsxReader) readSheet(d *xml.Decoder) error {
	var (
		row             []sheetCell
		inRow, inCell   bool
		inV, inIS, inT  bool
		typ             string
		style, col, ncl int
		val             strings.Builder
	)
	return xmlEachToken(d, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				inRow, row, ncl = true, nil, 0
			case "c":
				if !inRow {
					return nil
				}
				inCell = true
				typ = docxAttr(t, "t")
				style, _ = strconv.Atoi(docxAttr(t, "s"))
				col = ncl
				if ref := docxAttr(t, "r"); ref != "" {
					if c, ok := xlsxColumn(ref); ok {
						col = c
					}
				}
				ncl = col + 1
				val.Reset()
			case "v":
				inV = inCell
			case "is":
				inIS = inCell
			case "t":
				inT = inIS
			case "rPh":
				inIS = false // phonetic text of an inline string
			}
		case xml.CharData:
			if inV || inT {
				if err := xmlWriteText(&val, t); err != nil {
					return err
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v":
				inV = false
			case "t":
				inT = false
			case "is":
				inIS = false
			case "c":
				if !inCell {
					return nil
				}
				inCell = false
				v := x.cellText(typ, style, val.String())
				if v == "" || col >= maxSheetCols {
					return nil
				}
				x.cells++
				if x.cells > x.maxCells {
					return fmt.Errorf("%w: more than %d non-empty cells (a workbook this large is data, not a document; split it or export the sheets you need)", ErrDocumentTooLarge, x.maxCells)
				}
				row = append(row, sheetCell{col: col, text: v})
			case "row":
				inRow = false
				if len(row) > 0 {
					x.rows = append(x.rows, sheetRowSorted(row))
				}
			}
		}
		return nil
	})
}

// xlsxColumn returns the 0-based column of a cell reference ("C7" is 2).
func xlsxColumn(ref string) (int, bool) {
	col := 0
	i := 0
	for ; i < len(ref) && i < 4; i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
	}
	return col - 1, i > 0
}

// cellText returns the text of a cell of type typ and style index style
// whose v (or inline string) is raw.
func (x *xlsxReader) cellText(typ string, style int, raw string) string {
	switch typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || i < 0 || i >= len(x.sst) {
			return ""
		}
		return NormalizeSpaces(x.sst[i])
	case "b":
		switch strings.TrimSpace(raw) {
		case "1":
			return "TRUE"
		case "0":
			return "FALSE"
		}
		return ""
	case "inlineStr", "str", "e":
		return NormalizeSpaces(raw)
	}
	raw = strings.TrimSpace(raw)
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return NormalizeSpaces(raw)
	}
	fmtID := 0
	if style >= 0 && style < len(x.xfFmt) {
		fmtID = x.xfFmt[style]
	}
	code := x.numFmts[fmtID]
	switch kind := xlsxFormatKind(fmtID, code); kind {
	case "date", "datetime", "time":
		if s, ok := xlsxDate(f, x.date1904, kind); ok {
			return s
		}
	case "percent":
		return xlsxNumber(f*100) + "%"
	}
	return xlsxNumber(f)
}

// xlsxNumber writes f with at most 15 significant digits, as Excel shows
// it, without an exponent for ordinary magnitudes.
func xlsxNumber(f float64) string {
	g, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		g = f
	}
	if a := math.Abs(g); a != 0 && (a >= 1e21 || a < 1e-9) {
		return strconv.FormatFloat(g, 'g', -1, 64)
	}
	return strconv.FormatFloat(g, 'f', -1, 64)
}

// xlsxFormatKind classifies a number format: "date", "datetime", "time",
// "percent" or "" for anything else.
func xlsxFormatKind(id int, code string) string {
	switch {
	case id >= 14 && id <= 17:
		return "date"
	case id == 22:
		return "datetime"
	case id >= 18 && id <= 21, id >= 45 && id <= 47:
		return "time"
	case id == 9 || id == 10:
		return "percent"
	case code == "":
		return ""
	}
	// Drop quoted text, escapes and bracketed sections ([Red], [$-409]).
	var sb strings.Builder
	quoted, bracket := false, false
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quoted:
			quoted = c != '"'
		case bracket:
			bracket = c != ']'
		case c == '"':
			quoted = true
		case c == '[':
			bracket = true
		case c == '\\' || c == '_' || c == '*':
			i++
		default:
			sb.WriteByte(c | 0x20)
		}
	}
	s := sb.String()
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i] // the positive section decides
	}
	date := strings.ContainsAny(s, "dy")
	tm := strings.ContainsAny(s, "hs")
	switch {
	case date && tm:
		return "datetime"
	case date:
		return "date"
	case tm:
		return "time"
	case strings.Contains(s, "%"):
		return "percent"
	}
	return ""
}

// xlsxDate writes a date serial number.
func xlsxDate(f float64, date1904 bool, kind string) (string, bool) {
	if f < 0 || f > 2958465 { // up to 9999-12-31
		return "", false
	}
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if f < 61 {
		// Excel counts a 29 February 1900 that never was.
		base = base.AddDate(0, 0, 1)
	}
	days := math.Floor(f)
	secs := math.Round((f - days) * 86400)
	t := base.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	switch kind {
	case "time":
		return t.Format("15:04:05"), true
	case "datetime":
		return t.Format("2006-01-02 15:04"), true
	}
	return t.Format("2006-01-02"), true
}
