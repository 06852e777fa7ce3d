package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"go.yaml.in/yaml/v3"
)

// maxTextFileBytes bounds the Markdown and plain text files the readers
// accept (see ErrDocumentTooLarge).
const maxTextFileBytes = 64 << 20

// markdownParser is the CommonMark parser with the GitHub table,
// strikethrough and autolink extensions. A goldmark parser is safe for
// concurrent use.
var markdownParser = goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Linkify),
	goldmark.WithParserOptions(mdTableExtension{}.options()...)).Parser()

// extractMarkdown returns the paragraphs of the Markdown source src.
//
// Headings (ATX and setext) become Heading paragraphs and build the
// breadcrumb, a heading replacing those of its level and below. A front
// matter block (YAML between "---" lines, TOML between "+++" lines) is left
// out of the text; its title, when it has one, becomes the top heading
// (level 0, above every "#"), unless the first heading already says the
// same. Paragraphs are joined onto one line; list items are one paragraph
// each with their marker ("- ", "1. "), the item's own paragraphs kept
// together, nested items following as their own paragraphs; tables give one
// paragraph per body row with the header cells as labels ("Name: Alice |
// Age: 42", as HTMLToStructuredText does); fenced and indented code blocks
// are kept verbatim (lines and indentation) as one paragraph each; block
// quotes are read as their content; HTML blocks are read through
// HTMLToStructuredText; links and images are reduced to their text;
// emphasis and code spans to their content; character references and
// backslash escapes are resolved.
func extractMarkdown(src []byte) ([]Paragraph, error) {
	if len(src) > maxTextFileBytes {
		return nil, fmt.Errorf("%w: %d bytes of Markdown (limit %d)", ErrDocumentTooLarge, len(src), maxTextFileBytes)
	}
	// CommonMark replaces NUL with U+FFFD; goldmark does so in inline text
	// but keeps it in code blocks.
	if src = decodeText(src); bytes.IndexByte(src, 0) >= 0 {
		src = bytes.ReplaceAll(src, []byte{0}, []byte("\uFFFD"))
	}
	if err := markdownCheckNesting(src); err != nil {
		return nil, err
	}
	title, body := markdownFrontMatter(src)
	pc := parser.NewContext()
	doc := markdownParser.Parse(text.NewReader(body), parser.WithContext(pc))
	if n, _ := pc.Get(mdTableCellsKey).(*int); n != nil && *n > mdMaxTableCells {
		return nil, fmt.Errorf("%w: tables of more than %d cells (columns times rows)", ErrDocumentTooLarge, mdMaxTableCells)
	}
	m := &mdReader{src: body}
	m.tw = bufio.NewWriter(&m.tbuf)
	if title != "" {
		first := markdownFirstHeading(doc, body)
		if !strings.EqualFold(first, title) {
			m.add(Paragraph{Text: title, Heading: true, Breadcrumb: m.trail.push(0, title)})
		}
	}
	for n := doc.FirstChild(); n != nil && m.err == nil; n = n.NextSibling() {
		m.block(n)
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.out, nil
}

// markdownFrontMatter splits a leading front matter block off src and
// returns its title ("" when it has none) and the rest. Without a closed
// front matter block src is returned whole.
func markdownFrontMatter(src []byte) (string, []byte) {
	var fence string
	switch {
	case bytes.HasPrefix(src, []byte("---\n")), bytes.HasPrefix(src, []byte("---\r\n")):
		fence = "---"
	case bytes.HasPrefix(src, []byte("+++\n")), bytes.HasPrefix(src, []byte("+++\r\n")):
		fence = "+++"
	default:
		return "", src
	}
	rest := src[bytes.IndexByte(src, '\n')+1:]
	for off := 0; off < len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		next := len(rest)
		if end >= 0 {
			line = rest[off : off+end]
			next = off + end + 1
		}
		l := string(bytes.TrimRight(line, " \t\r"))
		if l == fence || (fence == "---" && l == "...") {
			return frontMatterTitle(rest[:off], fence == "+++"), rest[next:]
		}
		off = next
	}
	return "", src
}

// frontMatterTitle returns the title key of a YAML (or TOML) front matter
// block, "" when there is none or it does not parse.
func frontMatterTitle(fm []byte, toml bool) string {
	if toml {
		for _, line := range strings.Split(string(fm), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(k) != "title" {
				continue
			}
			v = strings.TrimSpace(v)
			if s, err := strconv.Unquote(v); err == nil {
				return NormalizeSpaces(s)
			}
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				return NormalizeSpaces(v[1 : len(v)-1])
			}
			return ""
		}
		return ""
	}
	var meta struct {
		Title any `yaml:"title"`
	}
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return ""
	}
	if s, ok := meta.Title.(string); ok {
		return NormalizeSpaces(s)
	}
	return ""
}

// markdownFirstHeading returns the text of the document's first heading.
func markdownFirstHeading(doc ast.Node, src []byte) string {
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == ast.KindHeading {
			m := &mdReader{src: src}
			m.tw = bufio.NewWriter(&m.tbuf)
			return NormalizeSpaces(m.inline(n))
		}
	}
	return ""
}

