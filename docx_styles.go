package engine

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// docxVal is an element whose value is in its val attribute.
type docxVal struct {
	Val string `xml:"val,attr"`
}

// docxNumPr is a numbering property: list instance and level.
type docxNumPr struct {
	Ilvl  *docxVal `xml:"ilvl"`
	NumID *docxVal `xml:"numId"`
}

// docxStyle is what the reader needs of one paragraph style.
type docxStyle struct {
	name, basedOn string
	outline       int // outline level 0-9, -1 unset
	num           *docxNumPr
	pageBreak     int // pageBreakBefore: -1 unset, 0 off, 1 on
}

// docxStyles holds the paragraph styles of styles.xml by style ID.
type docxStyles struct {
	byID      map[string]*docxStyle
	defaultID string
	levels    map[string]int // cache of headingLevel
}

// readStyles parses the paragraph styles of the named part (none if the
// part is missing).
func (a *zipArchive) readStyles(name string) (*docxStyles, error) {
	var doc struct {
		Styles []struct {
			Type    string  `xml:"type,attr"`
			ID      string  `xml:"styleId,attr"`
			Default string  `xml:"default,attr"`
			Name    docxVal `xml:"name"`
			BasedOn docxVal `xml:"basedOn"`
			PPr     struct {
				Outline   *docxVal   `xml:"outlineLvl"`
				NumPr     *docxNumPr `xml:"numPr"`
				PageBreak *docxVal   `xml:"pageBreakBefore"`
			} `xml:"pPr"`
		} `xml:"style"`
	}
	if err := a.parse(name, false, func(d *xml.Decoder) error { return d.Decode(&doc) }); err != nil {
		return nil, err
	}
	s := &docxStyles{byID: make(map[string]*docxStyle), levels: make(map[string]int)}
	for _, st := range doc.Styles {
		if st.Type != "" && st.Type != "paragraph" {
			continue
		}
		ds := &docxStyle{name: st.Name.Val, basedOn: st.BasedOn.Val, outline: -1, num: st.PPr.NumPr, pageBreak: -1}
		if st.PPr.Outline != nil {
			if n, err := strconv.Atoi(st.PPr.Outline.Val); err == nil && n >= 0 && n <= 9 {
				ds.outline = n
			}
		}
		if pb := st.PPr.PageBreak; pb != nil {
			ds.pageBreak = 0
			if docxOnVal(pb.Val) {
				ds.pageBreak = 1
			}
		}
		if _, dup := s.byID[st.ID]; !dup {
			s.byID[st.ID] = ds
		}
		if st.Default != "" && docxOnVal(st.Default) && s.defaultID == "" {
			s.defaultID = st.ID
		}
	}
	return s, nil
}

// chain calls fn on the style id and the styles it is based on, nearest
// first, until fn returns true; basedOn cycles and chains deeper than 20
// stop the walk.
func (s *docxStyles) chain(id string, fn func(*docxStyle) bool) {
	if id == "" {
		id = s.defaultID
	}
	for range 20 {
		st := s.byID[id]
		if st == nil || fn(st) {
			return
		}
		id = st.basedOn
	}
}

// headingLevel returns the heading level of paragraphs in style id: 0 for
// Title, 1-9 for "heading 1".."heading 9" (matched on the style's name, not
// its ID, which localised documents translate) or an outline level 0-8
// (level+1); -1 for body text. Both are inherited through basedOn.
func (s *docxStyles) headingLevel(id string) int {
	if l, ok := s.levels[id]; ok {
		return l
	}
	level := -1
	s.chain(id, func(st *docxStyle) bool {
		name := strings.ToLower(strings.TrimSpace(st.name))
		if name == "title" {
			level = 0
			return true
		}
		if rest, ok := strings.CutPrefix(name, "heading"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n >= 1 && n <= 9 {
				level = n
				return true
			}
		}
		if st.outline >= 0 {
			if st.outline <= 8 {
				level = st.outline + 1
			}
			return true
		}
		return false
	})
	if len(s.levels) < 10000 {
		s.levels[id] = level
	}
	return level
}

// name returns the lower-case name of style id ("" if unknown).
func (s *docxStyles) name(id string) string {
	if id == "" {
		id = s.defaultID
	}
	if st := s.byID[id]; st != nil {
		return strings.ToLower(strings.TrimSpace(st.name))
	}
	return ""
}

