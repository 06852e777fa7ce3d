package engine

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// This file decodes PDF fonts once per document: glyph widths, the
// ToUnicode CMap (parsed here, preferred over the font's /Encoding as the
// PDF specification asks) and the facts layout needs (bold, pdfTeX's
// invisible word-space font). Reading a font through ledongthuc/pdf's Font
// methods re-parses objects on every call, which is what made per-glyph
// width look-ups slow.

// pdfMaxStreamBytes bounds the decoded size of one stream (content, CMap,
// form), so a compression bomb cannot exhaust memory.
const pdfMaxStreamBytes = 64 << 20

// pdfStreamBytes returns the decoded data of the stream v. A panic inside
// ledongthuc/pdf (unknown filter, corrupt header) becomes an error; a read
// error returns the data decoded up to that point together with the error.
// A stream decoding to more than pdfMaxStreamBytes gives no data and an
// error wrapping ErrDocumentTooLarge.
func pdfStreamBytes(v pdf.Value) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: stream: %v", ErrInvalidDocument, r)
		}
	}()
	data, over, err := pdfStreamBytesMax(v, pdfMaxStreamBytes)
	if over {
		return nil, fmt.Errorf("%w: a stream decodes to more than %d bytes", ErrDocumentTooLarge, pdfMaxStreamBytes)
	}
	return data, err
}

// pdfStreamBytesMax decodes at most max bytes of the stream v; over
// reports a stream that decodes to more (data is then nil). The caller
// recovers ledongthuc/pdf's panics.
func pdfStreamBytesMax(v pdf.Value, max int64) (data []byte, over bool, err error) {
	if v.Kind() != pdf.Stream {
		return nil, false, nil
	}
	rc := v.Reader()
	defer rc.Close()
	data, err = io.ReadAll(io.LimitReader(rc, max+1))
	if int64(len(data)) > max {
		return nil, true, nil
	}
	return data, false, err
}

// pdfFont is a font decoded once: widths in text-space units per unit of
// font size, and the text of each character code.
type pdfFont struct {
	twoByte    bool    // codes are two bytes (Type0 fonts)
	sizeScale  float64 // em size per unit of Tf size (Type3 font matrices differ)
	bold       bool
	dummySpace bool // pdfTeX's word-space font: every glyph is a space
	first      int
	widths     []float64 // by code-first (simple fonts) or by CID (Type0)
	defWidth   float64
	cmap       *pdfCMap
	cid        *pdfCIDDecoder   // Type0 fonts without ToUnicode (document_pdf_cid.go)
	enc        pdf.TextEncoding // /Encoding fallback for simple fonts
	names      *[256]string     // glyph names by code (simple fonts without ToUnicode)
	texCodes   int              // names are a TeX bitmap font's "a<code>": 1 OT1, 2 T1 (pdfTeXCodeNames)
	uni        [256]string
	uniOK      [256]bool
	uni2       map[uint16]string
}

// width returns the advance of code in text-space units per unit font size.
func (f *pdfFont) width(code int) float64 {
	i := code - f.first
	if i >= 0 && i < len(f.widths) {
		if w := f.widths[i]; w > 0 {
			return w
		}
	}
	return f.defWidth
}

// decode returns the text of code ("" when unknown), cached per font.
func (f *pdfFont) decode(code int) string {
	if !f.twoByte {
		if code < 0 || code > 255 {
			return ""
		}
		if !f.uniOK[code] {
			f.uni[code] = f.decodeSimple(code)
			f.uniOK[code] = true
		}
		return f.uni[code]
	}
	c := uint16(code)
	if s, ok := f.uni2[c]; ok {
		return s
	}
	s := ""
	if f.cmap != nil {
		if t, ok := f.cmap.lookup(uint32(c), 2); ok {
			s = pdfCleanGlyphText(t)
		}
	} else if f.cid != nil {
		s = pdfCleanGlyphText(f.cid.decode(c))
	}
	if f.uni2 == nil {
		f.uni2 = make(map[uint16]string)
	}
	f.uni2[c] = s
	return s
}

