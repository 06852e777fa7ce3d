// Command dev-eval builds the retrieval development sets: thirteen sets
// from nineteen manuals of Debian documentation packages, made by seven
// documentation generators, with questions derived mechanically from the
// manuals themselves. Nothing is committed: the manuals come from the
// packages, the labels from this program.
//
//	octave    texinfo HTML   octave-doc    Concept Index entries -> the pages they link
//	cmake     Sphinx         cmake-doc     section headings -> their page
//	gnucash   DocBook XSL    gnucash-docs  section headings -> their page
//	mkdocs    MkDocs         mkdocs-doc    section headings -> their page
//	zsh       texinfo + yodl zsh-doc       FAQ questions (headings ending in '?') -> their page
//	apache    Apache XSLT    apache2-doc   directive names (directive index) -> the module pages
//	snakemake Sphinx         snakemake-doc FAQ questions (headings ending in '?') -> their page
//	apachefaq Apache XSLT    apache2-doc   questions (headings ending in '?': the SSL FAQ and others) -> their page
//	git       AsciiDoc       git-doc       options and configuration variables (definition lists) -> their pages
//	django    Sphinx         python-django-doc  questions (headings ending in '?' or "How to ...") -> their page
//	rtd       Sphinx, Read-the-Docs theme: six manuals in one corpus (python-scrapy-doc, numba-doc,
//	          python-ruffus-doc, ghostscript-doc, libtango-doc, python-ase-doc), labelled as django
//	faqlinks  Sphinx: four manuals in one corpus (python-django-doc, python-celery-doc, borgbackup-doc,
//	          python-scrapy-doc) without their FAQ pages: FAQ questions -> the pages their answers link
//	dbindex   DocBook (DSSSL): two manuals in one corpus (pgpool2, slony1-2-doc): back-of-book index
//	          entries ("term" or "term subterm") -> the pages they link
//
// For each set it copies the content pages (not the tables of contents, the
// indexes, search pages or texinfo's XREF redirect stubs) to
// WORK/<set>/corpus and writes WORK/<set>/dataset.json in the format of
// `askyourdocs eval`. Heading questions are the heading text with numbers,
// permalink marks (¶, #) and one-word headings left out, and with headings
// that occur on more than three pages ("See Also") dropped as ambiguous.
//
// scripts/dev-eval/run installs the packages, runs this program, indexes
// each corpus with the reference CLI and prints the table of
// docs/retrieval.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// set is one manual and how its labels are derived.
type set struct {
	name, pkg, generator, dir string
	skip                      func(rel string) bool // pages left out of the corpus
	index                     string                // back-of-book index page; "" = label by headings
	indexHref                 *regexp.Regexp        // which links of the index page are entries
	questions                 bool                  // label by headings ending in '?' only
	identifiers               bool                  // label by the identifiers of definition lists (identifierTerms)
	maxCases                  int                   // keep every k-th label when there are more (0: all)
	howTo                     bool                  // with questions: also headings starting "How to/do/can ..."
	parts                     []part                // several manuals in one corpus (pkg, dir unused)
	dropTOC                   bool                  // also leave out pages that are mostly a toctree (tocPage)
	answerLinks               bool                  // label FAQ questions by the pages their answers link (answerTargets)
	bookIndex                 bool                  // label by the parts' DocBook back-of-book indexes (part.index)
	loIndex                   bool                  // label by LibreOffice help's translated keyword index (loIndexEntries)
	manPages                  bool                  // man pages rendered to text, labelled by their descriptions (manCorpus)
	dropDescription           bool                  // with manPages: the description cut from the page (manDropDescription)
}

// label is one question and a page it names.
type label struct{ text, page string }

// part is one manual of a set made of several: its pages go to the
// corpus folder prefix.
type part struct {
	pkg, dir, prefix string
	faq              []string // with answerLinks: the FAQ pages, left out of the corpus
	index            string   // with bookIndex: the back-of-book index page, relative to dir
	// extract: the package is unpacked, not installed, by scripts/dev-eval/run
	// (pgpool2 is a server); dir is then inside WORK/pkgs/<pkg>.
	extract bool
}

