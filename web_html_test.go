package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// webUpdateFlag is the -update flag that rewrites golden files. Another
// area of the package may define a flag of that name in a file initialised
// earlier; it is shared then instead of being defined twice.
var webUpdateFlag = func() *flag.Flag {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
	return flag.Lookup("update")
}()

// htmlUpdateRequested reports whether -update was given.
func htmlUpdateRequested() bool { return webUpdateFlag.Value.String() == "true" }

func TestHTMLToStructuredTextGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "html", "*.html"))
	if err != nil || len(files) < 6 {
		t.Fatalf("fixtures: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".html")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			paras, err := HTMLToStructuredText(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			htmlCheckInvariants(t, paras)
			got, err := json.MarshalIndent(paras, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "html", name+".golden.json")
			if htmlUpdateRequested() {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestHTMLToStructuredTextGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("paragraphs of %s differ from %s (rerun with -update after checking):\n%s", file, golden, htmlFirstDiff(string(want), string(got)))
			}
		})
	}
}

// htmlFirstDiff shows the first differing line of two texts.
func htmlFirstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl
		}
	}
	return "(no line differs)"
}

// htmlCheckInvariants checks what must hold for any input.
func htmlCheckInvariants(t testing.TB, paras []Paragraph) {
	t.Helper()
	for i, p := range paras {
		switch {
		case p.Text == "":
			t.Fatalf("paragraph %d is empty", i)
		case strings.TrimSpace(p.Text) != p.Text:
			t.Fatalf("paragraph %d has surrounding space: %q", i, p.Text)
		case strings.Contains(p.Text, "  "):
			t.Fatalf("paragraph %d has a double space: %q", i, p.Text)
		case strings.ContainsAny(p.Text, "\n\t\r"):
			t.Fatalf("paragraph %d has a line break or tab: %q", i, p.Text)
		case !utf8.ValidString(p.Text):
			t.Fatalf("paragraph %d is not valid UTF-8: %q", i, p.Text)
		case p.PageNum != 0:
			t.Fatalf("paragraph %d has PageNum %d", i, p.PageNum)
		case p.Heading && !strings.HasSuffix(p.Breadcrumb, p.Text):
			t.Fatalf("heading %d %q: breadcrumb %q does not end with it", i, p.Text, p.Breadcrumb)
		}
	}
}

