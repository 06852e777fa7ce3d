package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The crawl cache is one Markdown file per cleaned page:
//
//	---
//	url: https://example.com/docs/install
//	---
//
//	# Install
//
//	Download the archive.
//
//	## Linux
//
//	- unpack it
//	- run it
//
//	| Name | Size |
//	| --- | --- |
//	| a.tgz | 2 MB |
//
// Headings become "#" lines whose level is the depth of their breadcrumb;
// consecutive list items (HTMLToStructuredText starts them with "- " or
// "1. ") form one list block; consecutive table rows ("Name: a.tgz | Size:
// 2 MB", or cells joined with " | " when the table had no header) become a
// Markdown table; every other paragraph is one block of its own. Blocks are
// separated by blank lines, and reading a file rebuilds each paragraph's
// breadcrumb from the heading levels.
//
// The writer checks every block by reading it back. Where the Markdown form
// would not reproduce the live crawl's paragraph exactly (a breadcrumb that
// does not follow the headings, a text with blank lines or surrounding
// spaces, a text that would read as a heading or table), it writes an HTML
// comment instead, which the reader understands:
//
//	<!-- breadcrumb: "Guide > Install" -->   overrides the next paragraph's breadcrumb
//	<!-- paragraph: {"text":"..."} -->        one paragraph, exactly
//
// A plain paragraph whose first line starts with '#', '|', '\' or "<!--" is
// escaped with a leading backslash. Other HTML comments in a block (a note
// added by hand) are ignored.

const (
	crawlMDFrontMatter      = "---"
	crawlMDBreadcrumbMarker = "<!-- breadcrumb: "
	crawlMDParagraphMarker  = "<!-- paragraph: "
	crawlMDMarkerEnd        = "-->"
	// crawlCacheMaxFileBytes bounds a cache file ReindexCrawlData reads.
	crawlCacheMaxFileBytes = 32 << 20
	crawlCacheExt          = ".md"
)

// crawlMDParagraph is the JSON form of an exactly-encoded paragraph.
type crawlMDParagraph struct {
	Text    string `json:"text"`
	Heading bool   `json:"heading,omitempty"`
	// Level is a heading's Markdown level (1..6).
	Level int `json:"level,omitempty"`
}

// crawlMDHeadings rebuilds breadcrumbs from heading levels, the same way for
// the writer (to check its blocks) and the reader.
type crawlMDHeadings struct {
	levels []int
	texts  []string
}

// heading records a heading of the given level and returns its breadcrumb.
func (h *crawlMDHeadings) heading(level int, text string) string {
	i := len(h.levels)
	for i > 0 && h.levels[i-1] >= level {
		i--
	}
	h.levels = append(h.levels[:i], level)
	h.texts = append(h.texts[:i], text)
	return h.breadcrumb()
}

// breadcrumb returns the breadcrumb of a paragraph at the current position.
func (h *crawlMDHeadings) breadcrumb() string {
	return strings.Join(h.texts, " > ")
}

func (h *crawlMDHeadings) clone() crawlMDHeadings {
	return crawlMDHeadings{levels: slices.Clone(h.levels), texts: slices.Clone(h.texts)}
}

// crawlMDHeadingLevel is the Markdown level written for a heading with the
// given breadcrumb: its depth, clamped to 1..6.
func crawlMDHeadingLevel(breadcrumb string) int {
	n := 1
	if breadcrumb != "" {
		n = strings.Count(breadcrumb, " > ") + 1
	}
	return min(max(n, 1), 6)
}

