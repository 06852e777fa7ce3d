package engine

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds that keep HTMLToStructuredText linear on hostile input.
const (
	// htmlMaxDepth is the number of open elements tracked; deeper elements
	// still separate blocks and hide their content when hidden, but have no
	// other structure (no tables, lists or headings of their own).
	htmlMaxDepth = 256
	// htmlMaxCols caps the columns of a data table (and colspan).
	htmlMaxCols = 256
	// htmlMaxRowspan caps rowspan.
	htmlMaxRowspan = 1000
	// htmlMaxLabel caps the length of a column label built from several
	// header rows.
	htmlMaxLabel = 200
	// htmlMaxTitle caps the <title> text kept.
	htmlMaxTitle = 4096
	// htmlMaxParagraph is the length from which a paragraph ends at its
	// next space and goes on in a new one, so that the text of a huge
	// paragraph is held once, not in a buffer grown by doubling and a copy.
	htmlMaxParagraph = 1 << 20
)

// HTMLToStructuredText returns the readable text of the HTML page read from r
// as paragraphs in document order, with PageNum 0: headings with their
// breadcrumb trail, block elements as paragraphs, list items with "- " or
// their number, data tables one paragraph per row labelled by their
// headers, hidden elements and page furniture dropped, and only the <main>
// (else <article>) content when the page has one. The rules in full:
// docs/api-reference.md.
//
// The character set is detected as for FetchWebPage's result, so raw bytes
// of a page in any common encoding can be passed as they are (decided on
// the first non-ASCII bytes, see docs/api-reference.md). The input is read
// as a stream: at most 64 MiB of it, one token (text node, tag, script) of
// at most 16 MiB, and 64 MiB of text in the paragraphs (a paragraph longer
// than 1 MiB goes on in a new one at its next space); past a bound the
// error wraps ErrDocumentTooLarge, so memory stays within a small multiple
// of those bounds whatever the input. Another error is returned only when
// r fails; a page without text gives no paragraphs.
func HTMLToStructuredText(r io.Reader) ([]Paragraph, error) {
	return htmlParse(r, true)
}

// htmlParse is HTMLToStructuredText; pageTitle false leaves the page title
// out of the breadcrumbs (for EPUB chapters, which get the book's own
// chapter titles).
func htmlParse(r io.Reader, pageTitle bool) ([]Paragraph, error) {
	return htmlParseText(r, pageTitle, maxDocumentTextBytes)
}