// pdfTeXOT1Low is the text of codes 0-31 of TeX's OT1 text encoding
// (Computer Modern): Greek capitals, the ligatures ff fi fl ffi ffl at
// 11-15, dotless i and j, letters at 25-31; the accents at 18-24 are ""
// (they sit over a letter of the word).
var pdfTeXOT1Low = [32]string{"Γ", "Δ", "Θ", "Λ", "Ξ", "Π", "Σ", "Υ", "Φ", "Ψ", "Ω", "ff", "fi", "fl", "ffi", "ffl",
	"ı", "ȷ", "", "", "", "", "", "", "", "ß", "æ", "œ", "ø", "Æ", "Œ", "Ø"}

// pdfTeXT1Low is the text of codes 0-31 of TeX's T1 (Cork) encoding (the
// EC fonts): accents at 0-12 (""), quotes and dashes at 13-22, dotless i
// and j at 25-26, the ligatures ff fi fl ffi ffl at 27-31.
var pdfTeXT1Low = [32]string{"", "", "", "", "", "", "", "", "", "", "", "", "", "‚", "‹", "›",
	"“", "”", "„", "«", "»", "–", "—", "", "", "ı", "ȷ", "ff", "fi", "fl", "ffi", "ffl"}

// pdfTeXCodeNames reports whether names are those TeX's bitmap (Type 3)
// fonts get from pdfTeX and dvips: "a<code>" for each glyph used ("a12"
// for code 12), and whether the font is T1 rather than OT1 encoded: it
// uses a ligature code of T1 (27-31) and none of OT1's (11-15).
func pdfTeXCodeNames(names *[256]string) (tex, t1 bool) {
	ot1Lig, t1Lig := false, false
	for code, name := range names {
		if name == "" || name == ".notdef" {
			continue
		}
		if len(name) < 2 || name[0] != 'a' || name[1:] != strconv.Itoa(code) {
			return false, false
		}
		tex = true
		ot1Lig = ot1Lig || code >= 11 && code <= 15
		t1Lig = t1Lig || code >= 27 && code <= 31
	}
	return tex, t1Lig && !ot1Lig
}

// pdfTeXLowCode returns the text of a code below 32 of a TeX bitmap font
// (f.texCodes, pdfTeXCodeNames): read as ASCII it is a control character,
// and "find" read "nd", "flattened" "attened". ok is false for other codes
// and fonts.
func (f *pdfFont) pdfTeXLowCode(code int) (string, bool) {
	if f.texCodes == 0 || code < 0 || code >= 32 {
		return "", false
	}
	if f.texCodes == 2 {
		return pdfTeXT1Low[code], true
	}
	return pdfTeXOT1Low[code], true
}

func (f *pdfFont) decodeSimple(code int) (s string) {
	if f.cmap != nil {
		if t, ok := f.cmap.lookup(uint32(code), 1); ok {
			return pdfCleanGlyphText(t)
		}
	}
	if f.names != nil {
		if t := pdfGlyphText(f.names[code]); t != "" {
			return pdfCleanGlyphText(t)
		}
		if t, ok := f.pdfTeXLowCode(code); ok {
			return t
		}
	}
	if f.enc == nil {
		if code >= 32 && code < 127 {
			return pdfCleanGlyphText(string(rune(code)))
		}
		return ""
	}
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return pdfCleanGlyphText(f.enc.Decode(string([]byte{byte(code)})))
}

// pdfLigatures expands the Latin ligature code points to their letters.
var pdfLigatures = map[rune]string{
	'\uFB00': "ff", '\uFB01': "fi", '\uFB02': "fl", '\uFB03': "ffi", '\uFB04': "ffl", '\uFB05': "st", '\uFB06': "st",
}

