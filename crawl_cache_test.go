package engine

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var updateCrawlGolden = flag.Bool("update-crawl", false, "rewrite testdata/crawl golden files")

// crawlCacheTestSite serves pages with every structure the cache must keep:
// nested and skipped heading levels, lists, tables with and without header,
// text that looks like Markdown syntax, and the shared layout.
func crawlCacheTestSite(t *testing.T) *crawlTestSite {
	site := newCrawlTestSite(t)
	links := []string{"/docs/", "/docs/tables.html", "/docs/tricky.html"}
	site.html("/docs/", crawlTestLayout("Handbook", `
<p>Start here.</p>
<h2>Getting started</h2><p>Install the tool.</p>
<h3>On Linux</h3><ul><li>unpack it</li><li>run it</li></ul>
<h4>Details</h4><ol><li>first</li><li>second</li></ol>
<h2>Reference</h2><p>See the tables.</p>`, links...))
	site.html("/docs/tables.html", crawlTestLayout("Tables", `
<table><caption>Fees</caption><tr><th>Service</th><th>Price</th></tr>
<tr><td>Printing</td><td>5 ct</td></tr><tr><td>Scanning</td><td>free</td></tr></table>
<table><tr><td>alpha</td><td>beta</td><td>gamma</td></tr><tr><td>1</td><td>2</td><td>3</td></tr></table>
<table><tr><th>Population</th><td>5M</td></tr></table>`, links...))
	site.html("/docs/tricky.html", crawlTestLayout("Tricky > text", `
<h3>Skipped level</h3><p># not a heading</p><p>| not | a table |</p><p>\ backslash</p>
<p>&lt;!-- not a comment --&gt;</p><p>- a lone dash item</p><p>C# and F#</p>
<h1>Second top</h1><p>arrow --&gt; inside</p><h6>Deep</h6><p>deep text</p>`, links...))
	return site
}

func crawlSaveOptions() crawlOptions {
	o := testCrawlOptions()
	o.getenv = func(k string) string {
		if k == crawlSaveEnv {
			return "1"
		}
		return ""
	}
	return o
}

// The replay of the cache gives indexPage exactly what the live crawl gave
// it, without any request.
func TestCrawlCacheLiveVsReplay(t *testing.T) {
	site := crawlCacheTestSite(t)
	dir := filepath.Join(t.TempDir(), "cache", "nested") // created by RunCrawl
	live := newCrawlCollector()
	res, err := runCrawl(t.Context(), CrawlInput{SeedURLs: []string{site.url("/docs/")}}, dir, live.index, nil, crawlSaveOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.PagesIndexed != 3 || res.PagesSaved != 3 || len(res.Errors) != 0 {
		t.Fatalf("crawl result %+v", res)
	}
	requests := len(site.requests())
	site.srv.Close() // the replay must not need the network

	replay := newCrawlCollector()
	var msgs []string
	rres, err := ReindexCrawlData(t.Context(), dir, replay.index, func(m string) { msgs = append(msgs, m) })
	if err != nil {
		t.Fatal(err)
	}
	if rres.FilesProcessed != 3 || rres.PagesIndexed != 3 || len(rres.Errors) != 0 {
		t.Fatalf("reindex result %+v", rres)
	}
	if len(replay.pages) != len(live.pages) {
		t.Fatalf("replayed %d pages, live crawl indexed %d", len(replay.pages), len(live.pages))
	}
	for u, want := range live.pages {
		got := replay.pages[u]
		if !slices.Equal(got, want) {
			t.Errorf("%s: replay differs from live crawl\nlive:   %+v\nreplay: %+v", u, want, got)
		}
	}
	if len(site.requests()) != requests {
		t.Fatal("replay made requests")
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, "file 1/3: ") }) {
		t.Errorf("progress = %q", msgs)
	}
	// The structure is visible as Markdown.
	md, err := os.ReadFile(filepath.Join(dir, crawlCacheFileName(site.url("/docs/"))))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"url: " + site.url("/docs/") + "\n", "\n# Handbook\n", "\n## Getting started\n", "\n### On Linux\n\n- unpack it\n- run it\n", "\n1. first\n2. second\n"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("cache file lacks %q:\n%s", want, md)
		}
	}
	tables, _ := os.ReadFile(filepath.Join(dir, crawlCacheFileName(site.url("/docs/tables.html"))))
	if !bytes.Contains(tables, []byte("| Service | Price |\n| --- | --- |\n| Printing | 5 ct |\n")) {
		t.Errorf("table not written as a Markdown table:\n%s", tables)
	}
}