// htmlParseText is htmlParse with at most textLeft bytes of text in the
// paragraphs.
func htmlParseText(r io.Reader, pageTitle bool, textLeft int) ([]Paragraph, error) {
	b := &htmlBuilder{counts: make(map[string]int32), pageTitle: pageTitle, textLeft: textLeft}
	size := 0
	if l, ok := r.(interface{ Len() int }); ok {
		size = l.Len()
	}
	z := html.NewTokenizer(htmlDecodeReader(&htmlLimitReader{r: r, left: htmlMaxInputBytes}, size))
	z.SetMaxBuf(htmlMaxToken)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			switch {
			case err == io.EOF:
				paras := b.finish()
				if b.err != nil {
					return nil, b.err
				}
				return paras, nil
			case errors.Is(err, html.ErrBufferExceeded):
				return nil, fmt.Errorf("%w: an HTML text node or tag of more than %d bytes", ErrDocumentTooLarge, htmlMaxToken)
			case errors.Is(err, ErrDocumentTooLarge):
				return nil, err
			}
			return nil, fmt.Errorf("read HTML: %w", err)
		case html.TextToken:
			if b.wantTitle && len(b.titleText) < htmlMaxTitle {
				b.titleText = append(b.titleText, z.Text()...)
				if len(b.titleText) > htmlMaxTitle {
					b.titleText = htmlTrimPartialRune(b.titleText[:htmlMaxTitle])
				}
			}
			if !b.dropping() {
				b.appendText(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			b.startTag(z, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			name, _ := z.TagName()
			b.endTag(name)
		}
		if b.err != nil {
			return nil, b.err
		}
	}
}

// htmlFlags describe where an open element sits; each stack entry holds its
// own flags or'ed with its parent's.
type htmlFlags uint16

const (
	htmlDropped htmlFlags = 1 << iota
	htmlInMain
	htmlInArticle
	htmlInNav
	htmlInBoiler
	htmlInSectioning
	htmlInLink
	htmlInForeign // inside <svg> or <math>
	htmlInAdmon   // inside an admonition box (note, tip, warning, ...)
)

// Indexes into htmlOpen.scope: the stack index of the nearest open element
// of a kind that an implied end tag may close, or -1.
const (
	htmlScopeP = iota
	htmlScopeLi
	htmlScopeDd // dt or dd
	htmlScopeCell
	htmlScopeRow
	htmlScopeTSect // thead, tbody, tfoot
	htmlScopeList  // ol, ul, menu
	htmlScopeN
)

// htmlOpen is one open element on the builder's stack.
type htmlOpen struct {
	a       atom.Atom
	name    string
	flags   htmlFlags
	level   int8  // heading level of this element or its nearest heading ancestor
	table   bool  // this element opened a htmlTable (or cell, for td/th)
	ordered bool  // ol: items are numbered
	next    int   // ol: number of the next item
	boil    int32 // index+1 in htmlBuilder.boilers of the innermost possible boilerplate element, 0 for none
	scope   [htmlScopeN]int32
}

// htmlRawPara is a paragraph before main-content selection and breadcrumbs.
type htmlRawPara struct {
	text  string
	level int8
	zone  htmlFlags
	boil  int32 // htmlOpen.boil of the element the paragraph ended in
}

// htmlBuilder turns a token stream into paragraphs.
type htmlBuilder struct {
	stack  []htmlOpen
	counts map[string]int32 // open elements per name on stack
	// overflow counts elements per name opened beyond htmlMaxDepth;
	// ovDrop/ovDropName/ovDropLevel track one dropped element among them.
	overflow    map[string]int32
	ovDrop      bool
	ovDropName  string
	ovDropLevel int32

	tables []*htmlTable
	paras  []htmlRawPara

	text  []byte // current paragraph, whitespace collapsed
	space bool   // a space is pending before the next visible character
	// spaceNL: the pending space holds a line break, which between two
	// Chinese or Japanese characters is no space (cjkJoinable).
	spaceNL bool
	prefix  string // list marker for the paragraph's first character
	brRun   int    // consecutive <br> without text between
	scratch []byte

	// boxHead is the stack index+1 of the open heading inside an
	// admonition box (0 for none), boxLevel the level its tag names: the
	// box's label, unless it is a link target (see boxHeadAnchor).
	boxHead  int32
	boxLevel int8

	boilers   []htmlBoiler // elements that may be boilerplate, in document order
	pageTitle bool         // start every breadcrumb with the page title
	wantTitle bool         // inside the first <title>
	titleText []byte       // its text

	// textLeft is the text the paragraphs may still take (see
	// htmlBuilder.spend); err is set once it runs out.
	textLeft int
	cells    int // cells the open tables hold (see htmlMaxCells)
	err      error
}

// spend takes n bytes of text from the budget; past it, it sets b.err to
// an error wrapping ErrDocumentTooLarge and returns false.
func (b *htmlBuilder) spend(n int) bool {
	if b.textLeft -= n; b.textLeft < 0 && b.err == nil {
		b.err = fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxDocumentTextBytes)
	}
	return b.err == nil
}

func (b *htmlBuilder) top() *htmlOpen {
	if len(b.stack) == 0 {
		return nil
	}
	return &b.stack[len(b.stack)-1]
}

func (b *htmlBuilder) topFlags() htmlFlags {
	if t := b.top(); t != nil {
		return t.flags
	}
	return 0
}

func (b *htmlBuilder) dropping() bool {
	return b.ovDrop || b.topFlags()&htmlDropped != 0
}