// rtdSkip leaves out a Sphinx manual's tables of contents, indexes,
// search pages and static folders.
func rtdSkip(rel string) bool {
	b := path.Base(rel)
	return b == "index.html" || b == "contents.html" || b == "genindex.html" || b == "search.html" ||
		b == "py-modindex.html" || strings.HasPrefix(rel, "_") || strings.Contains(rel, "/_")
}

// howToRE is a heading that asks how ("How to log messages", "How do I
// get it").
var howToRE = regexp.MustCompile(`^(?i)how (to|do|does|can|should)\b`)

func sets() []set {
	return []set{
		{name: "octave", pkg: "octave-doc", generator: "texinfo", dir: "/usr/share/doc/octave/octave.html",
			skip: func(rel string) bool {
				b := path.Base(rel)
				return strings.HasPrefix(b, "XREF") || strings.HasSuffix(b, "-Index.html") || b == "index.html"
			},
			index: "Concept-Index.html", indexHref: regexp.MustCompile(`#index-`)},
		{name: "cmake", pkg: "cmake-doc", generator: "Sphinx", dir: "/usr/share/doc/cmake-data/html",
			skip: func(rel string) bool {
				b := path.Base(rel)
				return b == "index.html" || b == "genindex.html" || b == "search.html" || strings.HasPrefix(rel, "_")
			}},
		{name: "gnucash", pkg: "gnucash-docs", generator: "DocBook", dir: "/usr/share/doc/gnucash-docs/gnucash-guide-en",
			skip: func(rel string) bool { return rel == "index.html" }},
		{name: "mkdocs", pkg: "mkdocs-doc", generator: "MkDocs", dir: "/usr/share/doc/mkdocs/html",
			skip: func(rel string) bool { return rel == "404.html" || strings.HasPrefix(rel, "search/") }},
		{name: "zsh", pkg: "zsh-doc", generator: "texinfo + yodl", dir: "/usr/share/doc/zsh-doc/html", questions: true,
			skip: func(rel string) bool {
				return rel == "index.html" || rel == "FAQ.html" || strings.HasSuffix(rel, "-Index.html")
			}},
		{name: "apache", pkg: "apache2-doc", generator: "Apache XSLT", dir: "/usr/share/doc/apache2-doc/manual/en",
			skip: func(rel string) bool {
				b := path.Base(rel)
				return b == "index.html" || b == "sitemap.html" || b == "directives.html" || b == "quickreference.html"
			},
			index: "mod/directives.html", indexHref: regexp.MustCompile(`^[a-z0-9_]+\.html#`)},
		{name: "snakemake", pkg: "snakemake-doc", generator: "Sphinx", dir: "/usr/share/doc/snakemake/html", questions: true,
			skip: func(rel string) bool {
				b := path.Base(rel)
				return b == "index.html" || b == "genindex.html" || b == "search.html" || b == "py-modindex.html" || strings.HasPrefix(rel, "_")
			}},
		{name: "apachefaq", pkg: "apache2-doc", generator: "Apache XSLT", dir: "/usr/share/doc/apache2-doc/manual/en", questions: true,
			skip: func(rel string) bool {
				b := path.Base(rel)
				return b == "index.html" || b == "sitemap.html" || b == "directives.html" || b == "quickreference.html"
			}},
		{name: "django", pkg: "python-django-doc", generator: "Sphinx", dir: "/usr/share/doc/python-django-doc/html",
			questions: true, howTo: true, dropTOC: true, skip: rtdSkip},
		{name: "rtd", generator: "Sphinx, Read-the-Docs theme", questions: true, howTo: true, dropTOC: true, skip: rtdSkip,
			parts: []part{
				{pkg: "python-scrapy-doc", dir: "/usr/share/doc/python-scrapy-doc/html", prefix: "scrapy"},
				{pkg: "numba-doc", dir: "/usr/share/doc/numba-doc/html", prefix: "numba"},
				{pkg: "python-ruffus-doc", dir: "/usr/share/doc/python-ruffus-doc/html", prefix: "ruffus"},
				{pkg: "ghostscript-doc", dir: "/usr/share/doc/ghostscript/html", prefix: "ghostscript"},
				{pkg: "libtango-doc", dir: "/usr/share/doc/tango/html", prefix: "tango"},
				{pkg: "python-ase-doc", dir: "/usr/share/doc/python-ase-doc/html", prefix: "ase"},
			}},
		{name: "faqlinks", generator: "Sphinx", answerLinks: true, dropTOC: true, skip: rtdSkip,
			parts: []part{
				{pkg: "python-django-doc", dir: "/usr/share/doc/python-django-doc/html", prefix: "django",
					faq: []string{"faq/admin.html", "faq/contributing.html", "faq/general.html", "faq/help.html",
						"faq/install.html", "faq/models.html", "faq/troubleshooting.html", "faq/usage.html"}},
				{pkg: "python-celery-doc", dir: "/usr/share/doc/python-celery-doc/html", prefix: "celery", faq: []string{"faq.html"}},
				{pkg: "borgbackup-doc", dir: "/usr/share/doc/borgbackup/html", prefix: "borg", faq: []string{"faq.html"}},
				{pkg: "python-scrapy-doc", dir: "/usr/share/doc/python-scrapy-doc/html", prefix: "scrapy", faq: []string{"faq.html"}},
			}},
		{name: "dbindex", generator: "DocBook (DSSSL)", bookIndex: true,
			skip: func(rel string) bool { return rel == "index.html" || rel == "bookindex.html" },
			parts: []part{
				{pkg: "pgpool2", dir: "/usr/share/doc/pgpool2", prefix: "pgpool", index: "bookindex.html", extract: true},
				{pkg: "slony1-2-doc", dir: "/usr/share/doc/slony1-2-doc/adminguide", prefix: "slony", index: "bookindex.html", extract: true},
			}},
		// The non-English sets (languages.go) follow git.
		{name: "git", pkg: "git-doc", generator: "AsciiDoc", dir: "/usr/share/doc/git-doc", identifiers: true, maxCases: 600,
			skip: func(rel string) bool { return rel == "index.html" }},
	}
}

