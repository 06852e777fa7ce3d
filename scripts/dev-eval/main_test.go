package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePage(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(p, []byte("<html><body>"+body+"</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTocPage keeps the rule that leaves out Read-the-Docs tables of
// contents under other names: a page counts when most of its main text is
// toctree, and the sidebar's global toctree (outside role=main) does not.
func TestTocPage(t *testing.T) {
	nav := `<nav class="wy-nav-side"><div class="toctree-wrapper"><ul><li>` +
		strings.Repeat("Another page title of the manual ", 40) + `</li></ul></div></nav>`
	cases := []struct {
		name, body string
		want       bool
	}{
		{"toctree page", nav + `<div role="main"><h1>For developers</h1><div class="toctree-wrapper compound"><ul>` +
			`<li><a href="a.html">How to start a device server</a></li><li><a href="b.html">How to write your first device class</a></li>` +
			`</ul></div></div>`, true},
		{"content page with a small toctree", nav + `<div role="main"><h1>Jobs</h1><p>` +
			strings.Repeat("Scrapy supports pausing and resuming crawls for big jobs. ", 5) +
			`</p><div class="toctree-wrapper"><ul><li>Other</li></ul></div></div>`, false},
		{"no role=main: the body decides", `<h1>Contents</h1><div class="toctree-wrapper"><ul><li>` +
			strings.Repeat("Chapter ", 30) + `</li></ul></div>`, true},
		{"empty page", ``, false},
	}
	for _, c := range cases {
		got, err := tocPage(writePage(t, c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: tocPage = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestHowToQuestions checks which headings the natural-language sets keep
// besides those ending in '?'.
func TestHowToQuestions(t *testing.T) {
	for h, want := range map[string]bool{
		"How to use sessions":                 true,
		"how to write new decorators":         true,
		"How do I get it":                     true,
		"How can I help":                      true,
		"However, the cache is not persisted": false,
		"Howto":                               false,
		"Writing custom lookups":              false,
	} {
		if got := howToRE.MatchString(h); got != want {
			t.Errorf("howToRE.MatchString(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestRtdSkip keeps tables of contents, indexes, search pages and static
// folders out of the corpora.
func TestRtdSkip(t *testing.T) {
	for rel, want := range map[string]bool{
		"index.html": true, "faq/index.html": true, "contents.html": true, "genindex.html": true,
		"search.html": true, "py-modindex.html": true, "_modules/scrapy/http.html": true,
		"user/_static/x.html": true, "faq.html": false, "topics/http/sessions.html": false,
	} {
		if got := rtdSkip(rel); got != want {
			t.Errorf("rtdSkip(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestAnswerTargets checks that a FAQ question gets the links of its own
// answer: not its heading's permalink, not a nested section's links, not
// the next question's.
func TestAnswerTargets(t *testing.T) {
	p := writePage(t, `<div role="main"><section id="faq"><h1>FAQ</h1>
<section id="q1"><h2>How do I purge all waiting tasks?<a class="headerlink" href="#q1">¶</a></h2>
<p>Use <a href="reference/cli.html#purge">celery purge</a> or see <a href="userguide/workers.html">Workers</a>.</p>
<section id="sub"><h3>And on Redis?</h3><p>See <a href="redis.html">Redis</a>.</p></section>
</section>
<div class="section" id="q2"><h2>Is Celery free?</h2><p>Yes, see <a href="../copyright.html">the license</a>.</p></div>
<section id="n"><h2>Notes</h2><p><a href="notes.html">notes</a></p></section>
</section></div>`)
	got, err := answerTargets(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []faqAnswer{
		{"How do I purge all waiting tasks?", []string{"reference/cli.html#purge", "userguide/workers.html"}},
		{"And on Redis?", []string{"redis.html"}},
		{"Is Celery free?", []string{"../copyright.html"}},
	}
	if len(got) != len(want) {
		t.Fatalf("answerTargets = %q, want %q", got, want)
	}
	for i := range want {
		if got[i].question != want[i].question || strings.Join(got[i].hrefs, " ") != strings.Join(want[i].hrefs, " ") {
			t.Errorf("answer %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestDocbookIndexEntries reads a back-of-book index as the DocBook DSSSL
// stylesheets write it (upper-case tags, the term before its links,
// sub-entries in the following <dd>).
func TestDocbookIndexEntries(t *testing.T) {
	p := writePage(t, `<DIV CLASS="INDEX"><H1>Index</H1><DL>
<DT>AUTH,
    <A HREF="auth-a.html">Using different methods</A>,
    <A HREF="auth-b.html#X">Using AES256</A></DT>
<DT>failover_command configuration parameter,
    <A HREF="runtime-config-failover.html#RUNTIME">Failover Settings</A></DT>
<DT> Apache-style profiles for FreeBSD </DT>
<DD><DL><DT>FreeBSD , <A HREF="additionalutils.html#BSD">slon.in-profiles</A></DT></DL></DD>
<DT>pcp_attach_node, <A HREF="https://example.org/x.html">elsewhere</A></DT>
</DL></DIV>`)
	got, err := docbookIndexEntries(p)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"AUTH", "auth-a.html"}, {"AUTH", "auth-b.html"},
		{"failover_command configuration parameter", "runtime-config-failover.html"},
		{"Apache-style profiles for FreeBSD FreeBSD", "additionalutils.html"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %q, want %q", i, got[i], want[i])
		}
	}
}