// The Markdown of one page, as a golden file.
func TestCrawlCacheGolden(t *testing.T) {
	paras := []Paragraph{
		{Text: "Handbook", Heading: true, Breadcrumb: "Handbook"},
		{Text: "Start here.", Breadcrumb: "Handbook"},
		{Text: "Getting started", Heading: true, Breadcrumb: "Handbook > Getting started"},
		{Text: "- unpack it", Breadcrumb: "Handbook > Getting started"},
		{Text: "- run it", Breadcrumb: "Handbook > Getting started"},
		{Text: "Fees", Breadcrumb: "Handbook > Getting started"},
		{Text: "Service: Printing | Price: 5 ct", Breadcrumb: "Handbook > Getting started"},
		{Text: "Service: Scanning | Price: free", Breadcrumb: "Handbook > Getting started"},
		{Text: "alpha | beta | gamma", Breadcrumb: "Handbook > Getting started"},
		{Text: "# not a heading", Breadcrumb: "Handbook > Getting started"},
		{Text: "Tricky > heading", Heading: true, Breadcrumb: "Handbook > Tricky > heading"},
		{Text: "under the tricky heading", Breadcrumb: "Handbook > Tricky > heading"},
		{Text: "two\n\nparagraphs --> in one", Breadcrumb: "Handbook > Tricky > heading"},
	}
	got := renderCrawlMarkdown("https://docs.example.com/handbook/", paras)
	golden := filepath.Join("testdata", "crawl", "page.golden.md")
	if *updateCrawlGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-crawl to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Markdown differs from %s:\n%s", golden, got)
	}
	u, back, err := parseCrawlMarkdown(want)
	if err != nil || u != "https://docs.example.com/handbook/" || !slices.Equal(back, paras) {
		t.Fatalf("golden file reads back as %q, %+v, %v", u, back, err)
	}
}

