package engine

import (
	"fmt"
	"math"

	"github.com/ledongthuc/pdf"
)

// This file runs a page's content stream: it tracks the graphics and text
// state, positions every glyph in user space and records horizontal rules
// (table borders), which the layout pass then turns into lines and
// paragraphs.

// pdfMatrix is an affine matrix [a b c d e f] in PDF's row-vector form.
type pdfMatrix [6]float64

var pdfIdentity = pdfMatrix{1, 0, 0, 1, 0, 0}

// mul returns m × n (apply m, then n).
func (m pdfMatrix) mul(n pdfMatrix) pdfMatrix {
	return pdfMatrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m pdfMatrix) apply(x, y float64) (float64, float64) {
	return x*m[0] + y*m[2] + m[4], x*m[1] + y*m[3] + m[5]
}

// pdfGlyph is one shown character code: its origin on the baseline, its
// advance along the baseline, the font size in user space and its text.
type pdfGlyph struct {
	x, y, w, size float64
	text          string
	font          *pdfFont
	rot           uint8 // text direction: 0 right, 1 up, 2 left, 3 down
	space         bool  // a word space (space character or pdfTeX space glyph)
}

// pdfRule is a horizontal line drawn on the page (a table border), in user
// space with x0 <= x1.
type pdfRule struct{ x0, x1, y float64 }

// pdfGState is the part of the graphics state the text pass needs.
type pdfGState struct {
	ctm                        pdfMatrix
	tc, tw, th, tl, tfs, trise float64
	font                       *pdfFont
}

// Limits that keep hostile content streams bounded.
const (
	pdfMaxFormDepth     = 8
	pdfMaxFormsPerPage  = 256
	pdfMaxGlyphsPerPage = 1 << 20
	pdfMaxGStateDepth   = 256
	pdfMaxRulesPerPage  = 2000
)

// pdfPageRun collects the glyphs and rules of one page.
type pdfPageRun struct {
	fonts  *pdfFontCache
	glyphs []pdfGlyph
	rules  []pdfRule
	forms  int
	lex    pdfLexer // buffers reused from page to page (top level only)
	left   int64    // bytes the page's content and form streams may still decode to
	err    error    // the page limit passed (wraps ErrDocumentTooLarge), nil while within
	// shown and undecoded count, over the whole document, the character
	// codes shown in a font and those of them without text (pdfUndecodable).
	shown, undecoded int
}

// stream returns the decoded data of the content or form stream v,
// counting it against the page's budget; past it, p.err is set and nil
// returned.
func (p *pdfPageRun) stream(v pdf.Value) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("%w: stream: %v", ErrInvalidDocument, r)
		}
	}()
	data, over, err := pdfStreamBytesMax(v, p.left)
	if over {
		p.left = 0
		if p.err == nil {
			p.err = fmt.Errorf("%w: content streams decode to more than %d bytes on one page", ErrDocumentTooLarge, pdfMaxStreamBytes)
		}
		return nil, nil
	}
	p.left -= int64(len(data))
	return data, err
}

// pdfFontCache decodes each distinct font dictionary of a document once.
// Fonts are keyed by their dictionary's text, which names the objects it
// references, so a font shared by many pages is decoded once.
type pdfFontCache struct {
	byKey map[string]*pdfFont
	byRes map[string]*pdfFont // resource dictionary text + font name
}

func (c *pdfFontCache) font(v pdf.Value) *pdfFont {
	key := v.String()
	if f, ok := c.byKey[key]; ok {
		return f
	}
	f := pdfLoadFont(v)
	c.byKey[key] = f
	return f
}

