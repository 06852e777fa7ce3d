package engine

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdMaxTableCells bounds the cells of the GFM tables of one Markdown
// document, counted as the table's columns times its rows: goldmark pads
// every row to the delimiter row's width with a node per cell (about 225
// bytes), so a 19 KB file of a 4,000-column header and 1,000 one-cell rows
// allocated 900 MB. A real table of this many cells takes megabytes of
// Markdown.
const mdMaxTableCells = 1_000_000

// mdTableCellsKey holds, in a parse's context, the cells counted so far
// (an *int).
var mdTableCellsKey = parser.NewContextKey()

// mdTableGuard is goldmark's table paragraph transformer, run only while
// the document's tables stay within mdMaxTableCells; past it the count is
// recorded and the paragraph is left alone (extractMarkdown then refuses
// the document).
type mdTableGuard struct{ inner parser.ParagraphTransformer }

// mdTableExtension is extension.Table for the parser only, guarded.
type mdTableExtension struct{}

func (mdTableExtension) options() []parser.Option {
	return []parser.Option{
		parser.WithParagraphTransformers(util.Prioritized(mdTableGuard{extension.NewTableParagraphTransformer()}, 200)),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	}
}

func (g mdTableGuard) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := bytes.TrimSpace(seg.Value(src))
		if len(line) == 0 || bytes.IndexByte(line, '-') < 0 || len(bytes.Trim(line, "|:- \t")) > 0 {
			continue
		}
		// An upper bound of the cells goldmark would make from the first
		// line that may be a delimiter row: its columns times the header
		// and body rows.
		cols := bytes.Count(bytes.Trim(line, "|"), []byte("|")) + 1
		count, _ := pc.Get(mdTableCellsKey).(*int)
		if count == nil {
			count = new(int)
			pc.Set(mdTableCellsKey, count)
		}
		if *count > mdMaxTableCells {
			return
		}
		*count += cols * (lines.Len() - i + 1)
		if *count > mdMaxTableCells {
			return
		}
		break
	}
	g.inner.Transform(node, reader, pc)
}