// pdfCleanGlyphText normalises the text of one glyph: ligatures expanded,
// no-break space as space, soft hyphen as hyphen, control and zero-width
// characters dropped.
func pdfCleanGlyphText(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xA0 || r == 0xAD || (r >= 0xFB00 && r <= 0xFB06) ||
			r == 0xFFFD || r == 0xFEFF || (r >= 0x200B && r <= 0x200D) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == 0xA0:
			b.WriteByte(' ')
		case r == 0xAD:
			b.WriteByte('-')
		case r < 0x20 || r == 0x7f || r == 0xFFFD || r == 0xFEFF || (r >= 0x200B && r <= 0x200D):
		default:
			if lig, ok := pdfLigatures[r]; ok {
				b.WriteString(lig)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// pdfIsSpaceText reports whether s is non-empty and only white space.
func pdfIsSpaceText(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// pdfLoadFont decodes the font dictionary v. It never panics: whatever
// cannot be read falls back to defaults (average widths, no text).
func pdfLoadFont(v pdf.Value) *pdfFont {
	f := &pdfFont{defWidth: 0.5, sizeScale: 1}
	func() {
		defer func() { _ = recover() }()
		pdfLoadFontInto(f, v)
	}()
	return f
}

func pdfLoadFontInto(f *pdfFont, v pdf.Value) {
	subtype := v.Key("Subtype").Name()
	base := v.Key("BaseFont").Name()
	if i := strings.IndexByte(base, '+'); i >= 0 {
		base = base[i+1:]
	}
	lower := strings.ToLower(base)
	f.dummySpace = strings.Contains(lower, "dummy") && strings.Contains(lower, "space")
	if strings.HasPrefix(lower, "courier") {
		f.defWidth = 0.6
	}
	desc := v.Key("FontDescriptor")
	scale := 0.001
	var d pdf.Value // a Type0 font's descendant CIDFont
	if subtype == "Type0" {
		f.twoByte = true
		d = v.Key("DescendantFonts").Index(0)
		if dd := d.Key("FontDescriptor"); !dd.IsNull() {
			desc = dd
		}
		f.defWidth = 1
		if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.defWidth = dw.Float64() * scale
		}
		pdfCIDWidths(f, d.Key("W"), scale)
	} else {
		if subtype == "Type3" {
			if fm := v.Key("FontMatrix"); fm.Len() == 6 && fm.Index(0).Float64() != 0 {
				scale = fm.Index(0).Float64()
			}
		}
		ws := v.Key("Widths")
		if n := ws.Len(); n > 0 {
			f.first = int(v.Key("FirstChar").Int64())
			if n > 1<<16 {
				n = 1 << 16
			}
			f.widths = make([]float64, n)
			for i := range f.widths {
				f.widths[i] = ws.Index(i).Float64() * scale
			}
			f.defWidth = 0
			if mw := desc.Key("MissingWidth").Float64(); mw > 0 {
				f.defWidth = mw * scale
			}
		}
		if subtype == "Type3" {
			// Type3 glyph space has no fixed em; estimate it from the
			// widths (Latin glyphs average about half an em).
			sum, n := 0.0, 0
			for _, w := range f.widths {
				if w > 0 {
					sum, n = sum+w, n+1
				}
			}
			if n > 0 {
				f.sizeScale = math.Min(math.Max(sum/float64(n)/0.5, 0.05), 20)
			}
		}
	}
	if len(f.widths) == 0 && !f.twoByte && subtype != "Type3" {
		if ws := pdfStandardWidths(lower); ws != nil {
			f.first, f.widths = 32, ws
		}
	}
	if strings.Contains(lower, "bold") || strings.Contains(lower, "black") || strings.Contains(lower, "heavy") ||
		strings.Contains(lower, "semibold") || strings.Contains(lower, "demi") {
		f.bold = true
	}
	if w := desc.Key("FontWeight").Float64(); w >= 600 {
		f.bold = true
	}
	if flags := desc.Key("Flags").Int64(); flags&(1<<18) != 0 {
		f.bold = true
	}
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		if data, _ := pdfStreamBytes(tu); len(data) > 0 {
			f.cmap = pdfParseCMap(data)
		}
	}
	if f.twoByte && f.cmap == nil {
		csi := d.Key("CIDSystemInfo")
		f.cid = pdfNewCIDDecoder(v.Key("Encoding").Name(), csi.Key("Registry").RawString(), csi.Key("Ordering").RawString())
	}
	if !f.twoByte && f.cmap == nil {
		encV := v.Key("Encoding")
		builtin := encV.IsNull() || (encV.Kind() == pdf.Dict && encV.Key("BaseEncoding").IsNull())
		if !builtin {
			desc = pdf.Value{} // a named base encoding replaces the font's own
		}
		if names, ok := pdfFontNames(v, desc); ok {
			f.names = &names
			if tex, t1 := pdfTeXCodeNames(&names); tex {
				f.texCodes = 1
				if t1 {
					f.texCodes = 2
				}
			}
		}
	}
	if !f.twoByte {
		func() {
			defer func() {
				if recover() != nil {
					f.enc = nil
				}
			}()
			font := pdf.Font{V: v}
			f.enc = font.Encoder()
		}()
	}
}

// pdfCIDWidths reads a CIDFont's W array: "c [w1 w2 ...]" and "c1 c2 w".
func pdfCIDWidths(f *pdfFont, w pdf.Value, scale float64) {
	n := w.Len()
	set := func(cid int, width float64) {
		if cid < 0 || cid >= 1<<16 {
			return
		}
		if cid >= len(f.widths) {
			grown := make([]float64, cid+1, max(cid+1, 2*len(f.widths)))
			copy(grown, f.widths)
			f.widths = grown
		}
		f.widths[cid] = width * scale
	}
	for i := 0; i < n; {
		first := w.Index(i)
		if first.Kind() != pdf.Integer || i+1 >= n {
			return
		}
		c := int(first.Int64())
		next := w.Index(i + 1)
		if next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && j < 1<<16; j++ {
				set(c+j, next.Index(j).Float64())
			}
			i += 2
			continue
		}
		if i+2 >= n {
			return
		}
		last := int(next.Int64())
		width := w.Index(i + 2).Float64()
		if last-c > 1<<16 {
			last = c + 1<<16
		}
		for cid := c; cid <= last; cid++ {
			set(cid, width)
		}
		i += 3
	}
}

