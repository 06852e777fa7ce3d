package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// htmlBoilerWords match text that only page furniture holds in the
// generator fixtures.
var htmlBoilerWords = regexp.MustCompile(`(?i)<<<|>>>|\b(prev|previous|next:|up:|home|skip to|cookies|advertisement|password|sign in|search|quick search|table of contents|on this page|related|copyright|exit status|made with)\b|&para;`)

func TestHTMLBoilerplateFixtures(t *testing.T) {
	cases := []struct {
		file, title string
		content     []string // sentences that must be kept
		labels      []string // admonition titles: plain paragraphs, never headings or breadcrumb levels
	}{
		{"docbook", "2.3. Saving Your Data", []string{"The ledger keeps your accounts", "Set the interval to zero"}, []string{"Note", "Tip"}},
		{"sphinx", "add_widget", []string{"Adds a widget", "keyboard navigation between panels", "Kinds are case sensitive."}, []string{"Note", "See also"}},
		{"texinfo", "1.2 Running the Tool", []string{"Start the tool from a shell", "Processes file and prints the result."}, nil},
		{"mkdocs", "Configuration", []string{"All settings live in one file", "Without it the sitemap is not written."}, []string{"Warning"}},
		{"site", "Opening hours", []string{"The library is open", "Tell us what you think"}, nil},
		{"wrapped", "Release notes", []string{"This theme wraps the whole page", "The command line parser", "Fixed a crash"}, nil},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			paras := htmlFixtureParas(t, c.file+".html")
			var all strings.Builder
			for _, p := range paras {
				all.WriteString(p.Text + "\n")
				if p.Breadcrumb != c.title && !strings.HasPrefix(p.Breadcrumb, c.title+" > ") {
					t.Errorf("breadcrumb %q does not start with the page title %q", p.Breadcrumb, c.title)
				}
				if m := htmlBoilerWords.FindString(p.Text); m != "" {
					t.Errorf("boilerplate %q kept: %q", m, p.Text)
				}
				if strings.ContainsAny(p.Text+p.Breadcrumb, "¶🔗") {
					t.Errorf("permalink mark kept: %q [%s]", p.Text, p.Breadcrumb)
				}
				for _, l := range c.labels {
					if p.Text == l && p.Heading || strings.HasSuffix(p.Breadcrumb, " > "+l) {
						t.Errorf("admonition title %q is a section: %+v", l, p)
					}
				}
			}
			for _, s := range c.content {
				if !strings.Contains(all.String(), s) {
					t.Errorf("content %q lost; got:\n%s", s, all.String())
				}
			}
			for _, l := range c.labels {
				if !strings.Contains(all.String(), "\n"+l+"\n") {
					t.Errorf("admonition title %q lost", l)
				}
			}
		})
	}
}

func TestHTMLBoilerplateCases(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"nav classes dropped",
			`<div class="navbar">Menu</div><ul class="breadcrumb"><li>Home</li></ul><div id="toc">Contents</div><p>Body text here.</p><div class="cookie-consent">We use cookies</div>`,
			"Body text here.\n"},
		{"section ids are titles, not roles",
			`<section id="navigation"><h2>Navigation</h2><p>Keys move the focus.</p></section><div class="section" id="sidebar"><p>A sidebar is a box beside the text.</p></div>`,
			"# Navigation [Navigation]\nKeys move the focus.\nA sidebar is a box beside the text.\n"},
		{"content classes are not navigation",
			`<div class="wy-nav-content"><p>Main text.</p></div><html class="sidebar-visible"><p>More.</p>`,
			"Main text.\nMore.\n"},
		{"most of the page in a nav-like class is kept",
			`<div class="nav-wrapper"><p>` + strings.Repeat("Content words. ", 40) + `</p></div><div class="sidebar"><p>Other.</p></div>`,
			strings.TrimSpace(strings.Repeat("Content words. ", 40)) + "\n"},
		{"small login and search forms dropped, others kept",
			`<p>Intro.</p><form><input type="password"><p>Log in</p></form><form action="/search"><p>Find</p></form><form><p>Your comment:</p></form>`,
			"Intro.\nYour comment:\n"},
		{"permalink anchors",
			`<h2>Title <a class="headerlink" href="#t">¶</a></h2><h3><a href="#u">#</a> Usage</h3><p>Text ¶</p><h4>Links 🔗</h4>`,
			"# Title [Title]\n# Usage [Title > Usage]\nText\n# Links [Title > Usage > Links]\n"},
		{"admonition headings label their box",
			`<h1>Guide</h1><div class="warning"><h3 class="title">Warning</h3><p>Hot.</p></div><h2>Next part</h2>`,
			"# Guide [Guide]\nWarning\nHot.\n# Next part [Guide > Next part]\n"},
		{"a box's title that is a link target is a section",
			`<h1>Guide</h1><div class="note"><h3><a id="m" name="m">What is matched?</a></h3><p>The path.</p></div><div class="note"><h3 id="o">Order</h3><p>First.</p></div><div class="note"><h4><a name="x"></a>Note:</h4><p>Aside.</p></div><p>More.</p>`,
			"# Guide [Guide]\n# What is matched? [Guide > What is matched?]\nThe path.\n# Order [Guide > Order]\nFirst.\nNote:\nAside.\nMore.\n"},
		{"inline skip link",
			`<p><a class="skip-link" href="#m">Skip to content</a> Welcome.</p><h2><a class="toc-backref" href="#x">Usage</a></h2>`,
			"Welcome.\n# Usage [Usage]\n"},
		{"page title from <title> when there is no single top heading",
			`<title>EXECUTE – Reference Manual</title><h2>EXECUTE</h2><p>Runs it.</p><h2>Parameters</h2><p>Name.</p>`,
			"# EXECUTE [EXECUTE]\nRuns it.\n# Parameters [EXECUTE > Parameters]\nName.\n"},
		{"page title before the first heading",
			`<title>Intro | Site</title><p>Lead.</p><h2>A</h2><p>a</p><h2>B</h2><p>b</p>`,
			"Lead. [Intro]\n# A [Intro > A]\na\n# B [Intro > B]\nb\n"},
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