// run interprets content with the resources res, starting from gs.
func (p *pdfPageRun) run(content []byte, res pdf.Value, gs pdfGState, depth int) {
	lx := pdfLexer{buf: content}
	if depth == 0 {
		lx = p.lex
		lx.buf, lx.pos = content, 0
		defer func() { p.lex = lx; p.lex.buf = nil }()
	}
	var fontDict pdf.Value
	fontDictRead := false
	local := map[string]*pdfFont{}
	resKey := ""
	lookupFont := func(name []byte) *pdfFont {
		if f, ok := local[string(name)]; ok {
			return f
		}
		if !fontDictRead {
			fontDict = res.Key("Font")
			fontDictRead = true
			// Pages usually share their resources, or name the same font
			// objects: the dictionary's text identifies the fonts.
			resKey = fontDict.String() + "\x00"
		}
		key := resKey + string(name)
		f, ok := p.fonts.byRes[key]
		if !ok {
			if fv := fontDict.Key(string(name)); fv.Kind() == pdf.Dict {
				f = p.fonts.font(fv)
			}
			p.fonts.byRes[key] = f
		}
		local[string(name)] = f
		return f
	}

	g := gs
	var stack []pdfGState
	tm, tlm := pdfIdentity, pdfIdentity
	var px, py float64 // current path point (user space)

	for {
		op, ok := lx.next()
		if !ok {
			return
		}
		a := lx.args
		num := func(i int) float64 { return a[len(a)-i].num } // i-th operand from the end
		need := func(n int) bool {
			if len(a) < n {
				return false
			}
			for _, v := range a[len(a)-n:] {
				if v.kind != pdfOpNumber {
					return false
				}
			}
			return true
		}
		switch string(op) {
		case "q":
			if len(stack) < pdfMaxGStateDepth {
				stack = append(stack, g)
			}
		case "Q":
			if n := len(stack); n > 0 {
				g = stack[n-1]
				stack = stack[:n-1]
			}
		case "cm":
			if need(6) {
				g.ctm = pdfMatrix{num(6), num(5), num(4), num(3), num(2), num(1)}.mul(g.ctm)
			}
		case "BT":
			tm, tlm = pdfIdentity, pdfIdentity
		case "Tc":
			if need(1) {
				g.tc = num(1)
			}
		case "Tw":
			if need(1) {
				g.tw = num(1)
			}
		case "Tz":
			if need(1) {
				g.th = num(1) / 100
			}
		case "TL":
			if need(1) {
				g.tl = num(1)
			}
		case "Ts":
			if need(1) {
				g.trise = num(1)
			}
		case "Tf":
			if len(a) >= 2 && a[len(a)-2].kind == pdfOpName && a[len(a)-1].kind == pdfOpNumber {
				g.font = lookupFont(a[len(a)-2].s)
				g.tfs = num(1)
			}
		case "Td", "TD":
			if need(2) {
				tx, ty := num(2), num(1)
				if string(op) == "TD" {
					g.tl = -ty
				}
				tlm[4] += tx*tlm[0] + ty*tlm[2]
				tlm[5] += tx*tlm[1] + ty*tlm[3]
				tm = tlm
			}
		case "Tm":
			if need(6) {
				tlm = pdfMatrix{num(6), num(5), num(4), num(3), num(2), num(1)}
				tm = tlm
			}
		case "T*":
			tlm[4] += -g.tl * tlm[2]
			tlm[5] += -g.tl * tlm[3]
			tm = tlm
		case "Tj":
			if len(a) >= 1 && a[len(a)-1].kind == pdfOpString {
				p.show(a[len(a)-1].s, &g, &tm)
			}
		case "'", "\"":
			if len(a) >= 1 && a[len(a)-1].kind == pdfOpString {
				if string(op) == "\"" && len(a) >= 3 {
					g.tw, g.tc = a[len(a)-3].num, a[len(a)-2].num
				}
				tlm[4] += -g.tl * tlm[2]
				tlm[5] += -g.tl * tlm[3]
				tm = tlm
				p.show(a[len(a)-1].s, &g, &tm)
			}
		case "TJ":
			if len(a) >= 1 && a[len(a)-1].kind == pdfOpArray {
				for _, e := range a[len(a)-1].arr {
					switch e.kind {
					case pdfOpString:
						p.show(e.s, &g, &tm)
					case pdfOpNumber:
						dx := -e.num / 1000 * g.tfs * g.th
						tm[4] += dx * tm[0]
						tm[5] += dx * tm[1]
					}
				}
			}
		case "Do":
			if len(a) >= 1 && a[len(a)-1].kind == pdfOpName {
				p.form(res, a[len(a)-1].s, g, depth)
			}
		case "m":
			if need(2) {
				px, py = g.ctm.apply(num(2), num(1))
			}
		case "l":
			if need(2) {
				x, y := g.ctm.apply(num(2), num(1))
				if math.Abs(y-py) < 1 && math.Abs(x-px) > 3 && len(p.rules) < pdfMaxRulesPerPage {
					p.rules = append(p.rules, pdfRule{math.Min(x, px), math.Max(x, px), (y + py) / 2})
				}
				px, py = x, y
			}
		case "re":
			if need(4) {
				x, y, w, h := num(4), num(3), num(2), num(1)
				x0, y0 := g.ctm.apply(x, y)
				x1, y1 := g.ctm.apply(x+w, y+h)
				if math.Abs(y1-y0) < 2.5 && math.Abs(x1-x0) > 3 && len(p.rules) < pdfMaxRulesPerPage {
					p.rules = append(p.rules, pdfRule{math.Min(x0, x1), math.Max(x0, x1), (y0 + y1) / 2})
				}
			}
		}
		if len(p.glyphs) >= pdfMaxGlyphsPerPage {
			if p.err == nil {
				p.err = fmt.Errorf("%w: more than %d characters on one page", ErrDocumentTooLarge, pdfMaxGlyphsPerPage)
			}
			return
		}
		if p.err != nil {
			return
		}
	}
}

