package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// htmlThemeBodies are page bodies of the shapes documentation sites have
// beside long pages: a page of two short paragraphs, a page holding a
// table, and a page that is a list of links (a section index). Each is far
// below the boilerplate rules' 400 bytes, and at least 80 characters of
// main text. want are texts the page's paragraphs must hold.
var htmlThemeBodies = []struct {
	name, title, body string
	want              []string
}{
	{"short", "Filesystems",
		`<section id="filesystems"><h2>Where the index lives</h2>
<p>The store keeps each index in one folder on a local filesystem.</p>
<p>Network filesystems work when they support file locks.</p></section>`,
		[]string{"Where the index lives", "The store keeps each index in one folder on a local filesystem.",
			"Network filesystems work when they support file locks."}},
	{"table", "Options",
		`<section id="options"><p>The log options:</p>
<table class="docutils align-default"><thead><tr><th>Option</th><th>Default</th></tr></thead>
<tbody><tr><td><code>max_log_file_size</code></td><td>10 MB</td></tr>
<tr><td><code>max_log_files</code></td><td>5</td></tr></tbody></table></section>`,
		[]string{"The log options:", "max_log_file_size", "10 MB", "max_log_files"}},
	{"links", "Guides",
		`<section id="guides"><div class="toctree-wrapper compound"><ul>
<li class="toctree-l1"><a class="reference internal" href="install.html">Installing on Debian and Ubuntu</a></li>
<li class="toctree-l1"><a class="reference internal" href="upgrade.html">Upgrading from version 1</a></li>
<li class="toctree-l1"><a class="reference internal" href="backup.html">Backing up an index</a></li>
</ul></div></section>`,
		[]string{"Installing on Debian and Ubuntu", "Upgrading from version 1", "Backing up an index"}},
}

// htmlThemeFurniture are texts of the fixtures' navigation, sidebars,
// tables of contents, breadcrumbs, headers and footers: none may be kept.
var htmlThemeFurniture = []string{"Sidebar ", "Toc Part", "Footer ", "Navbar ", "Header Fixture", "Crumb ",
	"Skip to", "Skip navigation", "Edit this page", "Previous", "Search docs", "View page source", "Tab Home"}

// TestHTMLThemesKeepMainContent checks the page shapes of six
// documentation generators and themes (testdata/html/themes, markup
// written here after their structure): Sphinx with the Read the Docs
// theme, MkDocs Material, Docusaurus, Hugo Docsy, GitBook and Javadoc.
// Each keeps all of its main content, however short, and none of its
// furniture; the page title leads the breadcrumbs.
func TestHTMLThemesKeepMainContent(t *testing.T) {
	themes := []struct {
		file string
		h1   bool // the body starts with the page's <h1> (else the theme writes it)
	}{
		{"rtd.html", true}, {"mkdocs-material.html", true}, {"docusaurus.html", true},
		{"docsy.html", true}, {"gitbook.html", false}, {"javadoc.html", false},
	}
	for _, th := range themes {
		tmpl, err := os.ReadFile(filepath.Join("testdata", "html", "themes", th.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range htmlThemeBodies {
			body := b.body
			if th.h1 {
				body = "<h1>" + b.title + `<a class="headerlink" href="#" title="Link to this heading">¶</a></h1>` + body
			}
			page := strings.NewReplacer("{{TITLE}}", b.title, "{{BODY}}", body).Replace(string(tmpl))
			paras, err := HTMLToStructuredText(strings.NewReader(page))
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for _, p := range paras {
				all.WriteString(p.Text)
				all.WriteByte('\n')
			}
			text := all.String()
			for _, w := range b.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s %s: %q lost; kept:\n%s", th.file, b.name, w, text)
				}
			}
			for _, f := range htmlThemeFurniture {
				if f == "Previous" && th.file == "gitbook.html" {
					// GitBook's pager has utility classes only ("group
					// text-sm p-2.5 flex"): nothing tells it from content.
					continue
				}
				if strings.Contains(text, f) {
					t.Errorf("%s %s: furniture %q kept:\n%s", th.file, b.name, f, text)
				}
			}
			if len(paras) == 0 || !strings.HasSuffix(paras[0].Breadcrumb, b.title) && !strings.HasPrefix(paras[0].Breadcrumb, b.title) {
				crumb := ""
				if len(paras) > 0 {
					crumb = paras[0].Breadcrumb
				}
				t.Errorf("%s %s: first breadcrumb %q, want the title %q", th.file, b.name, crumb, b.title)
			}
		}
	}
}

// TestHTMLMainContentNotDroppedByWrapper checks the rule behind the Read
// the Docs theme fix on its own: a class naming navigation on an element
// around <main> or [role=main] drops what is outside the main content, never
// what is inside, while the same class inside the main content drops.
func TestHTMLMainContentNotDroppedByWrapper(t *testing.T) {
	for _, main := range []string{`<main>`, `<div role="main">`, `<article>`} {
		end := "</" + strings.Trim(strings.Fields(main)[0], "<>") + ">"
		page := `<html><body><div class="grid-for-nav"><div class="nav-side"><p>Outside sidebar link list</p></div>` +
			main + `<h1>Short page</h1><p>Two sentences of content here.</p><p>A second paragraph follows.</p>` +
			`<div class="page-toc"><p>Inner toc entry</p></div>` + end + `</div></body></html>`
		paras, err := HTMLToStructuredText(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, p := range paras {
			texts = append(texts, p.Text)
		}
		got := strings.Join(texts, "|")
		if want := "Short page|Two sentences of content here.|A second paragraph follows."; got != want {
			t.Errorf("%s: %q, want %q", main, got, want)
		}
	}
}