// allSets are the English sets and then the non-English ones.
func allSets() []set { return append(append(sets(), languageSets()...), describingSets()...) }

type evalCase struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Relevant []string `json:"relevant"`
}

type dataset struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Cases       []evalCase `json:"cases"`
}

func main() {
	work := flag.String("work", filepath.Join(os.TempDir(), "askyourdocs-dev-eval"), "work folder")
	only := flag.String("sets", "", "comma-separated set names (default all)")
	answers := flag.Bool("answers", false, "build the answer sets (answers.go) named by -sets instead")
	flag.Parse()
	if *answers {
		for _, s := range answerSets() {
			if *only != "" && !strings.Contains(","+*only+",", ","+s.name+",") {
				continue
			}
			if err := buildAnswers(s, filepath.Join(*work, s.name)); err != nil {
				fmt.Fprintf(os.Stderr, "dev-eval: %s: %v\n", s.name, err)
				os.Exit(1)
			}
		}
		return
	}
	for _, s := range allSets() {
		if *only != "" && !strings.Contains(","+*only+",", ","+s.name+",") {
			continue
		}
		if err := build(s, filepath.Join(*work, s.name)); err != nil {
			fmt.Fprintf(os.Stderr, "dev-eval: %s: %v\n", s.name, err)
			os.Exit(1)
		}
	}
}

var (
	numberRE = regexp.MustCompile(`^(Chapter\s+\d+[.:]?|Appendix\s+[A-Z][.:]?|([0-9A-Z]+\.)+[0-9]*[.:]?|[0-9]+:)\s*`)
	spaceRE  = regexp.MustCompile(`\s+`)
)