// show places the glyphs of the string s and advances the text matrix.
func (p *pdfPageRun) show(s []byte, g *pdfGState, tm *pdfMatrix) {
	f := g.font
	m := tm.mul(g.ctm)
	sx := math.Sqrt(m[0]*m[0] + m[1]*m[1])
	sy := math.Sqrt(m[2]*m[2] + m[3]*m[3])
	size := math.Abs(g.tfs) * sy
	if f != nil {
		size *= f.sizeScale
	}
	if size < 0.1 {
		size = 0.1
	}
	var rot uint8
	switch {
	case math.Abs(m[0]) >= math.Abs(m[1]) && m[0] >= 0:
		rot = 0
	case math.Abs(m[0]) >= math.Abs(m[1]):
		rot = 2
	case m[1] > 0:
		rot = 1
	default:
		rot = 3
	}
	step := 1
	if f != nil && f.twoByte {
		step = 2
	}
	adv := 0.0
	for i := 0; i+step <= len(s); i += step {
		code := int(s[i])
		if step == 2 {
			code = code<<8 | int(s[i+1])
		}
		w0, text := 0.5, ""
		if f != nil {
			w0, text = f.width(code), f.decode(code)
			p.shown++
			if text == "" {
				p.undecoded++
			}
		} else if s[i] >= 32 && s[i] < 127 {
			text = string(rune(s[i]))
		}
		if text != "" && len(p.glyphs) < pdfMaxGlyphsPerPage {
			x := adv*m[0] + g.trise*m[2] + m[4]
			y := adv*m[1] + g.trise*m[3] + m[5]
			space := pdfIsSpaceText(text) || (f != nil && f.dummySpace)
			p.glyphs = append(p.glyphs, pdfGlyph{
				x: x, y: y, w: math.Abs(w0 * g.tfs * g.th * sx), size: size,
				text: text, font: f, rot: rot, space: space,
			})
		}
		tx := w0*g.tfs + g.tc
		if step == 1 && code == 32 {
			tx += g.tw
		}
		adv += tx * g.th
	}
	tm[4] += adv * tm[0]
	tm[5] += adv * tm[1]
}

// form runs the Form XObject called name, if it is one.
func (p *pdfPageRun) form(res pdf.Value, name []byte, g pdfGState, depth int) {
	if depth >= pdfMaxFormDepth || p.forms >= pdfMaxFormsPerPage {
		return
	}
	xo := res.Key("XObject").Key(string(name))
	if xo.Kind() != pdf.Stream || xo.Key("Subtype").Name() != "Form" {
		return
	}
	p.forms++
	data, _ := p.stream(xo)
	if len(data) == 0 {
		return
	}
	if mv := xo.Key("Matrix"); mv.Len() == 6 {
		var m pdfMatrix
		for i := range m {
			m[i] = mv.Index(i).Float64()
		}
		g.ctm = m.mul(g.ctm)
	}
	formRes := xo.Key("Resources")
	if formRes.Kind() != pdf.Dict {
		formRes = res
	}
	p.run(data, formRes, g, depth+1)
}
