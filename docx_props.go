package engine

import (
	"encoding/xml"
	"strconv"
)

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