// mdReader turns a goldmark tree into paragraphs.
type mdReader struct {
	src   []byte
	out   []Paragraph
	trail headingTrail
	sb    strings.Builder
	tbuf  bytes.Buffer
	tw    *bufio.Writer

	tableText int   // bytes of table row text given so far
	err       error // the first limit passed
}

func (m *mdReader) add(p Paragraph) {
	if p.Text != "" {
		m.out = append(m.out, p)
	}
}

func (m *mdReader) para(s string) {
	m.add(Paragraph{Text: NormalizeSpaces(s), Breadcrumb: m.trail.crumb()})
}

// block reads one block node.
func (m *mdReader) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		t := NormalizeSpaces(m.inline(n))
		if t != "" {
			m.add(Paragraph{Text: t, Heading: true, Breadcrumb: m.trail.push(n.Level, t)})
		}
	case *ast.Paragraph, *ast.TextBlock:
		m.para(m.inline(n))
	case *ast.List:
		m.list(n)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		m.code(n)
	case *ast.Blockquote, *ast.Document:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			m.block(c)
		}
	case *ast.HTMLBlock:
		m.htmlBlock(n)
	case *east.Table:
		m.table(n)
	default:
		// Thematic breaks, link reference definitions: no text.
		if n.Type() == ast.TypeBlock {
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if c.Type() == ast.TypeBlock {
					m.block(c)
				}
			}
		}
	}
}

// list reads a list: one paragraph per item with its marker, the item's
// text blocks joined; nested lists and other blocks follow the item.
func (m *mdReader) list(l *ast.List) {
	num := l.Start
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		marker := "- "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		var parts []string
		var rest []ast.Node
		for c := it.FirstChild(); c != nil; c = c.NextSibling() {
			switch c.Kind() {
			case ast.KindParagraph, ast.KindTextBlock:
				if len(rest) == 0 {
					parts = append(parts, m.inline(c))
					continue
				}
			}
			rest = append(rest, c)
		}
		if t := NormalizeSpaces(strings.Join(parts, " ")); t != "" {
			m.add(Paragraph{Text: marker + t, Breadcrumb: m.trail.crumb()})
		}
		for _, c := range rest {
			m.block(c)
		}
	}
}

// code keeps a code block's lines verbatim as one paragraph.
func (m *mdReader) code(n ast.Node) {
	lines := n.Lines()
	var sb strings.Builder
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		sb.Write(seg.Value(m.src))
	}
	t := strings.TrimRight(sb.String(), " \t\r\n")
	t = strings.TrimLeft(t, "\r\n")
	if strings.TrimSpace(t) != "" {
		m.add(Paragraph{Text: t, Breadcrumb: m.trail.crumb()})
	}
}

// htmlBlock reads raw HTML through the HTML extractor.
func (m *mdReader) htmlBlock(n *ast.HTMLBlock) {
	var sb strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		sb.Write(seg.Value(m.src))
	}
	if n.HasClosure() {
		sb.Write(n.ClosureLine.Value(m.src))
	}
	paras, err := HTMLToStructuredText(strings.NewReader(sb.String()))
	if err != nil {
		// Only a bound of the HTML reader (a token past 16 MiB): a
		// strings.Reader does not fail.
		if m.err == nil {
			m.err = err
		}
		return
	}
	for _, p := range paras {
		m.para(p.Text)
	}
}

// table reads a GFM table: the header row labels the body rows' cells.
func (m *mdReader) table(t *east.Table) {
	var rows [][]string
	header := false
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, m.inline(c))
		}
		if r.Kind() == east.KindTableHeader {
			header = len(rows) == 0
		}
		rows = append(rows, cells)
	}
	texts, err := tableRowTextsMax(rows, header, &m.tableText)
	if err != nil {
		m.err = err
		return
	}
	for _, t := range texts {
		m.add(Paragraph{Text: t, Breadcrumb: m.trail.crumb()})
	}
}

// inline returns the text of n's inline content: links and images reduced
// to their text, soft line breaks as spaces.
func (m *mdReader) inline(n ast.Node) string {
	m.sb.Reset()
	m.inlineTo(n)
	return m.sb.String()
}

func (m *mdReader) inlineTo(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(m.src)
			if c.IsRaw() {
				m.sb.Write(v)
			} else {
				m.tbuf.Reset()
				ghtml.DefaultWriter.Write(m.tw, v)
				m.tw.Flush()
				m.sb.WriteString(html.UnescapeString(m.tbuf.String()))
			}
			if c.SoftLineBreak() || c.HardLineBreak() {
				m.sb.WriteByte(' ')
			}
		case *ast.String:
			m.sb.Write(c.Value)
		case *ast.AutoLink:
			m.sb.Write(c.Label(m.src))
		case *ast.RawHTML:
			// Inline tags carry no text.
		default:
			m.inlineTo(c)
		}
	}
}
