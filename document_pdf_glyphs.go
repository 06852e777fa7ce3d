package engine

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
	"golang.org/x/text/unicode/norm"
)

// This file maps glyph names to text for simple fonts without a ToUnicode
// entry: the names come from the font's /Encoding /Differences or from the
// built-in encoding of an embedded Type 1 font program (TeX's math and
// symbol fonts put "period" at code 58 and "bullet" at code 15 there).

// pdfGlyphNames maps the Adobe glyph names that are not a single letter or
// digit, an accented letter or uniXXXX to their text.
var pdfGlyphNames = map[string]string{
	"space": " ", "exclam": "!", "quotedbl": "\"", "numbersign": "#", "dollar": "$", "percent": "%",
	"ampersand": "&", "quotesingle": "'", "quoteright": "’", "quoteleft": "‘", "parenleft": "(",
	"parenright": ")", "asterisk": "*", "plus": "+", "comma": ",", "hyphen": "-", "minus": "−",
	"period": ".", "slash": "/", "colon": ":", "semicolon": ";", "less": "<", "equal": "=",
	"greater": ">", "question": "?", "at": "@", "bracketleft": "[", "backslash": "\\",
	"bracketright": "]", "asciicircum": "^", "underscore": "_", "grave": "`", "braceleft": "{",
	"bar": "|", "braceright": "}", "asciitilde": "~", "bullet": "•", "periodcentered": "·",
	"endash": "–", "emdash": "—", "quotedblleft": "“", "quotedblright": "”", "quotesinglbase": "‚",
	"quotedblbase": "„", "guillemotleft": "«", "guillemotright": "»", "guilsinglleft": "‹",
	"guilsinglright": "›", "ellipsis": "…", "dagger": "†", "daggerdbl": "‡", "section": "§",
	"paragraph": "¶", "copyright": "©", "registered": "®", "trademark": "™", "degree": "°",
	"plusminus": "±", "multiply": "×", "divide": "÷", "fraction": "⁄", "exclamdown": "¡",
	"questiondown": "¿", "cent": "¢", "sterling": "£", "yen": "¥", "Euro": "€", "currency": "¤",
	"brokenbar": "¦", "dieresis": "¨", "macron": "¯", "acute": "´", "cedilla": "¸", "ordfeminine": "ª",
	"ordmasculine": "º", "logicalnot": "¬", "mu": "µ", "onequarter": "¼", "onehalf": "½",
	"threequarters": "¾", "onesuperior": "¹", "twosuperior": "²", "threesuperior": "³",
	"germandbls": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "oslash": "ø", "Oslash": "Ø",
	"dotlessi": "ı", "dotlessj": "ȷ", "lslash": "ł", "Lslash": "Ł", "eth": "ð", "Eth": "Ð",
	"thorn": "þ", "Thorn": "Þ", "ff": "ff", "fi": "fi", "fl": "fl", "ffi": "ffi", "ffl": "ffl",
	"circumflex": "ˆ", "tilde": "˜", "caron": "ˇ", "breve": "˘", "dotaccent": "˙", "ring": "˚",
	"ogonek": "˛", "hungarumlaut": "˝", "florin": "ƒ", "perthousand": "‰", "nbspace": " ",
	"arrowleft": "←", "arrowright": "→", "arrowup": "↑", "arrowdown": "↓", "arrowboth": "↔",
	"arrowdblleft": "⇐", "arrowdblright": "⇒", "arrowdblboth": "⇔", "infinity": "∞",
	"lessequal": "≤", "greaterequal": "≥", "notequal": "≠", "approxequal": "≈", "equivalence": "≡",
	"element": "∈", "notelement": "∉", "intersection": "∩", "union": "∪", "propersubset": "⊂",
	"propersuperset": "⊃", "reflexsubset": "⊆", "reflexsuperset": "⊇", "logicaland": "∧",
	"logicalor": "∨", "universal": "∀", "existential": "∃", "emptyset": "∅", "nabla": "∇",
	"partialdiff": "∂", "summation": "∑", "product": "∏", "integral": "∫", "radical": "√",
	"proportional": "∝", "angle": "∠", "therefore": "∴", "similar": "∼", "dotmath": "⋅",
	"asteriskmath": "∗", "circlemultiply": "⊗", "circleplus": "⊕", "perpendicular": "⊥",
	"angleleft": "⟨", "angleright": "⟩", "prime": "′", "lozenge": "◊", "club": "♣",
	"diamond": "♦", "heart": "♥", "spade": "♠", "aleph": "ℵ", "weierstrass": "℘", "Ifraktur": "ℑ",
	"Rfraktur": "ℜ", "openbullet": "◦", "visiblespace": "␣", "checkmark": "✓",
	"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ", "eta": "η",
	"theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "nu": "ν", "xi": "ξ", "omicron": "ο",
	"pi": "π", "rho": "ρ", "sigma": "σ", "sigma1": "ς", "tau": "τ", "upsilon": "υ", "phi": "φ",
	"chi": "χ", "psi": "ψ", "omega": "ω", "theta1": "ϑ", "phi1": "ϕ", "omega1": "ϖ",
	"Alpha": "Α", "Beta": "Β", "Gamma": "Γ", "Delta": "Δ", "Epsilon": "Ε", "Zeta": "Ζ", "Eta": "Η",
	"Theta": "Θ", "Iota": "Ι", "Kappa": "Κ", "Lambda": "Λ", "Mu": "Μ", "Nu": "Ν", "Xi": "Ξ",
	"Omicron": "Ο", "Pi": "Π", "Rho": "Ρ", "Sigma": "Σ", "Tau": "Τ", "Upsilon": "Υ", "Phi": "Φ",
	"Chi": "Χ", "Psi": "Ψ", "Omega": "Ω",
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9",
}