// htmlRender renders paragraphs compactly: "# " marks headings, "[...]"
// the breadcrumb when it differs from the previous paragraph's.
func htmlRender(paras []Paragraph) string {
	var sb strings.Builder
	crumb := ""
	for _, p := range paras {
		if p.Heading {
			sb.WriteString("# ")
		}
		sb.WriteString(p.Text)
		if p.Breadcrumb != crumb {
			sb.WriteString(" [" + p.Breadcrumb + "]")
			crumb = p.Breadcrumb
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func TestHTMLToStructuredTextCases(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"inline elements keep words whole",
			`<p>Hel<b>lo</b> w<i>or</i><a href="#">ld</a>, <code>x</code>!</p>`,
			"Hello world, x!\n"},
		{"blocks separate paragraphs",
			`<div>one<div>two</div>three</div><section>four</section>`,
			"one\ntwo\nthree\nfour\n"},
		{"breadcrumb trail resets deeper levels",
			`<h1>A</h1><p>a</p><h2>B</h2><h3>C</h3><p>c</p><h2>D</h2><p>d</p><h1>E</h1><p>e</p>`,
			"# A [A]\na\n# B [A > B]\n# C [A > B > C]\nc\n# D [A > D]\nd\n# E [E]\ne\n"},
		{"skipped heading levels",
			`<h1>A</h1><h3>C</h3><p>x</p><h2>B</h2><p>y</p>`,
			"# A [A]\n# C [A > C]\nx\n# B [A > B]\ny\n"},
		{"text before the first heading has no breadcrumb",
			`<p>intro</p><h2>Later</h2>`,
			"intro\n# Later [Later]\n"},
		{"empty heading is no paragraph",
			`<h2><a id="x"></a></h2><p>t</p>`,
			"t\n"},
		{"unordered, ordered and nested lists",
			`<ul><li>a<li>b<ol><li>b1<li>b2</ol><li>c</ul><ol start="7"><li>seven<li>eight</ol>`,
			"- a\n- b\n1. b1\n2. b2\n- c\n7. seven\n8. eight\n"},
		{"list item with paragraphs",
			`<ul><li><p>first</p><p>more</p></li><li></li><li>last</li></ul><p>after</p>`,
			"- first\nmore\n- last\nafter\n"},
		{"implied end tags",
			`<p>one<p>two<ul><li>x<li>y</ul><dl><dt>t<dd>d</dl>`,
			"one\ntwo\n- x\n- y\nt\nd\n"},
		{"br",
			`<p>a<br>b<br/><br>c</p><div>d<br><br><br><br>e</div>`,
			"a b\nc\nd\ne\n"},
		{"whitespace and entities",
			"<p>  a \n\t b&nbsp;&amp;&#x20AC;&lt;\u2003c  </p>",
			"a b &€< c\n"},
		{"data table with header labels",
			`<table><tr><th>Name</th><th>Age</th></tr><tr><td>Alice</td><td>42</td></tr><tr><td>Bob</td><td></td></tr></table>`,
			"Name: Alice | Age: 42\nName: Bob\n"},
		{"data table without header",
			`<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>`,
			"a | b\nc | d\n"},
		{"row headers",
			`<table><tr><th>Population</th><td>5M</td><td>2024</td></tr><tr><th>Area</th><td>10 km²</td></tr></table>`,
			"Population: 5M | 2024\nArea: 10 km²\n"},
		{"thead with colspan and caption",
			`<table><caption>Sizes</caption><thead><tr><td>Item</td><td colspan=2>Size</td></tr></thead><tr><td>box</td><td>1</td><td>2</td></tr></table>`,
			"Sizes\nItem: box | Size: 1 | Size: 2\n"},
		{"header only table",
			`<table><tr><th>A</th><th>B</th></tr></table>`,
			"A | B\n"},
		{"navigation table dropped",
			`<table><tr><td><a href="/">Home</a> | <a href="/a">About</a></td><td><a href="/c">Contact</a></td></tr></table><p>body</p>`,
			"body\n"},
		{"presentation table is content, link-only cells dropped",
			`<table role="presentation"><tr><td><a href="/1">One</a><br><a href="/2">Two</a></td><td><p>Main text.</p><p>More.</p></td></tr></table>`,
			"Main text.\nMore.\n"},
		{"nested tables make the outer one layout",
			`<table><tr><td>Menu</td><td><table><tr><th>K</th><th>V</th></tr><tr><td>k</td><td>v</td></tr></table></td></tr></table>`,
			"Menu\nK: k | V: v\n"},
		{"single-column table is content",
			`<table><tr><td><h2>Title</h2></td></tr><tr><td>Body text</td></tr></table>`,
			"# Title [Title]\nBody text\n"},
		{"main preferred",
			`<header><h1>Site</h1></header><nav><p>menu</p></nav><main><h1>Page</h1><p>text</p><nav>toc</nav></main><footer>f</footer>`,
			"# Page [Page]\ntext\n"},
		{"role main preferred",
			`<div><p>chrome</p></div><div role="main"><p>content</p></div>`,
			"content\n"},
		{"article when no main",
			`<div>header stuff</div><article><h2>Post</h2><p>body</p></article><div>sidebar</div>`,
			"# Post [Post]\nbody\n"},
		{"fallback drops page header, footer, aside, nav",
			`<header>banner</header><div role="navigation">nav</div><aside>ads</aside><h1>T</h1><section><header><h2>S</h2></header><p>s</p></section><footer>foot</footer>`,
			"# T [T]\n# S [T > S]\ns\n"},
		{"empty main falls back",
			`<main></main><p>outside</p>`,
			"outside\n"},
		{"hidden elements",
			`<p>a<span hidden>X</span>b</p><p aria-hidden="true">X</p><p style="DISPLAY:NONE">X</p><p style="visibility: hidden">X</p><p class="foo sr-only">X</p><p hidden="until-found">c</p><p aria-hidden="false">d</p>`,
			"ab\nc\nd\n"},
		{"skipped elements",
			`<script>X</script><style>X</style><noscript>X</noscript><template>X</template><svg><text>X</text></svg><iframe>X</iframe><title>X</title><button>X</button><select><option>X</select><textarea>X</textarea><math><mi>X</mi></math><p>kept</p>`,
			"kept [X]\n"}, // the <title> is no text, but it is the page title in the breadcrumb
		{"self-closing foreign and void elements",
			`<p>a<img src=x alt="X">b<input value="X"><wbr>c</p><x-icon/><p>d</p>`,
			"abc\nd\n"},
		{"self-closing svg and math",
			`<p>a</p><svg/><p>b</p><svg viewBox="0 0 1 1"><path d="M0"/><g><circle r="1"/></g></svg><math/><p>c</p>`,
			"a\nb\nc\n"},
		{"content after body end",
			`<body><p>a</p></body><p>b</p></html><p>c</p>`,
			"a\nb\nc\n"},
		{"stray end tags",
			`</div></p><p>a</span></b>b</p></table></li>`,
			"ab\n"},
		{"pre collapses whitespace",
			"<pre>func main() {\n\tfmt.Println(1)\n}</pre>",
			"func main() { fmt.Println(1) }\n"},
		{"empty input", ``, ""},
		{"text only", `just text`, "just text\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			paras, err := HTMLToStructuredText(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			htmlCheckInvariants(t, paras)
			if got := htmlRender(paras); got != c.want {
				t.Errorf("HTMLToStructuredText(%s)\n got: %q\nwant: %q", c.in, got, c.want)
			}
		})
	}
}