// sink is where the next finished paragraph goes.
func (b *htmlBuilder) sink() *[]htmlRawPara {
	if n := len(b.tables); n > 0 {
		t := b.tables[n-1]
		if t.inCaption {
			return &t.caption
		}
		if c := t.openCell(); c != nil {
			return &c.paras
		}
		return t.out
	}
	return &b.paras
}

// put writes one visible character sequence, inserting a pending space or
// the list marker first.
func (b *htmlBuilder) put(s []byte) {
	switch {
	case len(b.text) == 0:
		b.text = append(b.text, b.prefix...)
		b.prefix = ""
	case b.space && len(b.text) >= htmlMaxParagraph:
		b.flush() // a long paragraph goes on in the next one
	case b.space && b.spaceNL && htmlJoinsCJK(b.text, s):
		// A line break inside Chinese or Japanese text.
	case b.space:
		b.text = append(b.text, ' ')
	}
	b.space, b.spaceNL = false, false
	if len(b.text)+len(s) > b.textLeft {
		b.spend(len(b.text) + len(s))
		return
	}
	b.text = append(b.text, s...)
}

// htmlJoinsCJK reports whether the paragraph text so far and the next
// characters s meet at a line break that needs no space: both sides
// Chinese or Japanese (cjkJoinable).
func htmlJoinsCJK(text, s []byte) bool {
	before, _ := utf8.DecodeLastRune(text)
	after, _ := utf8.DecodeRune(s)
	return cjkJoinable(before) && cjkJoinable(after)
}

// appendText adds text to the current paragraph with whitespace collapsed.
func (b *htmlBuilder) appendText(s []byte) {
	var words int32
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\n' || c == '\r':
				b.space, b.spaceNL = true, true
				continue
			case c == ' ' || c == '\t' || c == '\f':
				b.space = true
				continue
			case c < 0x20 || c == 0x7f:
				continue
			}
			// Copy the run of plain printable ASCII at once.
			j := i
			for j < len(s) && s[j] > ' ' && s[j] < 0x7f {
				j++
			}
			for _, d := range s[i-1 : j] {
				if d >= '0' && d <= '9' || d|0x20 >= 'a' && d|0x20 <= 'z' {
					words++
				}
			}
			b.put(s[i-1 : j])
			i = j
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		seq := s[i : i+size]
		i += size
		switch {
		case unicode.IsSpace(r):
			b.space = true
			continue
		case r == 0x200B || r == 0xFEFF || r == 0xAD || unicode.IsControl(r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			words++
		}
		b.put(seq)
	}
	if words == 0 {
		return
	}
	b.brRun = 0
	if n := len(b.tables); n > 0 {
		if c := b.tables[n-1].openCell(); c != nil {
			if b.topFlags()&htmlInLink != 0 {
				c.linkChars += words
			} else {
				c.textChars += words
			}
		}
	}
}

// flush ends the current paragraph.
func (b *htmlBuilder) flush() {
	b.brRun = 0
	b.space, b.spaceNL = false, false
	if len(b.text) == 0 {
		return
	}
	var level int8
	var zone htmlFlags
	var boil int32
	if t := b.top(); t != nil {
		level, zone, boil = t.level, t.flags, t.boil
	}
	if level > 0 && b.boxHead > 0 && htmlNamesBox(b.text) {
		level = 0 // "Note", "Warning:": a box's label even when it is a link target
	}
	if !b.spend(len(b.text)) {
		return
	}
	s := b.sink()
	*s = append(*s, htmlRawPara{text: string(b.text), level: level, zone: zone, boil: boil})
	if level > 0 {
		if n := len(b.tables); n > 0 {
			if c := b.tables[n-1].openCell(); c != nil {
				c.heading = true
			}
		}
	}
	b.text = b.text[:0]
}

