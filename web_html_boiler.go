package engine

import (
	"bytes"
	"strings"
	"unicode"
)

// Single-page boilerplate removal for HTMLToStructuredText: elements whose
// class or id names them navigation, sidebar, breadcrumb, table of
// contents, related links, cookie banner, ad or skip link; small search and
// login forms; heading permalink anchors. An element is classified when it
// opens; whether its paragraphs are dropped is decided at the end of the
// page, once it is known how much of the page's text it holds.

// htmlClassKind is what a class (or id) token says about its element.
type htmlClassKind uint8

const (
	htmlClassNone      htmlClassKind = iota
	htmlClassBoiler                  // navigation and other page furniture
	htmlClassAdmon                   // a note/tip/warning box: its headings are labels
	htmlClassPermalink               // a heading permalink anchor (¶, #, 🔗)
	htmlClassSection                 // a content section (ids of such elements are titles, not roles)
)

// htmlBoilerTokens are whole class/id tokens (lower case) naming page
// furniture.
var htmlBoilerTokens = map[string]bool{
	"header": true, "footer": true, "site-header": true, "site-footer": true, "page-footer": true,
	"global-header": true, "global-footer": true, "md-header": true, "md-footer": true, "md-tabs": true,
	"md-search": true, "md-skip": true, "related": true, "related-links": true, "relatedlinks": true,
	"related-posts": true, "searchbox": true, "search-box": true, "search-form": true, "searchform": true,
	"login": true, "login-form": true, "loginform": true, "signin": true, "ad": true, "ads": true,
	"adsbygoogle": true, "sponsor": true, "sponsored": true, "contents-panel": true,
	// "Edit this page" links inside the content: MkDocs Material,
	// Docusaurus, VitePress and others.
	"md-content__button": true, "theme-edit-this-page": true, "edit-this-page": true, "editthispage": true,
	"edit-link": true, "page-edit": true,
}

// htmlBoilerParts are parts of a class/id token (split at '-' and '_')
// naming page furniture: "md-sidebar", "wy-nav-side", "cookie-banner".
var htmlBoilerParts = map[string]bool{
	"nav": true, "navbar": true, "navigation": true, "navheader": true, "navfooter": true,
	"navpanel": true, "sidenav": true, "sidebar": true, "sphinxsidebar": true,
	"sphinxsidebarwrapper": true, "breadcrumb": true, "breadcrumbs": true, "toc": true,
	"localtoc": true, "globaltoc": true, "tableofcontents": true, "cookie": true, "cookies": true,
	"consent": true, "gdpr": true, "advert": true, "advertisement": true, "adsense": true,
	"skip": true, "skiplink": true, "skipnav": true,
}

// htmlContentParts exempt a token from htmlBoilerParts: "wy-nav-content"
// (the Read the Docs theme's content column) is content, and
// "sidebar-visible" or "has-toc" describe a page's layout, not the element.
var htmlContentParts = map[string]bool{
	"content": true, "main": true, "body": true, "article": true, "document": true,
	"documentwrapper": true, "bodywrapper": true, "text": true, "visible": true, "hidden": true,
	"open": true, "show": true, "shown": true, "has": true, "with": true, "active": true,
	"toggle": true, "enabled": true, "collapsed": true, "expanded": true, "is": true,
}

// htmlAdmonTokens are classes of admonition boxes (Sphinx, MkDocs,
// DocBook).
var htmlAdmonTokens = map[string]bool{
	"admonition": true, "note": true, "tip": true, "hint": true, "warning": true, "important": true,
	"caution": true, "attention": true, "danger": true, "error": true, "seealso": true,
	"see-also": true, "callout": true, "notice": true,
}

// htmlPermalinkTokens are classes of heading permalink anchors.
var htmlPermalinkTokens = map[string]bool{
	"headerlink": true, "anchorlink": true, "anchor-link": true, "header-anchor": true,
	"heading-anchor": true, "headeranchor": true, "permalink": true, "copiable-link": true,
	"copiable-anchor": true, "anchorjs-link": true, "hash-link": true, "anchor-heading": true,
	"heading-link": true, "zola-anchor": true,
}