// pdfCMap is a parsed ToUnicode CMap.
type pdfCMap struct {
	chars  map[uint64]string // key: code length << 32 | code
	ranges []pdfCMapRange
}

type pdfCMapRange struct {
	n      int // code length in bytes
	lo, hi uint32
	base   []rune   // destination of lo; later codes increment its last rune
	arr    []string // or one destination per code
}

func pdfCMapKey(code uint32, n int) uint64 { return uint64(n)<<32 | uint64(code) }

// lookup returns the text of the n-byte code.
func (m *pdfCMap) lookup(code uint32, n int) (string, bool) {
	if s, ok := m.chars[pdfCMapKey(code, n)]; ok {
		return s, true
	}
	for _, r := range m.ranges {
		if r.n != n || code < r.lo || code > r.hi {
			continue
		}
		off := code - r.lo
		if r.arr != nil {
			if int(off) < len(r.arr) {
				return r.arr[off], true
			}
			return "", false
		}
		if len(r.base) == 0 {
			return "", false
		}
		rs := append([]rune(nil), r.base...)
		rs[len(rs)-1] += rune(off)
		return string(rs), true
	}
	return "", false
}

func pdfCode(b []byte) (uint32, int) {
	if len(b) > 4 {
		b = b[len(b)-4:]
	}
	var c uint32
	for _, x := range b {
		c = c<<8 | uint32(x)
	}
	return c, len(b)
}