func build(s set, out string) error {
	parts := s.parts
	if parts == nil {
		parts = []part{{pkg: s.pkg, dir: s.dir}}
	}
	corpus := filepath.Join(out, "corpus")
	if err := os.RemoveAll(corpus); err != nil {
		return err
	}
	// pages are corpus paths; src maps them to the file they copy.
	var pages []string
	var labels []label
	src := map[string]string{}
	var faqs []string // corpus-relative names of the FAQ pages (answerLinks), not copied
	for i, pt := range parts {
		if pt.extract {
			pt.dir = filepath.Join(filepath.Dir(out), "pkgs", pt.pkg, pt.dir)
			parts[i] = pt
		}
		if _, err := os.Stat(pt.dir); err != nil {
			return fmt.Errorf("%w (apt-get install -y %s)", err, pt.pkg)
		}
		if s.manPages {
			ps, ls, err := manCorpus(pt.dir, corpus, s.dropDescription)
			if err != nil {
				return err
			}
			pages, labels = append(pages, ps...), append(labels, ls...)
			continue
		}
		err := filepath.WalkDir(pt.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
				return err
			}
			rel, _ := filepath.Rel(pt.dir, p)
			rel = filepath.ToSlash(rel)
			if s.skip(rel) {
				return nil
			}
			if s.dropTOC {
				toc, err := tocPage(p)
				if err != nil || toc {
					return err
				}
			}
			faq := slices.Contains(pt.faq, rel)
			rel = path.Join(pt.prefix, rel)
			src[rel] = p
			if faq {
				faqs = append(faqs, rel)
			} else {
				pages = append(pages, rel)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(pages)
	inCorpus := map[string]bool{}
	for _, rel := range pages {
		src, ok := src[rel]
		if !ok { // written by manCorpus
			inCorpus[rel] = true
			continue
		}
		if err := copyFile(src, filepath.Join(corpus, filepath.FromSlash(rel))); err != nil {
			return err
		}
		inCorpus[rel] = true
		if s.index != "" || s.answerLinks || s.bookIndex || s.loIndex {
			continue
		}
		var hs []string
		var err error
		if s.identifiers {
			hs, err = identifierTerms(src)
		} else {
			hs, err = pageHeadings(src)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, h := range hs {
			if s.questions && !strings.HasSuffix(h, "?") && !(s.howTo && howToRE.MatchString(h)) {
				continue
			}
			labels = append(labels, label{h, rel})
		}
	}
	for _, rel := range faqs {
		qs, err := answerTargets(src[rel])
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, q := range qs {
			for _, h := range q.hrefs {
				page, _, _ := strings.Cut(h, "#")
				if page == "" || strings.Contains(page, ":") {
					continue
				}
				page = path.Clean(path.Join(path.Dir(rel), page))
				if inCorpus[page] {
					labels = append(labels, label{q.question, page})
				}
			}
		}
	}
	for _, pt := range parts {
		if !s.bookIndex || pt.index == "" {
			continue
		}
		entries, err := docbookIndexEntries(filepath.Join(pt.dir, filepath.FromSlash(pt.index)))
		if err != nil {
			return err
		}
		for _, e := range entries {
			page := path.Join(pt.prefix, path.Dir(pt.index), e[1])
			if inCorpus[page] {
				labels = append(labels, label{e[0], page})
			}
		}
	}
	for _, pt := range parts {
		if !s.loIndex {
			break
		}
		entries, err := loIndexEntries(pt.dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if inCorpus[e[1]] {
				labels = append(labels, label{e[0], e[1]})
			}
		}
	}
	if s.index != "" {
		entries, err := indexEntries(s.dir, s.index, s.indexHref)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if inCorpus[e[1]] {
				labels = append(labels, label{e[0], e[1]})
			}
		}
	}
	byText := map[string][]string{}
	var order []string
	for _, l := range labels {
		key := strings.ToLower(l.text)
		if _, ok := byText[key]; !ok {
			order = append(order, l.text)
		}
		if !slices.Contains(byText[key], l.page) {
			byText[key] = append(byText[key], l.page)
		}
	}
	var versions []string
	for _, pt := range parts {
		v, _ := exec.Command("dpkg-query", "-W", "-f", "${Version}", pt.pkg).Output()
		if pt.extract {
			debs, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "pkgs", pt.pkg+"_*.deb"))
			if len(debs) > 0 {
				v, _ = exec.Command("dpkg-deb", "-f", debs[0], "Version").Output()
			}
		}
		versions = append(versions, pt.pkg+" "+strings.TrimSpace(string(v)))
	}
	how := "section headings (h1-h4, numbers and permalink marks removed, one-word headings and headings on more than 3 pages left out) -> the page"
	switch {
	case s.loIndex:
		how = "translated entries of the keyword index (bookmarks.js; \"term -- subterm\" as \"term subterm\") -> the pages they link"
	case s.manPages:
		how = "the description of each page's NAME line (after \"name - \"), descriptions on more than 3 pages left out -> the page"
		if s.dropDescription {
			how += " (the description cut from the page)"
		}
	case s.bookIndex:
		how = "entries of the back-of-book indexes (\"term\" or \"term subterm\") -> the pages they link"
	case s.index != "":
		how = "entries of the index " + s.index + " -> the pages they link"
	case s.answerLinks:
		how = "FAQ questions (headings ending in '?') -> the other pages of the manual their answers link to (at most 3), the FAQ pages left out of the corpus"
	case s.questions && s.howTo:
		how = "section headings ending in '?' or starting \"How to/do/does/can/should\" (numbers removed, headings on more than 3 pages left out) -> the page"
	case s.questions:
		how = "section headings ending in '?' (numbers removed, headings on more than 3 pages left out) -> the page"
	case s.identifiers:
		how = "options (--name) and configuration variables (a.b) defined in definition lists, on at most 3 pages -> those pages"
	}
	what := s.name + " manual"
	if len(parts) > 1 {
		what = fmt.Sprintf("%d manuals", len(parts))
	}
	ds := dataset{Name: s.name, Description: fmt.Sprintf("%s (%s) from %s: %s; %d corpus pages.",
		what, s.generator, strings.Join(versions, ", "), how, len(pages))}
	var kept []string
	for _, t := range order {
		if s.index == "" && !s.bookIndex && !s.loIndex && len(byText[strings.ToLower(t)]) > 3 {
			continue
		}
		kept = append(kept, t)
	}
	if s.maxCases > 0 && len(kept) > s.maxCases {
		// Every k-th label in sorted order: a sample that does not depend
		// on page order.
		sort.Strings(kept)
		k := (len(kept) + s.maxCases - 1) / s.maxCases
		var sample []string
		for i := 0; i < len(kept); i += k {
			sample = append(sample, kept[i])
		}
		kept = sample
		ds.Description += fmt.Sprintf(" One in %d of the sorted labels.", k)
	}
	for _, t := range kept {
		rel := byText[strings.ToLower(t)]
		ds.Cases = append(ds.Cases, evalCase{ID: fmt.Sprintf("%s-%d", s.name, len(ds.Cases)+1), Question: t, Relevant: rel})
	}
	b, err := json.MarshalIndent(ds, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "dataset.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s (%s): %d pages, %d questions\n", s.name, s.generator, len(pages), len(ds.Cases))
	return nil
}