func TestCrawlMarkdownRoundTrip(t *testing.T) {
	cases := map[string][]Paragraph{
		"empty": nil,
		"skipped levels": {
			{Text: "A", Heading: true, Breadcrumb: "A"},
			{Text: "C", Heading: true, Breadcrumb: "A > C"},
			{Text: "B", Heading: true, Breadcrumb: "A > B"},
			{Text: "D", Heading: true, Breadcrumb: "A > B > D"},
			{Text: "x", Breadcrumb: "A > B > D"},
			{Text: "Y", Heading: true, Breadcrumb: "Y"},
		},
		"breadcrumbs that do not follow the headings": {
			{Text: "lead", Breadcrumb: "Site title"},
			{Text: "H", Heading: true, Breadcrumb: "Other > H"},
			{Text: "after", Breadcrumb: ""},
		},
		"deep": {
			{Text: "1", Heading: true, Breadcrumb: "1"}, {Text: "2", Heading: true, Breadcrumb: "1 > 2"},
			{Text: "3", Heading: true, Breadcrumb: "1 > 2 > 3"}, {Text: "4", Heading: true, Breadcrumb: "1 > 2 > 3 > 4"},
			{Text: "5", Heading: true, Breadcrumb: "1 > 2 > 3 > 4 > 5"}, {Text: "6", Heading: true, Breadcrumb: "1 > 2 > 3 > 4 > 5 > 6"},
			{Text: "7", Heading: true, Breadcrumb: "1 > 2 > 3 > 4 > 5 > 6 > 7"}, {Text: "t", Breadcrumb: "1 > 2 > 3 > 4 > 5 > 6 > 7"},
		},
		"syntax lookalikes": {
			{Text: "#hash"}, {Text: "## two"}, {Text: "| a | b |"}, {Text: `\back`}, {Text: `\\double`},
			{Text: "<!-- breadcrumb: \"x\" -->"}, {Text: "<!-- paragraph: {} -->"}, {Text: "---"},
			{Text: "- one item"}, {Text: "1. one"}, {Text: "C#", Heading: true, Breadcrumb: "C#"}, {Text: "ends ##", Heading: true, Breadcrumb: "ends ##"},
			{Text: "#", Heading: true, Breadcrumb: "#"},
		},
		"whitespace and control": {
			{Text: " leading"}, {Text: "trailing "}, {Text: "a\n\nb"}, {Text: "a\r\nb"}, {Text: "nul\x00byte"},
			{Text: "line\n  indented"}, {Text: "tab\there"}, {Text: " heading ", Heading: true, Breadcrumb: " heading "},
			{Text: "multi\nline heading", Heading: true, Breadcrumb: "multi\nline heading"}, {Text: "-->"}, {Text: "x --> y"},
		},
		"lists and tables": {
			{Text: "- a"}, {Text: "- b"}, {Text: "1. c"}, {Text: "22. d"},
			{Text: "K: 1 | V: 2"}, {Text: "K: 3 | V: 4"}, {Text: "K: 5 | W: 6"}, {Text: "p | q"}, {Text: "r | s"},
			{Text: "x | y | z"}, {Text: "K: a|b | V: c"}, {Text: "K:  | V: "}, {Text: "a |  | c"}, {Text: "Population: 5M"},
			{Text: "- not", Breadcrumb: "other"}, {Text: "- same"},
		},
		"unicode": {
			{Text: "Größe", Heading: true, Breadcrumb: "Größe"}, {Text: "日本語のテキスト", Breadcrumb: "Größe"}, {Text: "emoji 🎉 | x", Breadcrumb: "Größe"},
		},
	}
	for name, paras := range cases {
		t.Run(name, func(t *testing.T) {
			md := renderCrawlMarkdown("https://example.com/p", paras)
			u, got, err := parseCrawlMarkdown(md)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, md)
			}
			if u != "https://example.com/p" || !slices.Equal(got, paras) {
				t.Fatalf("round trip differs\nwant %+v\ngot  %+v\nmarkdown:\n%s", paras, got, md)
			}
		})
	}
}