// pdfUTF16 decodes a CMap destination string (UTF-16BE; odd-length
// strings are taken byte by byte).
func pdfUTF16(b []byte) []rune {
	if len(b)%2 == 1 {
		rs := make([]rune, len(b))
		for i, x := range b {
			rs[i] = rune(x)
		}
		return rs
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return utf16.Decode(u)
}

// pdfParseCMap parses the bfchar and bfrange sections of a ToUnicode CMap.
func pdfParseCMap(data []byte) *pdfCMap {
	m := &pdfCMap{chars: make(map[uint64]string)}
	lx := pdfLexer{buf: data}
	for {
		op, ok := lx.next()
		if !ok {
			break
		}
		args := lx.args
		switch string(op) {
		case "endbfchar":
			for i := 0; i+1 < len(args); i += 2 {
				src, dst := args[i], args[i+1]
				if src.kind != pdfOpString || len(src.s) == 0 {
					continue
				}
				code, n := pdfCode(src.s)
				switch dst.kind {
				case pdfOpString:
					m.chars[pdfCMapKey(code, n)] = string(pdfUTF16(dst.s))
				case pdfOpName:
					if string(dst.s) == "space" {
						m.chars[pdfCMapKey(code, n)] = " "
					}
				}
			}
		case "endbfrange":
			for i := 0; i+2 < len(args); i += 3 {
				lo, hi, dst := args[i], args[i+1], args[i+2]
				if lo.kind != pdfOpString || hi.kind != pdfOpString || len(lo.s) == 0 {
					continue
				}
				l, n := pdfCode(lo.s)
				h, _ := pdfCode(hi.s)
				if h < l {
					continue
				}
				r := pdfCMapRange{n: n, lo: l, hi: h}
				switch dst.kind {
				case pdfOpString:
					r.base = pdfUTF16(dst.s)
				case pdfOpArray:
					for _, e := range dst.arr {
						r.arr = append(r.arr, string(pdfUTF16(e.s)))
					}
				default:
					continue
				}
				m.ranges = append(m.ranges, r)
			}
		}
	}
	return m
}

// Advance widths (1/1000 em) of the printable ASCII characters 32-126 in the
// standard Helvetica and Times-Roman fonts (Adobe's AFM metrics), used for
// standard fonts a PDF names without a /Widths array. Bold and italic faces
// use the regular widths, which are close enough for word spacing.
var (
	pdfHelveticaWidths = [95]int{
		278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
		556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
		1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
		667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
		333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
		556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
	}
	pdfTimesWidths = [95]int{
		250, 333, 408, 500, 500, 833, 778, 180, 333, 333, 500, 564, 250, 333, 250, 278,
		500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444,
		921, 722, 667, 667, 722, 611, 556, 722, 722, 333, 389, 722, 611, 889, 722, 722,
		556, 722, 667, 556, 611, 722, 722, 944, 722, 722, 611, 333, 278, 333, 469, 500,
		333, 444, 500, 444, 500, 444, 333, 500, 500, 278, 278, 500, 278, 778, 500, 500,
		500, 500, 333, 389, 278, 500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
	}
)

// pdfStandardWidths returns widths (em) for codes 32-126 of a standard font
// named by lower (lower-case base font name), or nil for other fonts.
func pdfStandardWidths(lower string) []float64 {
	var table *[95]int
	switch {
	case strings.HasPrefix(lower, "courier"):
		ws := make([]float64, 95)
		for i := range ws {
			ws[i] = 0.6
		}
		return ws
	case strings.HasPrefix(lower, "helvetica") || strings.HasPrefix(lower, "arial"):
		table = &pdfHelveticaWidths
	case strings.HasPrefix(lower, "times"):
		table = &pdfTimesWidths
	default:
		return nil
	}
	ws := make([]float64, 95)
	for i, w := range table {
		ws[i] = float64(w) / 1000
	}
	return ws
}