func TestHTMLToStructuredTextCharsets(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"meta charset windows-1252", []byte("<meta charset=windows-1252><p>\x93caf\xe9\x94 \x80</p>"), "“café” €"},
		{"http-equiv iso-8859-1", []byte(`<meta http-equiv="content-type" content="text/html;charset=ISO-8859-1"><p>Gr` + "\xfc\xdf" + `e</p>`), "Grüße"},
		{"undeclared latin-1 falls back to windows-1252", []byte("<p>na\xefve</p>"), "naïve"},
		{"UTF-8 wins over a wrong declaration", []byte(`<meta charset="iso-8859-1"><p>naïve</p>`), "naïve"},
		{"UTF-8 BOM", []byte("\xef\xbb\xbf<p>\u00e9t\u00e9</p>"), "été"},
		{"UTF-16LE BOM", []byte("\xff\xfe<\x00p\x00>\x00\xe9\x00t\x00\xe9\x00"), "été"},
		{"Shift_JIS", []byte("<meta charset=shift_jis><p>\x93\xfa\x96\x7b\x8c\xea</p>"), "日本語"},
		{"invalid UTF-8 declared UTF-8", []byte("<meta charset=utf-8><p>a\xffb</p>"), "a\uFFFDb"},
	}
	for _, c := range cases {
		paras, err := HTMLToStructuredText(bytes.NewReader(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(paras) != 1 || paras[0].Text != c.want {
			t.Errorf("%s: got %q, want %q", c.name, htmlRender(paras), c.want)
		}
	}
}

type htmlFailingReader struct{}

func (htmlFailingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestHTMLToStructuredTextReadError(t *testing.T) {
	if _, err := HTMLToStructuredText(htmlFailingReader{}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v, want the reader's error wrapped", err)
	}
}

// TestHTMLToStructuredTextHostile feeds inputs built to make a naive
// converter recurse, go quadratic or lose track of hidden content. The test
// timeout is the bound; speed is measured by BenchmarkHTMLToStructuredText.
func TestHTMLToStructuredTextHostile(t *testing.T) {
	const n = 200_000
	cases := []struct {
		name      string
		in        string
		want      []string // substrings that must appear in the output
		forbidden []string
	}{
		{"deep nesting", strings.Repeat("<div>", n) + "deep text" + strings.Repeat("</div>", n) + "<p>after</p>",
			[]string{"deep text", "after"}, nil},
		{"deep unclosed inline nesting", strings.Repeat("<span><b><i>", n) + "x",
			[]string{"x"}, nil},
		{"hidden beyond the depth cap", strings.Repeat("<div>", 1000) + `<span hidden>SECRET<b>SECRET</b></span>shown` + `<script>SECRET</script>` + strings.Repeat("</div>", 1000),
			[]string{"shown"}, []string{"SECRET"}},
		{"hidden below the depth cap stays hidden past it", `<div hidden>` + strings.Repeat("<p><span>", 1000) + "SECRET" + `</div><p>visible</p>`,
			[]string{"visible"}, []string{"SECRET"}},
		{"many tiny elements", strings.Repeat("<b>a</b>", n),
			[]string{strings.Repeat("a", 1000)}, nil},
		{"many tiny paragraphs", strings.Repeat("<p>a", n), []string{"a"}, nil},
		{"huge attribute", `<p title="` + strings.Repeat("x", 5<<20) + `" style="` + strings.Repeat("color:red;", 100_000) + `display:none">gone</p><p>kept</p>`,
			[]string{"kept"}, []string{"gone"}},
		{"many cells with spans", "<table><tr><th>h</th></tr>" + strings.Repeat(`<tr><td colspan=100000 rowspan=100000>c</td><td>d</td>`, 20_000) + "</table>",
			[]string{"h: c"}, nil},
		{"deeply nested tables", strings.Repeat("<table><tr><td>", 20_000) + "cell" + strings.Repeat("</td></tr></table>", 20_000),
			[]string{"cell"}, nil},
		{"many header rows", "<table>" + strings.Repeat("<tr><th colspan=300>"+strings.Repeat("label ", 50)+"</th></tr>", 5000) + "<tr><td>v</td></tr></table>",
			[]string{"v"}, nil},
		{"many open lists", strings.Repeat("<ol><li>", n) + "item", []string{"item"}, nil},
		{"unterminated comment", "<p>a</p><!--" + strings.Repeat("x", 1<<20), []string{"a"}, []string{"xxx"}},
		{"unterminated script", "<p>a</p><script>" + strings.Repeat("<p>SECRET</p>", 10_000), []string{"a"}, []string{"SECRET"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			paras, err := HTMLToStructuredText(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			htmlCheckInvariants(t, paras)
			var all strings.Builder
			for _, p := range paras {
				all.WriteString(p.Text + "\n")
			}
			for _, w := range c.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("output lacks %.40q", w)
				}
			}
			for _, f := range c.forbidden {
				if strings.Contains(all.String(), f) {
					t.Errorf("output contains %q", f)
				}
			}
		})
	}
}

func FuzzHTMLToStructuredText(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "html", "*.html"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "<", "<p", "<table><tr><td>a<td>b<tr><th colspan=0 rowspan=-1>c</table>",
		"<ul><li><ol start=x><li>a</ol></ul>", "<h1>a<h2>b</h1>c", "<div hidden><p>x</div>y",
		"<svg><p/>a</svg>b<math><mi/></math>", "<main></main><article><h3>t</h3></article>",
		"<br><br></br><wbr>", "\xff\xfe<\x00p\x00>", "<meta charset=shift_jis>\x93\xfa",
		"<table><caption><table><td>x</table></caption></table>", "<select><table><td>x",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		paras, err := HTMLToStructuredText(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		htmlCheckInvariants(t, paras)
		// Deterministic: the same input gives the same paragraphs.
		again, _ := HTMLToStructuredText(bytes.NewReader(in))
		if htmlRender(again) != htmlRender(paras) {
			t.Fatal("two runs on the same input differ")
		}
	})
}