// htmlClassify returns what the lower-case class or id token tok says.
func htmlClassify(tok string) htmlClassKind {
	switch {
	case tok == "":
		return htmlClassNone
	case htmlPermalinkTokens[tok]:
		return htmlClassPermalink
	case htmlAdmonTokens[tok]:
		return htmlClassAdmon
	case tok == "section" || strings.HasPrefix(tok, "sect") && len(tok) == 5 && tok[4] >= '1' && tok[4] <= '5' ||
		tok == "chapter" || tok == "refsect1" || tok == "refsect2":
		return htmlClassSection
	case htmlBoilerTokens[tok]:
		return htmlClassBoiler
	}
	boiler := false
	for part := range strings.FieldsFuncSeq(tok, func(r rune) bool { return r == '-' || r == '_' }) {
		if htmlContentParts[part] {
			return htmlClassNone
		}
		boiler = boiler || htmlBoilerParts[part]
	}
	if boiler {
		return htmlClassBoiler
	}
	return htmlClassNone
}

// htmlFormHint reports whether a form's class, id, role or action marks it
// as a search or login form.
func htmlFormHint(v []byte) bool {
	l := bytes.ToLower(v)
	for _, w := range []string{"search", "login", "log-in", "signin", "sign-in", "subscribe", "newsletter"} {
		if bytes.Contains(l, []byte(w)) {
			return true
		}
	}
	return false
}

// htmlBoilerKind says how an htmlBoiler element is judged.
type htmlBoilerKind uint8

const (
	htmlBoilerClass htmlBoilerKind = iota // class or id boilerplate: dropped unless it holds most of the page
	htmlBoilerForm                        // a form: dropped when small and a search or login form
)

// Limits of the boilerplate rules.
const (
	// htmlBoilerKeepChars: a class/id boilerplate element holding more than
	// half of the page's text, and at least this many bytes of it, is kept.
	htmlBoilerKeepChars = 400
	// htmlFormMaxChars: a search or login form with less text than this is
	// dropped.
	htmlFormMaxChars = 400
)

// htmlBoiler is one element that may be boilerplate.
type htmlBoiler struct {
	parent int32 // index+1 of the enclosing htmlBoiler, 0 for none
	kind   htmlBoilerKind
	hint   bool      // form: marked as search or login
	chars  int       // bytes of kept text inside, subelements included
	zone   htmlFlags // the element's zone flags (inside <main>, <article>, ...)
}

// openBoiler records e (just pushed) as a possible boilerplate element.
func (b *htmlBuilder) openBoiler(e *htmlOpen, kind htmlBoilerKind, hint bool) {
	b.boilers = append(b.boilers, htmlBoiler{parent: e.boil, kind: kind, hint: hint, zone: e.flags})
	e.boil = int32(len(b.boilers))
}

// htmlMainRegion returns the zone flag of the page's main content: <main>
// (or role="main") when the page has some, else <article> (or
// role="article"), else 0. A boilerplate element enclosing the main
// content never drops it: themes wrap the whole page in classes that name
// navigation ("wy-grid-for-nav" in the Read the Docs theme), and a page
// whose main text is short would lose all of it.
func htmlMainRegion(hasMain, hasArticle bool) htmlFlags {
	switch {
	case hasMain:
		return htmlInMain
	case hasArticle:
		return htmlInArticle
	}
	return 0
}

// boilerDrops reports whether the paragraph whose innermost boilerplate
// element is boil is dropped: some element of that chain is dropped and
// lies on the paragraph's side of the main region (region 0: any).
func (b *htmlBuilder) boilerDrops(boil int32, zone, region htmlFlags, drop []bool) bool {
	for id := boil; id > 0; id = b.boilers[id-1].parent {
		if drop[id-1] && b.boilers[id-1].zone&region == zone&region {
			return true
		}
	}
	return false
}

// markForm records that an input of a search or password type sits in the
// innermost open form.
func (b *htmlBuilder) markForm() {
	for i := len(b.stack) - 1; i >= 0; i-- {
		if e := &b.stack[i]; e.name == "form" {
			if e.boil > 0 && b.boilers[e.boil-1].kind == htmlBoilerForm {
				b.boilers[e.boil-1].hint = true
			}
			return
		}
	}
}

