package engine

import (
	"bytes"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlKind classifies element types.
type htmlKind uint16

const (
	htmlBlock     htmlKind = 1 << iota // separates paragraphs
	htmlVoid                           // never has content or an end tag
	htmlSkip                           // content is dropped
	htmlClosesP                        // start tag closes an open <p>
	htmlPScope                         // boundary for closing <p>
	htmlListScope                      // boundary for closing <li>, <dt>, <dd>
)

var htmlKinds = func() map[atom.Atom]htmlKind {
	m := make(map[atom.Atom]htmlKind)
	add := func(k htmlKind, as ...atom.Atom) {
		for _, a := range as {
			m[a] |= k
		}
	}
	add(htmlBlock, atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Caption,
		atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Dt,
		atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Frameset,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup, atom.Hr,
		atom.Html, atom.Legend, atom.Li, atom.Listing, atom.Main, atom.Menu, atom.Nav, atom.Ol,
		atom.P, atom.Plaintext, atom.Pre, atom.Search, atom.Section, atom.Summary, atom.Table,
		atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr, atom.Ul, atom.Xmp)
	add(htmlVoid, atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img,
		atom.Image, atom.Input, atom.Keygen, atom.Link, atom.Meta, atom.Param, atom.Source,
		atom.Track, atom.Wbr)
	add(htmlSkip, atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math,
		atom.Iframe, atom.Object, atom.Canvas, atom.Audio, atom.Video, atom.Select,
		atom.Textarea, atom.Button, atom.Head, atom.Title, atom.Noembed, atom.Noframes,
		atom.Frame, atom.Datalist)
	add(htmlClosesP, atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center,
		atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption,
		atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Header, atom.Hgroup, atom.Hr, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.P,
		atom.Pre, atom.Listing, atom.Search, atom.Section, atom.Summary, atom.Table, atom.Ul,
		atom.Li, atom.Dd, atom.Dt, atom.Plaintext, atom.Xmp)
	add(htmlPScope, atom.Applet, atom.Caption, atom.Html, atom.Table, atom.Td, atom.Th,
		atom.Marquee, atom.Object, atom.Template, atom.Button)
	add(htmlListScope, atom.Ol, atom.Ul, atom.Menu, atom.Dl, atom.Table, atom.Td, atom.Th,
		atom.Caption, atom.Blockquote, atom.Section, atom.Article, atom.Aside, atom.Nav,
		atom.Main, atom.Header, atom.Footer, atom.Form, atom.Fieldset, atom.Figure, atom.Details)
	return m
}()

// htmlTagAttrs are the attributes the builder looks at.
type htmlTagAttrs struct {
	hidden  bool
	role    string
	href    bool
	start   int
	colspan int
	rowspan int
	// From class and id tokens (see htmlClassify).
	boiler    bool // class names page furniture
	bandOnly  bool // ... only as "header" or "footer"
	idBoiler  bool // id names page furniture
	admon     bool // class names an admonition box
	permalink bool // class names a heading permalink anchor
	section   bool // class names a content section
	id        bool // a non-empty id: the element is a link target
	name      bool // a non-empty name (an <a name> is a link target)
	formHint  bool // class, id, role or action names a search or login form
	secret    bool // input of type password or search
}

// htmlAttrHints are lower-case substrings of a tag without which none of
// its attributes can change the result (hidden, aria-hidden, display:none,
// visibility:hidden, role, the screen-reader-only classes, class and id
// for the boilerplate rules, search and password inputs).
var htmlAttrHints = [][]byte{[]byte("hidden"), []byte("display"), []byte("role"), []byte("sr-only"), []byte("screen-reader"),
	[]byte("class"), []byte("id="), []byte("password"), []byte("search")}

// attrsMatter reports whether the attributes of a tag with raw source raw
// need reading (the tokenizer copies every attribute it returns), and
// whether raw mentions href, which is all an <a> without hints needs.
func (b *htmlBuilder) attrsMatter(a atom.Atom, raw []byte) (matter, href bool) {
	b.scratch = append(b.scratch[:0], raw...)
	for i, c := range b.scratch {
		if 'A' <= c && c <= 'Z' {
			b.scratch[i] = c + 'a' - 'A'
		}
	}
	href = a == atom.A && bytes.Contains(b.scratch, []byte("href"))
	switch a {
	case atom.Ol, atom.Td, atom.Th, atom.Table:
		return true, href
	case atom.A:
		if bytes.Contains(b.scratch, []byte("name=")) { // a link target, which may make a box's title a section
			return true, href
		}
	}
	for _, h := range htmlAttrHints {
		if bytes.Contains(b.scratch, h) {
			return true, href
		}
	}
	return false, href
}

func (b *htmlBuilder) readAttrs(z *html.Tokenizer) htmlTagAttrs {
	at := htmlTagAttrs{start: 1, colspan: 1, rowspan: 1}
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "hidden":
			if !bytes.EqualFold(bytes.TrimSpace(v), []byte("until-found")) {
				at.hidden = true
			}
		case "aria-hidden":
			if bytes.EqualFold(bytes.TrimSpace(v), []byte("true")) {
				at.hidden = true
			}
		case "style":
			if b.styleHidden(v) {
				at.hidden = true
			}
		case "class":
			for rest := v; len(rest) > 0; {
				var c []byte
				c, rest = htmlNextToken(rest)
				switch string(c) {
				case "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text":
					at.hidden = true
				}
				lc := strings.ToLower(string(c))
				switch htmlClassify(lc) {
				case htmlClassBoiler:
					band := lc == "header" || lc == "footer"
					at.bandOnly = band && (!at.boiler || at.bandOnly)
					at.boiler = true
				case htmlClassAdmon:
					at.admon = true
				case htmlClassPermalink:
					at.permalink = true
				case htmlClassSection:
					at.section = true
				}
			}
			at.formHint = at.formHint || htmlFormHint(v)
		case "id":
			at.id = at.id || len(bytes.TrimSpace(v)) > 0
			for rest := v; len(rest) > 0; {
				var c []byte
				c, rest = htmlNextToken(rest)
				at.idBoiler = at.idBoiler || htmlClassify(strings.ToLower(string(c))) == htmlClassBoiler
			}
			at.formHint = at.formHint || htmlFormHint(v)
		case "action":
			at.formHint = at.formHint || htmlFormHint(v)
		case "type":
			t := strings.ToLower(string(bytes.TrimSpace(v)))
			at.secret = t == "password" || t == "search"
		case "role":
			if c, _ := htmlNextToken(v); len(c) > 0 {
				at.role = strings.ToLower(string(c))
			}
			at.formHint = at.formHint || htmlFormHint(v)
		case "href":
			at.href = true
		case "name":
			at.name = len(bytes.TrimSpace(v)) > 0
		case "start":
			at.start = htmlAtoi(v, 1, -1<<30, 1<<30)
		case "colspan":
			at.colspan = htmlAtoi(v, 1, 1, htmlMaxCols)
		case "rowspan":
			at.rowspan = htmlAtoi(v, 1, 1, htmlMaxRowspan)
		}
	}
	return at
}

// htmlNextToken returns the first space-separated token of v and the rest.
func htmlNextToken(v []byte) (tok, rest []byte) {
	i := 0
	for i < len(v) && htmlIsSpace(v[i]) {
		i++
	}
	j := i
	for j < len(v) && !htmlIsSpace(v[j]) {
		j++
	}
	return v[i:j], v[j:]
}

func htmlIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// htmlAtoi parses an integer attribute, clamped to [lo, hi]; def when it
// is not a number.
func htmlAtoi(v []byte, def, lo, hi int) int {
	n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
	if err != nil {
		return def
	}
	return min(max(n, lo), hi)
}

// styleHidden reports whether an inline style hides the element.
func (b *htmlBuilder) styleHidden(v []byte) bool {
	b.scratch = b.scratch[:0]
	for _, c := range v {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
		case 'A' <= c && c <= 'Z':
			b.scratch = append(b.scratch, c+'a'-'A')
		default:
			b.scratch = append(b.scratch, c)
		}
	}
	return bytes.Contains(b.scratch, []byte("display:none")) || bytes.Contains(b.scratch, []byte("visibility:hidden"))
}