// renderCrawlMarkdown returns the cache file content for a page.
func renderCrawlMarkdown(pageURL string, paras []Paragraph) []byte {
	var b bytes.Buffer
	b.WriteString(crawlMDFrontMatter + "\n")
	b.WriteString("url: " + pageURL + "\n")
	b.WriteString(crawlMDFrontMatter + "\n")
	var hs crawlMDHeadings
	for i := 0; i < len(paras); {
		lines, n := crawlMDBlock(&hs, paras[i:])
		b.WriteString("\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		i += n
	}
	return b.Bytes()
}

// crawlMDBlock chooses the Markdown block for the paragraphs at the start of
// paras: it returns the block's lines and how many paragraphs it holds, and
// advances hs past them. Each candidate is read back with a copy of hs and
// used only if that reproduces the paragraphs exactly; the exact marker form
// always does.
func crawlMDBlock(hs *crawlMDHeadings, paras []Paragraph) ([]string, int) {
	try := func(lines []string, want []Paragraph) bool {
		for _, l := range lines {
			// A blank line would split the block; "\r\n" is read as "\n".
			if strings.TrimSpace(l) == "" || strings.Contains(l, "\r") {
				return false
			}
		}
		h := hs.clone()
		got, err := crawlMDParseBlock(&h, lines)
		if err != nil || !slices.Equal(got, want) {
			return false
		}
		*hs = h
		return true
	}
	// A run of list items or of table rows as one block.
	if n := crawlMDListRun(paras); n >= 2 {
		lines := make([]string, n)
		for i, p := range paras[:n] {
			lines[i] = p.Text
		}
		if try(lines, paras[:n]) {
			return lines, n
		}
	}
	if lines, n := crawlMDTable(paras); n >= 1 && try(lines, paras[:n]) {
		return lines, n
	}
	p := paras[0]
	level := crawlMDHeadingLevel(p.Breadcrumb)
	var plain string
	if p.Heading {
		// The level of the breadcrumb's depth usually rebuilds it; a heading
		// text containing " > " may need another one.
		for l := range 7 {
			if l == 0 {
				l = level
			}
			h := hs.clone()
			if h.heading(l, p.Text) == p.Breadcrumb {
				level = l
				break
			}
		}
		plain = strings.Repeat("#", level) + " " + p.Text
	} else {
		plain = p.Text
		if crawlMDNeedsEscape(p.Text) {
			plain = `\` + plain
		}
	}
	crumb := crawlMDBreadcrumbMarker + crawlMDCommentJSON(p.Breadcrumb) + " " + crawlMDMarkerEnd
	want := paras[:1]
	for _, lines := range [][]string{
		strings.Split(plain, "\n"),
		append([]string{crumb}, strings.Split(plain, "\n")...),
	} {
		if try(lines, want) {
			return lines, 1
		}
	}
	mp := crawlMDParagraph{Text: p.Text, Heading: p.Heading}
	if p.Heading {
		mp.Level = level
	}
	exact := crawlMDParagraphMarker + crawlMDCommentJSON(mp) + " " + crawlMDMarkerEnd
	for _, lines := range [][]string{{exact}, {crumb, exact}} {
		if try(lines, want) {
			return lines, 1
		}
	}
	// Unreachable for valid UTF-8; for invalid UTF-8, JSON replaces the bad
	// bytes and the page is kept as closely as possible.
	lines := []string{crumb, exact}
	_, _ = crawlMDParseBlock(hs, lines)
	return lines, 1
}

// crawlMDListItem reports whether line starts like a Markdown list item:
// "- " or digits followed by ". ".
func crawlMDListItem(line string) bool {
	if strings.HasPrefix(line, "- ") {
		return true
	}
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i <= 9 && strings.HasPrefix(line[i:], ". ")
}

// crawlMDListRun returns the number of leading paragraphs that are one-line
// list items under the same breadcrumb.
func crawlMDListRun(paras []Paragraph) int {
	n := 0
	for _, p := range paras {
		if p.Heading || p.Breadcrumb != paras[0].Breadcrumb || strings.Contains(p.Text, "\n") || !crawlMDListItem(p.Text) {
			break
		}
		n++
	}
	return n
}

// crawlMDRowCells splits a table-row paragraph into labels and values:
// "Name: a | Size: 2" gives [Name Size], [a 2]; "a | b" gives no labels.
func crawlMDRowCells(text string) (labels, values []string, ok bool) {
	if strings.Contains(text, "\n") || !strings.Contains(text, " | ") {
		return nil, nil, false
	}
	cells := strings.Split(text, " | ")
	labelled := true
	for _, c := range cells {
		l, v, found := strings.Cut(c, ": ")
		if !found || l == "" {
			labelled = false
		}
		labels = append(labels, l)
		values = append(values, v)
	}
	if !labelled {
		return nil, cells, true
	}
	return labels, values, true
}

// crawlMDTable renders the leading paragraphs that are rows of one table
// (same breadcrumb, same labels or the same number of unlabelled cells) as
// a Markdown table; n is 0 when the first paragraph is not a row.
func crawlMDTable(paras []Paragraph) (lines []string, n int) {
	if paras[0].Heading {
		return nil, 0
	}
	labels, _, ok := crawlMDRowCells(paras[0].Text)
	if !ok {
		return nil, 0
	}
	ncol := len(labels)
	if labels == nil {
		_, v, _ := crawlMDRowCells(paras[0].Text)
		ncol = len(v)
	}
	row := func(cells []string) string {
		return "| " + strings.Join(cells, " | ") + " |"
	}
	header := labels
	if header == nil {
		header = make([]string, ncol)
	}
	lines = append(lines, row(header), "|"+strings.Repeat(" --- |", ncol))
	for _, p := range paras {
		if p.Heading || p.Breadcrumb != paras[0].Breadcrumb {
			break
		}
		l, v, ok := crawlMDRowCells(p.Text)
		if !ok || len(v) != ncol || !slices.Equal(l, labels) {
			break
		}
		lines = append(lines, row(v))
		n++
	}
	return lines, n
}

// crawlMDTableSplit splits a Markdown table line into trimmed cells.
func crawlMDTableSplit(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells
}

// crawlMDTableDelimiter reports whether line is a table's delimiter row.
func crawlMDTableDelimiter(line string) bool {
	if !strings.HasPrefix(strings.TrimSpace(line), "|") {
		return false
	}
	for _, c := range crawlMDTableSplit(line) {
		c = strings.Trim(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// crawlMDCommentJSON returns v as one line of JSON that cannot end an HTML
// comment early: "-->" only occurs inside JSON strings, where it is written
// as "--\u003e".
func crawlMDCommentJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and a struct of strings: cannot fail
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "-->", `--\u003e`)
}

// crawlMDNeedsEscape reports whether a plain paragraph's first line would be
// read as a heading, table, marker or escape.
func crawlMDNeedsEscape(text string) bool {
	for _, p := range []string{"#", "|", `\`, "<!--"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// crawlMDHeadingLine parses "#... text" into level and text.
func crawlMDHeadingLine(line string) (int, string, bool) {
	level := 0
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level >= len(line) || (line[level] != ' ' && line[level] != '\t') {
		return 0, "", false
	}
	text := strings.TrimSpace(line[level:])
	// An optional closing sequence of '#'s after a space (CommonMark).
	if t := strings.TrimRight(text, "#"); t != text && (t == "" || t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		text = strings.TrimSpace(t)
	}
	if text == "" {
		return 0, "", false
	}
	return level, text, true
}

// crawlMDParseBlock turns one block (its lines, no blank line among them)
// into paragraphs, advancing hs past its headings.
func crawlMDParseBlock(hs *crawlMDHeadings, block []string) ([]Paragraph, error) {
	var (
		out   []Paragraph
		crumb *string
	)
	add := func(p Paragraph) {
		if crumb != nil {
			p.Breadcrumb = *crumb
			crumb = nil
		}
		out = append(out, p)
	}
	for len(block) > 0 {
		first := block[0]
		switch {
		case strings.HasPrefix(first, crawlMDBreadcrumbMarker):
			var c string
			if err := crawlMDMarker(first, crawlMDBreadcrumbMarker, &c); err != nil {
				return nil, err
			}
			crumb = &c
			block = block[1:]
			continue
		case strings.HasPrefix(first, crawlMDParagraphMarker):
			var mp crawlMDParagraph
			if err := crawlMDMarker(first, crawlMDParagraphMarker, &mp); err != nil {
				return nil, err
			}
			if mp.Text == "" {
				return nil, fmt.Errorf("%w: empty paragraph marker", ErrCrawlCacheFormat)
			}
			p := Paragraph{Text: mp.Text, Heading: mp.Heading, Breadcrumb: hs.breadcrumb()}
			if mp.Heading {
				level := mp.Level
				if level < 1 || level > 6 {
					level = 1
				}
				p.Breadcrumb = hs.heading(level, mp.Text)
			}
			add(p)
			block = block[1:]
			continue
		case strings.HasPrefix(first, "<!--") && strings.HasSuffix(strings.TrimSpace(first), "-->"):
			block = block[1:] // a comment someone added
			continue
		}
		if level, text, ok := crawlMDHeadingLine(first); ok {
			add(Paragraph{Text: text, Heading: true, Breadcrumb: hs.heading(level, text)})
			block = block[1:]
			continue
		}
		// A Markdown table: header, delimiter, rows.
		if len(block) >= 2 && strings.HasPrefix(strings.TrimSpace(first), "|") && crawlMDTableDelimiter(block[1]) {
			header := crawlMDTableSplit(first)
			labelled := slices.ContainsFunc(header, func(h string) bool { return h != "" })
			rows := block[2:]
			block = nil
			for i, r := range rows {
				if !strings.HasPrefix(strings.TrimSpace(r), "|") {
					block = rows[i:] // text after the table
					break
				}
				cells := crawlMDTableSplit(r)
				if labelled {
					for j := range cells {
						h := ""
						if j < len(header) {
							h = header[j]
						}
						cells[j] = h + ": " + cells[j]
					}
				}
				if text := strings.Join(cells, " | "); strings.TrimSpace(text) != "" {
					add(Paragraph{Text: text, Breadcrumb: hs.breadcrumb()})
				}
			}
			continue
		}
		// A list: every line an item.
		if len(block) >= 2 && !slices.ContainsFunc(block, func(l string) bool { return !crawlMDListItem(l) }) {
			for _, l := range block {
				add(Paragraph{Text: l, Breadcrumb: hs.breadcrumb()})
			}
			block = nil
			continue
		}
		text := strings.TrimPrefix(strings.Join(block, "\n"), `\`)
		block = nil
		if strings.TrimSpace(text) != "" {
			add(Paragraph{Text: text, Breadcrumb: hs.breadcrumb()})
		}
	}
	if crumb != nil {
		return nil, fmt.Errorf("%w: breadcrumb marker without a paragraph", ErrCrawlCacheFormat)
	}
	return out, nil
}

// parseCrawlMarkdown reads a cache file written by renderCrawlMarkdown (or
// edited by hand) and returns the page URL and its paragraphs. Errors wrap
// ErrCrawlCacheFormat.
func parseCrawlMarkdown(data []byte) (string, []Paragraph, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if strings.TrimSpace(lines[0]) != crawlMDFrontMatter {
		return "", nil, fmt.Errorf("%w: no front matter (first line must be %q)", ErrCrawlCacheFormat, crawlMDFrontMatter)
	}
	var pageURL string
	end := -1
	for i := 1; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == crawlMDFrontMatter {
			end = i
			break
		}
		if key, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(key) == "url" {
			pageURL = strings.TrimSpace(value)
		}
	}
	if end < 0 {
		return "", nil, fmt.Errorf("%w: front matter is not closed by %q", ErrCrawlCacheFormat, crawlMDFrontMatter)
	}
	if pageURL == "" {
		return "", nil, fmt.Errorf("%w: front matter has no url", ErrCrawlCacheFormat)
	}
	if u, err := url.Parse(pageURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("%w: url %q is not an absolute http(s) URL", ErrCrawlCacheFormat, pageURL)
	}

	var (
		paras []Paragraph
		hs    crawlMDHeadings
		block []string
		start int
	)
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		ps, err := crawlMDParseBlock(&hs, block)
		if err != nil {
			return fmt.Errorf("line %d: %w", start+1, err)
		}
		paras = append(paras, ps...)
		block = block[:0]
		return nil
	}
	for i := end + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			if err := flush(); err != nil {
				return "", nil, err
			}
			continue
		}
		if len(block) == 0 {
			start = i
		}
		block = append(block, lines[i])
	}
	if err := flush(); err != nil {
		return "", nil, err
	}
	return pageURL, paras, nil
}

// crawlMDMarker decodes the JSON value of a marker line into v.
func crawlMDMarker(line, prefix string, v any) error {
	name := strings.TrimSpace(prefix)
	body, ok := strings.CutSuffix(strings.TrimSpace(strings.TrimPrefix(line, prefix)), crawlMDMarkerEnd)
	if !ok {
		return fmt.Errorf("%w: marker %q is not closed by %q", ErrCrawlCacheFormat, name, crawlMDMarkerEnd)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return fmt.Errorf("%w: marker %q: %w", ErrCrawlCacheFormat, name, err)
	}
	return nil
}