// droppedBoilers returns, for each htmlBoiler, whether its paragraphs are
// dropped, given the paragraphs the zone rules keep and the zone flag of
// the main region (htmlMainRegion): an element inside the region is not
// dropped for an enclosing one outside it.
func (b *htmlBuilder) droppedBoilers(keep func(htmlFlags) bool, region htmlFlags) []bool {
	if len(b.boilers) == 0 {
		return nil
	}
	total := 0
	for _, p := range b.paras {
		if !keep(p.zone) {
			continue
		}
		total += len(p.text)
		for id := p.boil; id > 0; id = b.boilers[id-1].parent {
			b.boilers[id-1].chars += len(p.text)
		}
	}
	drop := make([]bool, len(b.boilers))
	for i, bo := range b.boilers {
		switch bo.kind {
		case htmlBoilerClass:
			drop[i] = !(bo.chars*2 > total && bo.chars >= htmlBoilerKeepChars)
		case htmlBoilerForm:
			drop[i] = bo.hint && bo.chars < htmlFormMaxChars
		}
		if bo.parent > 0 && drop[bo.parent-1] && b.boilers[bo.parent-1].zone&region == bo.zone&region {
			drop[i] = true
		}
	}
	return drop
}

// htmlPermalinkMarks are texts of heading permalink anchors.
var htmlPermalinkMarks = []string{"¶", "#", "🔗", "🔗\ufe0f", "§", "🔗︎", "⚓", "⚓\ufe0f"}

// htmlStripMarks removes permalink marks left in a paragraph's text by
// anchors without a known class: a trailing " ¶" on any paragraph, and on
// headings a trailing or leading mark ("# Title", "Title #", "Title 🔗").
func htmlStripMarks(s string, heading bool) string {
	for {
		t := s
		for _, m := range htmlPermalinkMarks {
			if m != "¶" && !heading {
				continue
			}
			if s == m {
				return ""
			}
			if strings.HasSuffix(s, " "+m) {
				s = strings.TrimRightFunc(s[:len(s)-len(m)], unicode.IsSpace)
			}
			if heading && strings.HasPrefix(s, m+" ") {
				s = strings.TrimLeftFunc(s[len(m):], unicode.IsSpace)
			}
		}
		if s == t {
			return s
		}
	}
}

// htmlTitleSeps separate a page title from the site name in <title>.
var htmlTitleSeps = []string{" — ", " – ", " | ", " - ", " · ", " :: ", " » ", ": "}

// htmlPageTitle returns the page title to start breadcrumbs with, from the
// text of <title> and the page's headings: the heading the title names
// (whole, or one part of it around a separator, or a numbered heading
// ending in it), else the title without a trailing site name ("Page - Site",
// "Page (Manual)") when the rest is short, else the whole title.
func htmlPageTitle(title string, headings []string) string {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return ""
	}
	match := func(part string) string {
		part = strings.TrimSpace(part)
		if part == "" {
			return ""
		}
		for _, h := range headings {
			if strings.EqualFold(h, part) || len(h) > len(part) && strings.HasSuffix(strings.ToLower(h), " "+strings.ToLower(part)) {
				return h
			}
		}
		return ""
	}
	if h := match(title); h != "" {
		return h
	}
	// "Node (Manual)": texinfo's title.
	if i := strings.Index(title, " ("); i > 0 && strings.HasSuffix(title, ")") {
		if h := match(title[:i]); h != "" {
			return h
		}
	}
	for _, sep := range htmlTitleSeps {
		parts := strings.Split(title, sep)
		if len(parts) < 2 {
			continue
		}
		for _, p := range parts {
			if h := match(p); h != "" {
				return h
			}
		}
	}
	for _, sep := range htmlTitleSeps[:len(htmlTitleSeps)-1] {
		if i := strings.LastIndex(title, sep); i > 0 && len(strings.Fields(title[i+len(sep):])) <= 5 {
			return strings.TrimSpace(title[:i])
		}
	}
	if i := strings.Index(title, " ("); i > 0 && strings.HasSuffix(title, ")") {
		return title[:i]
	}
	return title
}

// htmlNamesBox reports whether a box's title text only names the kind of
// box ("Note", "Warning:", "See also"): such a title labels its box even
// when it is a link target.
func htmlNamesBox(text []byte) bool {
	t := strings.ToLower(strings.TrimRight(strings.TrimSpace(string(text)), ":.!"))
	return htmlAdmonTokens[strings.ReplaceAll(t, " ", "-")] || htmlAdmonTokens[strings.ReplaceAll(t, " ", "")]
}
