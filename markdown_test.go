package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mdTexts renders paragraphs as "H|crumb|text" or "P|crumb|text" lines.
func mdTexts(paras []Paragraph) string {
	var sb strings.Builder
	for _, p := range paras {
		k := "P"
		if p.Heading {
			k = "H"
		}
		sb.WriteString(k + "|" + p.Breadcrumb + "|" + p.Text + "\n")
	}
	return sb.String()
}

func TestExtractMarkdown(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"toml title above the headings", "+++\ntitle = \"Field Manual\"\ndraft = true\n+++\n\n# Setup\n\nText.\n",
			"H|Field Manual|Field Manual\nH|Field Manual > Setup|Setup\nP|Field Manual > Setup|Text.\n"},
		{"yaml title equal to the first heading is not repeated", "---\ntitle: 'Setup'\n---\nSetup\n=====\n\nText.\n",
			"H|Setup|Setup\nP|Setup|Text.\n"},
		{"no front matter: a thematic break is not one", "Intro\n\n---\n\nAfter.\n", "P||Intro\nP||After.\n"},
		{"list item paragraphs together, nested items after",
			"- first line\n  wrapped\n\n  second paragraph\n  - nested\n- last\n",
			"P||- first line wrapped second paragraph\nP||- nested\nP||- last\n"},
		{"ordered list keeps its start", "3. three\n4. four\n", "P||3. three\nP||4. four\n"},
		{"code kept verbatim", "Run:\n\n```sh\nif x; then\n    echo  two  spaces\nfi\n```\n",
			"P||Run:\nP||if x; then\n    echo  two  spaces\nfi\n"},
		{"links, images, emphasis, escapes and entities reduced to text",
			"See [the *docs*](http://x.example) ![logo](l.png) and <https://y.example> \\*not em\\* &copy; &#65;.\n",
			"P||See the docs logo and https://y.example *not em* © A.\n"},
		{"table with header labels", "| Name | Age |\n|---|---|\n| Alice | 42 |\n| Bob | |\n",
			"P||Name: Alice | Age: 42\nP||Name: Bob\n"},
		{"html block through the HTML extractor", "<div>\n<p>Inside <b>html</b></p>\n</div>\n\nAfter.\n",
			"P||Inside html\nP||After.\n"},
		{"heading levels replace their level and below", "# A\n## B\n### C\n## D\ntext\n",
			"H|A|A\nH|A > B|B\nH|A > B > C|C\nH|A > D|D\nP|A > D|text\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			paras, err := extractMarkdown([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := mdTexts(paras); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// checkParagraphs fails on the invariants every reader keeps: no empty or
// untrimmed paragraph text (code blocks excepted), a heading's breadcrumb
// ends with its own text, no NUL (PostgreSQL refuses it in text and JSON).
func checkParagraphs(t *testing.T, paras []Paragraph) {
	t.Helper()
	for i, p := range paras {
		if strings.TrimSpace(p.Text) == "" {
			t.Fatalf("paragraph %d is empty: %+v", i, p)
		}
		if p.Heading && !strings.HasSuffix(p.Breadcrumb, p.Text) {
			t.Fatalf("heading %d %q has breadcrumb %q", i, p.Text, p.Breadcrumb)
		}
		if strings.ContainsRune(p.Text+p.Breadcrumb, 0) {
			t.Fatalf("paragraph %d holds a NUL: %+v", i, p)
		}
	}
}

func FuzzExtractMarkdown(f *testing.F) {
	for _, s := range []string{"# A\n\ntext", "---\ntitle: x\n---\n", "+++\ntitle='y'\n+++\n- a\n  - b\n", "| a |\n|---|\n| b |", "```\ncode\n```", "<div>x</div>", "> q\n> > r",
		"> 1. * + - x\n\n|a|b|c|\n|:-|-:|-|\n|d|\n|e|f|g|h|\n", "- - - x\n1) 2. > y\n"} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "formats", "guide.md")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		paras, err := extractMarkdown(src)
		if errors.Is(err, ErrDocumentTooLarge) {
			return // nesting or table cells past the limits
		}
		if err != nil {
			t.Fatal(err)
		}
		checkParagraphs(t, paras)
	})
}

// TestMarkdownHTMLBlockBound checks that a Markdown file whose HTML block
// passes a bound of the HTML reader is refused, not read without the block.
func TestMarkdownHTMLBlockBound(t *testing.T) {
	src := "# Title\n\n<div>" + strings.Repeat("x", htmlMaxToken+10) + "</div>\n\nafter\n"
	if _, err := extractMarkdown([]byte(src)); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("err = %v, want ErrDocumentTooLarge", err)
	}
}