func (b *htmlBuilder) startTag(z *html.Tokenizer, selfClosing bool) {
	rawName, hasAttr := z.TagName()
	a := atom.Lookup(rawName)
	kind := htmlKinds[a]
	at := htmlTagAttrs{start: 1, colspan: 1, rowspan: 1}
	if hasAttr && !b.dropping() {
		if matter, href := b.attrsMatter(a, z.Raw()); matter {
			at = b.readAttrs(z)
		} else {
			at.href = href
		}
	}
	if a == atom.Br {
		if !b.dropping() {
			b.lineBreak()
		}
		return
	}
	b.wantTitle = false
	if a == atom.Title && b.topFlags()&htmlInForeign == 0 && len(b.titleText) == 0 {
		b.wantTitle = true
	}
	if a == atom.Input && at.secret && !b.dropping() {
		b.markForm()
	}
	if kind&htmlVoid != 0 {
		if kind&htmlBlock != 0 && !b.dropping() {
			b.flush()
		}
		return
	}
	if selfClosing && (a == 0 || a == atom.Svg || a == atom.Math || b.topFlags()&htmlInForeign != 0) {
		return // <x/> is closed at once in SVG and MathML (and unknown elements)
	}
	var name string
	if a != 0 {
		name = a.String()
	} else {
		name = string(rawName)
	}
	drop := kind&htmlSkip != 0 || at.hidden || at.permalink
	if at.boiler && kind&htmlBlock == 0 && (b.top() == nil || b.top().level == 0) {
		// An inline element (a skip link, a "nav-link") has no paragraph
		// of its own to judge later; inside a heading it is the heading.
		drop = true
	}
	if b.dropping() {
		e := htmlOpen{a: a, name: name}
		b.inherit(&e)
		b.push(e, drop)
		return
	}
	b.closeImplied(a, kind)
	if kind&htmlBlock != 0 {
		b.flush()
	}
	parent := b.topFlags()
	e := htmlOpen{a: a, name: name}
	b.inherit(&e)
	if drop {
		e.flags |= htmlDropped
	}
	if a == atom.Svg || a == atom.Math {
		e.flags |= htmlInForeign
	}
	switch {
	case a == atom.Main || at.role == "main":
		e.flags |= htmlInMain | htmlInSectioning
	case a == atom.Article || at.role == "article":
		e.flags |= htmlInArticle | htmlInSectioning
	case a == atom.Nav || at.role == "navigation" || at.role == "search":
		e.flags |= htmlInNav | htmlInSectioning
	case a == atom.Aside || at.role == "complementary":
		e.flags |= htmlInBoiler | htmlInSectioning
	case a == atom.Header || a == atom.Footer || at.role == "banner" || at.role == "contentinfo":
		if parent&htmlInSectioning == 0 {
			e.flags |= htmlInBoiler
		}
	case a == atom.Section:
		e.flags |= htmlInSectioning
	case a == atom.A && at.href:
		e.flags |= htmlInLink
	}
	if at.admon {
		e.flags |= htmlInAdmon
	}
	if kind&htmlPScope != 0 {
		e.scope[htmlScopeP] = -1
	}
	if kind&htmlListScope != 0 {
		e.scope[htmlScopeLi], e.scope[htmlScopeDd] = -1, -1
	}
	if a == atom.Table {
		for i := htmlScopeCell; i <= htmlScopeTSect; i++ {
			e.scope[i] = -1
		}
	}
	if b.boxHead > 0 && (at.id || a == atom.A && at.name) {
		b.boxHeadAnchor(&e)
	}
	idx := int32(len(b.stack))
	var boxLevel int8
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		switch {
		case e.flags&htmlInAdmon == 0:
			e.level = int8(rawName[1] - '0')
		case at.id: // a box's title that is a link target is a section
			e.level, boxLevel = int8(rawName[1]-'0'), int8(rawName[1]-'0')
		default: // an admonition's title labels its box
			boxLevel = int8(rawName[1] - '0')
		}
	case atom.P:
		e.scope[htmlScopeP] = idx
	case atom.Li:
		e.scope[htmlScopeLi] = idx
	case atom.Dt, atom.Dd:
		e.scope[htmlScopeDd] = idx
	case atom.Td, atom.Th:
		e.scope[htmlScopeCell] = idx
	case atom.Tr:
		e.scope[htmlScopeRow] = idx
	case atom.Thead, atom.Tbody, atom.Tfoot:
		e.scope[htmlScopeTSect] = idx
	case atom.Ol, atom.Ul, atom.Menu:
		e.scope[htmlScopeList] = idx
		e.ordered, e.next = a == atom.Ol, at.start
	}
	if !b.push(e, drop) || drop {
		return
	}
	if boxLevel > 0 {
		b.boxHead, b.boxLevel = idx+1, boxLevel
	}
	switch {
	case a == atom.Html || a == atom.Body || a == atom.Main || a == atom.Article:
	case at.boiler && at.bandOnly && parent&htmlInSectioning != 0:
		// class="header" or "footer" inside <main>, <article> or <section>
		// heads that content (Javadoc's title block), as the elements do.
	case at.boiler || at.idBoiler && !at.section && e.level == 0 && a != atom.Section:
		b.openBoiler(b.top(), htmlBoilerClass, false)
	case a == atom.Form:
		b.openBoiler(b.top(), htmlBoilerForm, at.formHint)
	}
	b.openStructure(a, at)
}