func TestHTMLPageTitle(t *testing.T) {
	for _, c := range []struct {
		title    string
		headings []string
		want     string
	}{
		{"EXECUTE", []string{"EXECUTE", "Parameters"}, "EXECUTE"},
		{"PostgreSQL: Documentation: 16: EXECUTE", []string{"EXECUTE", "Parameters"}, "EXECUTE"},
		{"add_widget — Widgets 3.2 Documentation", nil, "add_widget"},
		{"Running Octave (GNU Octave (version 7.3.0))", []string{"2.1 Running Octave"}, "2.1 Running Octave"},
		{"Running Octave (GNU Octave)", nil, "Running Octave"},
		{"Getting started - MkDocs", []string{"Install", "Usage"}, "Getting started"},
		{"Why the long and winding road - a story in many words and parts", nil, "Why the long and winding road - a story in many words and parts"},
		{"  Plain   title ", nil, "Plain title"},
		{"", []string{"A"}, ""},
	} {
		if got := htmlPageTitle(c.title, c.headings); got != c.want {
			t.Errorf("htmlPageTitle(%q, %q) = %q, want %q", c.title, c.headings, got, c.want)
		}
	}
}

func TestHTMLClassify(t *testing.T) {
	for tok, want := range map[string]htmlClassKind{
		"navheader": htmlClassBoiler, "navfooter": htmlClassBoiler, "nav-panel": htmlClassBoiler,
		"sphinxsidebar": htmlClassBoiler, "related": htmlClassBoiler, "md-sidebar--primary": htmlClassBoiler,
		"md-header": htmlClassBoiler, "md-nav__link": htmlClassBoiler, "section-toc": htmlClassBoiler,
		"cookie-banner": htmlClassBoiler, "skip-link": htmlClassBoiler, "ads": htmlClassBoiler,
		"wy-nav-content": htmlClassNone, "sidebar-visible": htmlClassNone, "toctree-wrapper": htmlClassNone,
		"page-header": htmlClassNone, "card-header": htmlClassNone, "navigationally": htmlClassNone,
		"headerlink": htmlClassPermalink, "copiable-link": htmlClassPermalink,
		"note": htmlClassAdmon, "admonition": htmlClassAdmon, "section": htmlClassSection, "sect2": htmlClassSection,
	} {
		if got := htmlClassify(tok); got != want {
			t.Errorf("htmlClassify(%q) = %d, want %d", tok, got, want)
		}
	}
}

func TestHTMLStripMarks(t *testing.T) {
	for _, c := range []struct {
		in      string
		heading bool
		want    string
	}{
		{"Title ¶", true, "Title"},
		{"Title #", true, "Title"},
		{"# Title", true, "Title"},
		{"Title 🔗", true, "Title"},
		{"C#", true, "C#"},
		{"Issue #", false, "Issue #"},
		{"Body ¶", false, "Body"},
		{"A ¶ in the middle", false, "A ¶ in the middle"},
		{"¶", false, ""},
	} {
		if got := htmlStripMarks(c.in, c.heading); got != c.want {
			t.Errorf("htmlStripMarks(%q, %v) = %q, want %q", c.in, c.heading, got, c.want)
		}
	}
}

// TestHTMLBoxTitleSections reads a page in the Apache manual's markup
// (testdata/html/apache.html): a note box's title that is a link target
// (an <a id name> inside the <h3>, or an id on it) starts a section, while
// the titles of other boxes, and one that only names its box ("Note:"),
// stay the boxes' labels.
func TestHTMLBoxTitleSections(t *testing.T) {
	paras := htmlFixtureParas(t, "apache.html")
	htmlCheckInvariants(t, paras)
	const directive = "Sample Module mod_sample > SampleRule Directive"
	sections := map[string]string{
		"What is compared?": "In server context the pattern is compared",
		"Flags in short":    "Flags follow the substitution",
	}
	labels := map[string]bool{"Security": true, "Note": true, "Note:": true, "Warning": true}
	found := map[string]bool{}
	for i, p := range paras {
		if text, ok := sections[p.Text]; ok {
			found[p.Text] = true
			if !p.Heading || p.Breadcrumb != directive+" > "+p.Text {
				t.Errorf("box title %q is not a section under %q: %+v", p.Text, directive, p)
			}
			if i+1 >= len(paras) || !strings.Contains(paras[i+1].Text, text) || paras[i+1].Breadcrumb != p.Breadcrumb {
				t.Errorf("the text of section %q does not follow it", p.Text)
			}
		}
		if labels[p.Text] {
			found[p.Text] = true
			if p.Heading {
				t.Errorf("box label %q is a heading: %+v", p.Text, p)
			}
		}
		for l := range labels {
			if strings.HasSuffix(p.Breadcrumb, " > "+l) {
				t.Errorf("box label %q is a section: %+v", l, p)
			}
		}
	}
	for s := range sections {
		if !found[s] {
			t.Errorf("box title %q lost", s)
		}
	}
	for l := range labels {
		if !found[l] {
			t.Errorf("box label %q lost", l)
		}
	}
}

// htmlFixtureParas returns the paragraphs HTMLToStructuredText builds from
// the fixture testdata/html/<name>.
func htmlFixtureParas(t *testing.T, name string) []Paragraph {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "html", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	paras, err := HTMLToStructuredText(f)
	if err != nil {
		t.Fatal(err)
	}
	return paras
}