// numbering returns the numbering properties style id carries or inherits.
func (s *docxStyles) numbering(id string) (numID string, ilvl int) {
	var nid, lvl *docxVal
	s.chain(id, func(st *docxStyle) bool {
		if st.num != nil {
			if nid == nil {
				nid = st.num.NumID
			}
			if lvl == nil {
				lvl = st.num.Ilvl
			}
		}
		return nid != nil && lvl != nil
	})
	if nid != nil {
		numID = nid.Val
	}
	if lvl != nil {
		ilvl, _ = strconv.Atoi(lvl.Val)
	}
	return numID, ilvl
}

// pageBreakBefore reports whether style id starts paragraphs on a new page.
func (s *docxStyles) pageBreakBefore(id string) bool {
	on := false
	s.chain(id, func(st *docxStyle) bool {
		if st.pageBreak >= 0 {
			on = st.pageBreak == 1
			return true
		}
		return false
	})
	return on
}

// docxLevel is one level of a list definition.
type docxLevel struct {
	format string // numFmt: decimal, bullet, lowerLetter, ...
	text   string // lvlText: "%1." etc.
	start  int
	legal  bool // isLgl: render all levels as decimal
}

// docxList is one list instance (w:num) with its counters.
type docxList struct {
	levels  [9]docxLevel
	count   [9]int
	started [9]bool
}

// docxNumbering holds the list instances of numbering.xml by numId.
type docxNumbering struct {
	lists map[string]*docxList
}

// readNumbering parses the list definitions of the named part (none if the
// part is missing).
func (a *zipArchive) readNumbering(name string, styles *docxStyles) (*docxNumbering, error) {
	type lvlXML struct {
		Ilvl    string   `xml:"ilvl,attr"`
		Start   *docxVal `xml:"start"`
		NumFmt  *docxVal `xml:"numFmt"`
		LvlText *docxVal `xml:"lvlText"`
		IsLgl   *docxVal `xml:"isLgl"`
	}
	var doc struct {
		Abstract []struct {
			ID           string   `xml:"abstractNumId,attr"`
			NumStyleLink *docxVal `xml:"numStyleLink"`
			Levels       []lvlXML `xml:"lvl"`
		} `xml:"abstractNum"`
		Nums []struct {
			ID        string  `xml:"numId,attr"`
			Abstract  docxVal `xml:"abstractNumId"`
			Overrides []struct {
				Ilvl  string   `xml:"ilvl,attr"`
				Start *docxVal `xml:"startOverride"`
				Lvl   *lvlXML  `xml:"lvl"`
			} `xml:"lvlOverride"`
		} `xml:"num"`
	}
	if err := a.parse(name, false, func(d *xml.Decoder) error { return d.Decode(&doc) }); err != nil {
		return nil, err
	}
	setLevel := func(levels *[9]docxLevel, l lvlXML) {
		i, err := strconv.Atoi(l.Ilvl)
		if err != nil || i < 0 || i > 8 {
			return
		}
		lv := docxLevel{format: "decimal", text: "%" + strconv.Itoa(i+1) + ".", start: 1}
		if l.NumFmt != nil {
			lv.format = l.NumFmt.Val
		}
		if l.LvlText != nil {
			lv.text = l.LvlText.Val
		}
		if l.Start != nil {
			if n, err := strconv.Atoi(l.Start.Val); err == nil && n >= 0 {
				lv.start = n
			}
		}
		lv.legal = l.IsLgl != nil && docxOnVal(l.IsLgl.Val)
		levels[i] = lv
	}
	abstract := make(map[string]*[9]docxLevel)
	links := make(map[string]string) // abstract ID -> numbering style it links to
	for _, an := range doc.Abstract {
		levels := new([9]docxLevel)
		for i := range levels {
			levels[i] = docxLevel{format: "decimal", text: "%" + strconv.Itoa(i+1) + ".", start: 1}
		}
		for _, l := range an.Levels {
			setLevel(levels, l)
		}
		abstract[an.ID] = levels
		if an.NumStyleLink != nil {
			links[an.ID] = an.NumStyleLink.Val
		}
	}
	absOf := make(map[string]string) // numId -> abstractNumId
	for _, n := range doc.Nums {
		absOf[n.ID] = n.Abstract.Val
	}
	// resolve follows numStyleLink: the linked style's numId names the
	// abstract definition that really holds the levels.
	resolve := func(absID string) *[9]docxLevel {
		for range 5 {
			style, ok := links[absID]
			if !ok {
				break
			}
			numID, _ := styles.numbering(style)
			next, ok := absOf[numID]
			if !ok || next == absID {
				break
			}
			absID = next
		}
		return abstract[absID]
	}
	nb := &docxNumbering{lists: make(map[string]*docxList)}
	for _, n := range doc.Nums {
		levels := resolve(n.Abstract.Val)
		if levels == nil {
			continue
		}
		l := &docxList{levels: *levels}
		for _, o := range n.Overrides {
			i, err := strconv.Atoi(o.Ilvl)
			if err != nil || i < 0 || i > 8 {
				continue
			}
			if o.Lvl != nil {
				lx := *o.Lvl
				lx.Ilvl = o.Ilvl
				setLevel(&l.levels, lx)
			}
			if o.Start != nil {
				if s, err := strconv.Atoi(o.Start.Val); err == nil && s >= 0 {
					l.levels[i].start = s
				}
			}
		}
		if _, dup := nb.lists[n.ID]; !dup {
			nb.lists[n.ID] = l
		}
	}
	return nb, nil
}