// finish closes everything still open and returns the selected paragraphs
// with their breadcrumbs.
func (b *htmlBuilder) finish() []Paragraph {
	b.popTo(0)
	b.flush()
	var hasMain, hasArticle bool
	for _, p := range b.paras {
		if p.zone&htmlInNav != 0 {
			continue
		}
		hasMain = hasMain || p.zone&htmlInMain != 0
		hasArticle = hasArticle || p.zone&htmlInArticle != 0
	}
	keep := func(z htmlFlags) bool {
		switch {
		case z&htmlInNav != 0:
			return false
		case hasMain:
			return z&htmlInMain != 0
		case hasArticle:
			return z&htmlInArticle != 0
		}
		return z&htmlInBoiler == 0
	}
	region := htmlMainRegion(hasMain, hasArticle)
	drop := b.droppedBoilers(keep, region)
	kept := b.paras[:0]
	for _, p := range b.paras {
		if !keep(p.zone) || b.boilerDrops(p.boil, p.zone, region, drop) {
			continue
		}
		if p.text = htmlStripMarks(p.text, p.level > 0); p.text != "" {
			kept = append(kept, p)
		}
	}
	title := ""
	if b.pageTitle {
		title = b.title(kept)
	}
	var out []Paragraph
	var trail [7]string
	crumb := title
	for _, p := range kept {
		if p.level > 0 {
			trail[p.level] = p.text
			for l := p.level + 1; l < 7; l++ {
				trail[l] = ""
			}
			var parts []string
			for _, s := range trail[1:] {
				if s != "" {
					parts = append(parts, s)
				}
			}
			crumb = strings.Join(parts, " > ")
			if title != "" && !strings.EqualFold(parts[0], title) {
				crumb = title + " > " + crumb
			}
		}
		out = append(out, Paragraph{Text: p.text, Heading: p.level > 0, Breadcrumb: crumb})
	}
	return out
}

// title returns the page title that must start the breadcrumbs of the kept
// paragraphs paras, or "" when they start with it already: when the page's
// first paragraph is its only heading of the highest level, that heading
// tops every breadcrumb; else the title is the text of <title>, trimmed of
// a site name (see htmlPageTitle).
func (b *htmlBuilder) title(paras []htmlRawPara) string {
	top, count := int8(7), 0
	var headings []string
	for _, p := range paras {
		if p.level == 0 {
			continue
		}
		headings = append(headings, p.text)
		switch {
		case p.level < top:
			top, count = p.level, 1
		case p.level == top:
			count++
		}
	}
	if len(paras) == 0 || count == 1 && paras[0].level == top {
		return ""
	}
	return htmlPageTitle(string(b.titleText), headings)
}