// pdfAccents maps accent glyph-name suffixes to combining marks.
var pdfAccents = []struct{ suffix, mark string }{
	{"acute", "\u0301"}, {"grave", "\u0300"}, {"circumflex", "\u0302"}, {"dieresis", "\u0308"},
	{"tilde", "\u0303"}, {"ring", "\u030A"}, {"cedilla", "\u0327"}, {"caron", "\u030C"},
	{"macron", "\u0304"}, {"breve", "\u0306"}, {"ogonek", "\u0328"}, {"dotaccent", "\u0307"},
	{"hungarumlaut", "\u030B"}, {"commaaccent", "\u0326"},
}

// pdfGlyphText returns the text of the glyph called name, or "" when the
// name means nothing (such as "g37" in a subset font).
func pdfGlyphText(name string) string {
	if t, ok := pdfGlyphNames[name]; ok {
		return t
	}
	if len(name) == 1 && (name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		return name
	}
	if base, _, ok := strings.Cut(name, "."); ok && base != "" { // variants: "a.sc", "one.oldstyle"
		return pdfGlyphText(base)
	}
	if strings.HasPrefix(name, "uni") && len(name) >= 7 && (len(name)-3)%4 == 0 {
		var b strings.Builder
		for i := 3; i < len(name); i += 4 {
			v, err := strconv.ParseUint(name[i:i+4], 16, 32)
			if err != nil {
				return ""
			}
			b.WriteRune(rune(v))
		}
		return b.String()
	}
	if strings.HasPrefix(name, "u") && len(name) >= 5 && len(name) <= 7 {
		if v, err := strconv.ParseUint(name[1:], 16, 32); err == nil && v <= 0x10FFFF {
			return string(rune(v))
		}
	}
	for _, a := range pdfAccents {
		if base, ok := strings.CutSuffix(name, a.suffix); ok && len(base) == 1 {
			if t := pdfGlyphText(base); t != "" {
				return norm.NFC.String(t + a.mark)
			}
		}
	}
	return ""
}

// pdfFontNames returns the glyph name of each code of a simple font: the
// built-in encoding of its embedded Type 1 program, overridden by the
// /Differences of its /Encoding dictionary. Codes without a name are "".
func pdfFontNames(font, desc pdf.Value) (names [256]string, any bool) {
	if ff := desc.Key("FontFile"); ff.Kind() == pdf.Stream {
		if data, _ := pdfStreamBytes(ff); len(data) > 0 {
			any = pdfType1Encoding(data, &names) || any
		}
	}
	if diffs := font.Key("Encoding").Key("Differences"); diffs.Kind() == pdf.Array {
		code := -1
		for i := 0; i < diffs.Len() && i < 1024; i++ {
			switch v := diffs.Index(i); v.Kind() {
			case pdf.Integer:
				code = int(v.Int64())
			case pdf.Name:
				if code >= 0 && code < 256 {
					names[code] = v.Name()
					any = true
				}
				code++
			}
		}
	}
	return names, any
}

// pdfType1Encoding reads the "dup <code> /<name> put" entries of the
// built-in encoding in the clear-text part of a Type 1 font program.
func pdfType1Encoding(data []byte, names *[256]string) bool {
	if i := bytes.Index(data, []byte("eexec")); i >= 0 {
		data = data[:i]
	}
	i := bytes.Index(data, []byte("/Encoding"))
	if i < 0 {
		return false
	}
	lx := pdfLexer{buf: data, pos: i + len("/Encoding")}
	found := false
	var code float64
	state := 0 // 0: want dup, 1: want code, 2: want name, 3: want put
	for steps := 0; steps < 4096; steps++ {
		v, kw, more := lx.token(0)
		if !more {
			break
		}
		switch {
		case string(kw) == "StandardEncoding" && !found:
			return false
		case string(kw) == "def" || string(kw) == "readonly" && found:
			return found
		case string(kw) == "dup":
			state = 1
		case state == 1 && v.kind == pdfOpNumber:
			code, state = v.num, 2
		case state == 2 && v.kind == pdfOpName:
			if code >= 0 && code < 256 {
				names[int(code)] = string(v.s)
				found = true
			}
			state = 3
		default:
			if string(kw) != "put" {
				state = 0
			}
		}
	}
	return found
}