// parse reads an HTML file.
func parse(p string) (*html.Node, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return html.Parse(f)
}

// pageHeadings returns the cleaned text of each h1-h4 heading of a page
// with at least two words.
func pageHeadings(p string) ([]string, error) {
	doc, err := parse(p)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.H1, atom.H2, atom.H3, atom.H4:
				text := headingText(n)
				if len(strings.Fields(text)) >= 2 {
					out = append(out, text)
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

// headingText returns a heading's text with permalink marks and
// section numbers removed.
func headingText(n *html.Node) string {
	text := strings.ReplaceAll(textOf(n), "\u00a0", " ")
	text = strings.Trim(strings.TrimSpace(spaceRE.ReplaceAllString(text, " ")), "¶#🔗 ")
	return strings.TrimSpace(numberRE.ReplaceAllString(text, ""))
}

// faqAnswer is a FAQ question and the links of its answer.
type faqAnswer struct {
	question string
	hrefs    []string
}

// answerTargets returns each question of a Sphinx FAQ page (a section
// whose heading ends in '?') with the hrefs of its answer: the links in
// that section outside its heading and its subsections.
func answerTargets(p string) ([]faqAnswer, error) {
	doc, err := parse(p)
	if err != nil {
		return nil, err
	}
	isSection := func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return false
		}
		if n.DataAtom == atom.Section {
			return true
		}
		for _, a := range n.Attr {
			if a.Key == "class" && slices.Contains(strings.Fields(a.Val), "section") && n.DataAtom == atom.Div {
				return true
			}
		}
		return false
	}
	isHeading := func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			return n.Type == html.ElementNode
		}
		return false
	}
	var out []faqAnswer
	var links func(n *html.Node, acc *[]string)
	links = func(n *html.Node, acc *[]string) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if isSection(c) || isHeading(c) {
				continue
			}
			if c.Type == html.ElementNode && c.DataAtom == atom.A {
				for _, a := range c.Attr {
					if a.Key == "href" {
						*acc = append(*acc, a.Val)
					}
				}
			}
			links(c, acc)
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if isSection(n) {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if isHeading(c) {
					if q := headingText(c); strings.HasSuffix(q, "?") {
						a := faqAnswer{question: q}
						links(n, &a.hrefs)
						out = append(out, a)
					}
					break
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

// indexEntries returns (entry text, target page) for every link of the
// index page index (relative to dir) whose href matches re; target pages
// are relative to dir.
func indexEntries(dir, index string, re *regexp.Regexp) ([][2]string, error) {
	doc, err := parse(filepath.Join(dir, filepath.FromSlash(index)))
	if err != nil {
		return nil, err
	}
	base := path.Dir(index)
	var out [][2]string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.A {
			for _, a := range n.Attr {
				if a.Key == "href" && re.MatchString(a.Val) {
					page, _, _ := strings.Cut(a.Val, "#")
					text := strings.TrimSpace(spaceRE.ReplaceAllString(textOf(n), " "))
					if text != "" && page != "" {
						out = append(out, [2]string{text, path.Clean(path.Join(base, page))})
					}
				}
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

var (
	// configVarRE is a configuration variable as git's manual writes it
	// ("core.autocrlf", "http.sslVerify"), without placeholders.
	configVarRE = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*(\.[a-zA-Z0-9][a-zA-Z0-9-]*)+$`)
	// optionRE is a long option ("--allow-empty").
	optionRE = regexp.MustCompile(`^--[a-z0-9][a-z0-9-]{2,}$`)
)

// identifierTerms returns the options and configuration variables that a
// page defines: the terms of its definition lists (<dt>), each item of
// "-q, --quiet" separately, cut before "=" or "[" or a space.
func identifierTerms(p string) ([]string, error) {
	doc, err := parse(p)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Dt {
			for item := range strings.SplitSeq(textOf(n), ",") {
				item = strings.TrimSpace(item)
				if i := strings.IndexAny(item, "=[ \t\n<"); i >= 0 {
					item = item[:i]
				}
				if (optionRE.MatchString(item) || configVarRE.MatchString(item)) && !slices.Contains(out, item) {
					out = append(out, item)
				}
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

// tocPage reports whether more than half of the text of a page's main
// content (the element with role="main", else the body) lies in Sphinx
// toctrees: a table of contents under another name ("index_for_users",
// "toc", a chapter's front page).
func tocPage(p string) (bool, error) {
	doc, err := parse(p)
	if err != nil {
		return false, err
	}
	var main, body *html.Node
	var find func(n *html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if n.DataAtom == atom.Body && body == nil {
				body = n
			}
			for _, a := range n.Attr {
				if a.Key == "role" && a.Val == "main" && main == nil {
					main = n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if main == nil {
		main = body
	}
	if main == nil {
		return false, nil
	}
	var all, toc int
	var count func(n *html.Node, inTOC bool)
	count = func(n *html.Node, inTOC bool) {
		switch n.Type {
		case html.TextNode:
			k := len(strings.TrimSpace(n.Data))
			all += k
			if inTOC {
				toc += k
			}
		case html.ElementNode:
			if n.DataAtom == atom.Script || n.DataAtom == atom.Style {
				return
			}
			for _, a := range n.Attr {
				if a.Key == "class" && strings.Contains(a.Val, "toctree-wrapper") {
					inTOC = true
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			count(c, inTOC)
		}
	}
	count(main, false)
	return all > 0 && 2*toc > all, nil
}

// textOf returns the text of n without Sphinx-style permalink anchors.
func textOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.A {
		for _, a := range n.Attr {
			if a.Key == "class" && strings.Contains(a.Val, "headerlink") {
				return ""
			}
		}
	}
	var sb strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sb.WriteString(textOf(c))
	}
	return sb.String()
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