// prefix advances the counter of list numID at level ilvl and returns the
// item's marker followed by a space: "- " for bullets, the rendered lvlText
// ("1.", "a)", "2.1.") for numbers, "" for no list or an empty marker.
func (nb *docxNumbering) prefix(numID string, ilvl int) string {
	l := nb.lists[numID]
	if l == nil || numID == "0" {
		return ""
	}
	ilvl = min(max(ilvl, 0), 8)
	if l.started[ilvl] {
		l.count[ilvl]++
	} else {
		l.count[ilvl], l.started[ilvl] = l.levels[ilvl].start, true
	}
	for k := ilvl + 1; k < 9; k++ {
		l.started[k] = false
	}
	lv := l.levels[ilvl]
	switch lv.format {
	case "bullet":
		return "- "
	case "none":
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(lv.text); i++ {
		c := lv.text[i]
		if c == '%' && i+1 < len(lv.text) && lv.text[i+1] >= '1' && lv.text[i+1] <= '9' {
			k := int(lv.text[i+1] - '1')
			n := l.count[k]
			if !l.started[k] {
				n = l.levels[k].start
			}
			format := l.levels[k].format
			if lv.legal {
				format = "decimal"
			}
			b.WriteString(docxFormatNumber(n, format))
			i++
			continue
		}
		b.WriteByte(c)
	}
	s := NormalizeSpaces(b.String())
	if s == "" {
		return ""
	}
	return s + " "
}

// docxFormatNumber renders n in the OOXML number format fmt; formats it
// does not know render as decimal.
func docxFormatNumber(n int, format string) string {
	switch format {
	case "lowerLetter", "upperLetter":
		if n <= 0 {
			return strconv.Itoa(n)
		}
		// Word repeats the letter: a..z, aa..zz, aaa...
		s := strings.Repeat(string(rune('a'+(n-1)%26)), min((n-1)/26+1, 10))
		if format == "upperLetter" {
			s = strings.ToUpper(s)
		}
		return s
	case "lowerRoman", "upperRoman":
		s := docxRoman(n)
		if format == "upperRoman" {
			s = strings.ToUpper(s)
		}
		return s
	case "decimalZero":
		if n >= 0 && n < 10 {
			return "0" + strconv.Itoa(n)
		}
	case "bullet", "none":
		return ""
	}
	return strconv.Itoa(n)
}

// docxRoman returns n in lower-case Roman numerals (decimal outside 1..3999).
func docxRoman(n int) string {
	if n <= 0 || n >= 4000 {
		return strconv.Itoa(n)
	}
	vals := [...]int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := [...]string{"m", "cm", "d", "cd", "c", "xc", "l", "xl", "x", "ix", "v", "iv", "i"}
	var b strings.Builder
	for i, v := range vals {
		for n >= v {
			b.WriteString(syms[i])
			n -= v
		}
	}
	return b.String()
}