func TestReindexCrawlDataHandEdited(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "crawl", "handwritten.md"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")) // an editor on Windows
	u, paras, err := parseCrawlMarkdown(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Paragraph{
		{Text: "Installation", Heading: true, Breadcrumb: "Installation"},
		{Text: "Download the archive from the releases page.", Breadcrumb: "Installation"},
		{Text: "Linux", Heading: true, Breadcrumb: "Installation > Linux"},
		{Text: "- unpack the archive", Breadcrumb: "Installation > Linux"},
		{Text: "- run ./install.sh", Breadcrumb: "Installation > Linux"},
		{Text: "1. first step", Breadcrumb: "Installation > Linux"},
		{Text: "2. second step", Breadcrumb: "Installation > Linux"},
		{Text: "OS: Linux | Size: 12 MB", Breadcrumb: "Installation > Linux"},
		{Text: "OS: macOS | Size: 14 MB", Breadcrumb: "Installation > Linux"},
		{Text: "Windows", Heading: true, Breadcrumb: "Installation > Windows"},
		{Text: "# is not a heading here.\nThis line continues the same paragraph.", Breadcrumb: "Installation > Windows"},
		{Text: "If the installer fails, run it as administrator.", Breadcrumb: "Installation > Windows > Troubleshooting"},
		{Text: "  spaced  text\n\nwith a blank line", Breadcrumb: "Installation > Windows"},
	}
	if u != "https://docs.example.com/guide/install" || !slices.Equal(paras, want) {
		t.Fatalf("parsed %q\n%+v\nwant\n%+v", u, paras, want)
	}
}

// Files that are not usable crawl Markdown are skipped and reported; the
// good ones are replayed; nothing outside the directory is read.
func TestReindexCrawlDataBadFiles(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "cache")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	good := "---\nurl: https://example.com/good\n---\n\n# Good\n\ntext\n"
	outside := "---\nurl: https://example.com/outside\n---\n\nsecret outside the cache\n"
	files := map[string]string{
		"a-good.md":          good,
		"sub/nested.md":      strings.Replace(good, "/good", "/nested", 1),
		"b-dup.md":           good,
		"c-no-front.md":      "# Just Markdown\n\ntext\n",
		"d-unclosed.md":      "---\nurl: https://example.com/x\n\ntext\n",
		"e-no-url.md":        "---\ntitle: x\n---\n\ntext\n",
		"f-traversal-url.md": "---\nurl: ../../etc/passwd\n---\n\ntext\n",
		"g-file-url.md":      "---\nurl: file:///etc/passwd\n---\n\ntext\n",
		"h-bad-marker.md":    "---\nurl: https://example.com/h\n---\n\n<!-- paragraph: {\"text\": -->\n",
		"i-open-marker.md":   "---\nurl: https://example.com/i\n---\n\n<!-- breadcrumb: \"x\"\n",
		"j-empty.md":         "",
		"k-binary.md":        "\x00\x01\x02\xff",
		"notes.txt":          "ignored: not .md",
		".hidden.md":         good,
		".tmp/x.md":          good,
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "outside.md"), []byte(outside), 0o644); err != nil {
		t.Fatal(err)
	}
	// Links out of the directory, relative and absolute, and one inside.
	for name, target := range map[string]string{
		"l-escape.md":   "../outside.md",
		"m-absolute.md": filepath.Join(base, "outside.md"),
		"n-inside.md":   "a-good.md",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	// Larger than the 32 MiB limit (sparse).
	big, err := os.Create(filepath.Join(dir, "o-huge.md"))
	if err != nil {
		t.Fatal(err)
	}
	big.WriteString(good)
	if err := big.Truncate(crawlCacheMaxFileBytes + 10); err != nil {
		t.Fatal(err)
	}
	big.Close()

	col := newCrawlCollector()
	res, err := ReindexCrawlData(t.Context(), dir, col.index, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(col.urls)
	if want := []string{"https://example.com/good", "https://example.com/nested"}; !slices.Equal(col.urls, want) {
		t.Fatalf("indexed %q, want %q", col.urls, want)
	}
	wantErr := []string{"b-dup.md", "c-no-front.md", "d-unclosed.md", "e-no-url.md", "f-traversal-url.md", "g-file-url.md",
		"h-bad-marker.md", "i-open-marker.md", "j-empty.md", "k-binary.md", "l-escape.md", "m-absolute.md", "n-inside.md", "o-huge.md"}
	for _, name := range wantErr {
		if !slices.ContainsFunc(res.Errors, func(e string) bool { return strings.HasPrefix(e, name+": ") }) {
			t.Errorf("no error for %s in %q", name, res.Errors)
		}
	}
	if len(res.Errors) != len(wantErr) {
		t.Errorf("errors = %q, want %d", res.Errors, len(wantErr))
	}
	for _, e := range res.Errors {
		if strings.Contains(e, "secret") {
			t.Fatalf("content from outside the directory leaked: %q", e)
		}
	}
	if res.PagesIndexed != 2 {
		t.Errorf("result %+v", res)
	}
	if _, err := ReindexCrawlData(t.Context(), filepath.Join(base, "missing"), col.index, nil); err == nil {
		t.Error("missing directory: no error")
	}
	if _, err := ReindexCrawlData(t.Context(), dir, nil, nil); !errors.Is(err, ErrInvalidCrawlInput) {
		t.Errorf("nil indexPage: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ReindexCrawlData(ctx, dir, col.index, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// Cache file names are safe on every OS and never leave the directory,
// whatever the URL.
func TestCrawlCacheFileName(t *testing.T) {
	urls := []string{
		"https://example.com/docs/intro",
		"https://example.com/docs/intro/",
		"https://example.com/docs/intro?x=1",
		"http://example.com/../../etc/passwd",
		"http://example.com/%2e%2e/%2e%2e/etc/passwd",
		"http://example.com/a%2Fb%5Cc",
		`http://example.com/a\b\..\..\c`,
		"http://con.example.com/aux/nul",
		"http://CON/",
		"http://example.com/" + strings.Repeat("very-long-segment/", 300),
		"http://bücher.example/straße?q=ä",
		"http://[::1]:8080/x",
		"not a url at all",
		"",
		"...",
	}
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,79}-[0-9a-f]{12}\.md$|^page-[0-9a-f]{12}\.md$`)
	names := make(map[string]string)
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, u := range urls {
		name := crawlCacheFileName(u)
		if !re.MatchString(name) || len(name) > 100 {
			t.Errorf("crawlCacheFileName(%q) = %q: not a safe name", u, name)
		}
		if prev, dup := names[name]; dup {
			t.Errorf("%q and %q share the file name %q", prev, u, name)
		}
		names[name] = u
		if u == "" || !strings.Contains(u, "://") {
			continue
		}
		written, err := writeCrawlCachePage(root, u, []Paragraph{{Text: "x"}})
		if err != nil || written != name {
			t.Errorf("writeCrawlCachePage(%q) = %q, %v", u, written, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := names[e.Name()]; !ok || e.IsDir() {
			t.Errorf("unexpected entry %q in the cache directory", e.Name())
		}
	}
	parentEntries, _ := os.ReadDir(filepath.Dir(dir))
	if len(parentEntries) != 1 {
		t.Errorf("files written next to the cache directory: %v", parentEntries)
	}
}

// FuzzCrawlMarkdown feeds arbitrary cache files to the reader: it must never
// panic, and what it reads must survive a write and a second read.
func FuzzCrawlMarkdown(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "crawl", "*.md"))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("---\nurl: http://x/\n---\n"))
	f.Add([]byte("---\nurl: http://x/\n---\n| a |\n| - |\n| b | c | d |\ntext\n"))
	f.Add([]byte("---\nurl: http://x/\n---\n<!-- breadcrumb: \"a\" -->\n<!-- breadcrumb: \"b\" -->\n# h\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, paras, err := parseCrawlMarkdown(data)
		if err != nil {
			if !errors.Is(err, ErrCrawlCacheFormat) {
				t.Fatalf("error does not wrap ErrCrawlCacheFormat: %v", err)
			}
			return
		}
		for _, p := range paras {
			if !utf8.ValidString(p.Text) || !utf8.ValidString(p.Breadcrumb) {
				return // exact only for UTF-8 text (JSON markers replace bad bytes)
			}
		}
		u2, again, err := parseCrawlMarkdown(renderCrawlMarkdown(u, paras))
		if err != nil || u2 != u || !slices.Equal(again, paras) {
			t.Fatalf("write and re-read changed the page: %v\nfirst  %+v\nsecond %+v", err, paras, again)
		}
	})
}

// TestReindexCrawlDataCountsOriginal is the original engine's case: a file
// that is not a crawl page counts as processed and as an error, and gets no
// progress line; a directory named like a cache file is not a file.
func TestReindexCrawlDataCountsOriginal(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a.md":        "---\nurl: https://a.example/\n---\n## Titel\n\nText A",
		"b.md":        "---\nurl: https://b.example/\n---\nText B",
		"bad.md":      "no frontmatter",
		"ignored.txt": "x",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var lines []string
	res, err := ReindexCrawlData(t.Context(), dir, func(_ context.Context, u string, paras []Paragraph) (int, error) {
		if u == "https://b.example/" {
			return 0, errors.New("index failed")
		}
		got[u] = len(paras)
		return 1, nil
	}, func(s string) { lines = append(lines, s) })
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesProcessed != 3 || res.PagesIndexed != 1 || len(res.Errors) != 2 {
		t.Errorf("result = %+v, want 3 files, 1 page, 2 errors", res)
	}
	if got["https://a.example/"] != 2 {
		t.Errorf("a.example paragraphs = %d, want 2", got["https://a.example/"])
	}
	if len(lines) != 2 {
		t.Errorf("progress lines = %q, want 2 (none for the file that is not a page)", lines)
	}
}