// BenchmarkHTMLToStructuredText converts a real 260 KB documentation page
// (the rustc book's warn-by-default lint listing: sidebar, code blocks,
// 1,400 paragraphs) and a small hand-written one. As a reference, the
// html.Parse runs build x/net/html's parse tree of the same page, without
// extracting any text.
func BenchmarkHTMLToStructuredText(b *testing.B) {
	for _, name := range []string{"rustc-warn-by-default.html", "docs.html"} {
		src, err := os.ReadFile(filepath.Join("testdata", "html", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.Run("HTMLToStructuredText", func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				var n int
				for b.Loop() {
					paras, err := HTMLToStructuredText(bytes.NewReader(src))
					if err != nil {
						b.Fatal(err)
					}
					n = len(paras)
				}
				b.ReportMetric(float64(n), "paragraphs")
			})
			b.Run("html.Parse", func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := html.Parse(bytes.NewReader(src)); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestHTMLJoinsCJKLines: a line break of the HTML source inside Chinese or
// Japanese text is no space (a word may be split across lines); between
// Latin words, Korean words or a CJK and a Latin word it stays one.
func TestHTMLJoinsCJKLines(t *testing.T) {
	page := "<p>受験者\n数を入力してから、試験問題\n  用紙を印刷します。</p>" +
		"<p>配置文件位于\n系统目录中。</p><p>한국어\n문서 and Latin\nwords, 設定\nfile 受験 者</p>"
	paras, err := HTMLToStructuredText(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paras {
		got = append(got, p.Text)
	}
	want := []string{"受験者数を入力してから、試験問題用紙を印刷します。", "配置文件位于系统目录中。", "한국어 문서 and Latin words, 設定 file 受験 者"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("paragraphs = %q, want %q", got, want)
	}
}
