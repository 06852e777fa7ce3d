package main

// The answer sets (issue 39): FAQ questions asked of the whole manual
// they stand in, with mechanical gold: the first paragraph of the FAQ's
// own answer, and that answer's whole section for precision. Each corpus
// is the manual's folder as a user has it (every .html and .txt file,
// Sphinx's _sources copies and the FAQ page included), so that the
// answer must be found, quoted and not diluted.
//
//	ans-django  Sphinx        python-django-doc   faq/*.html sections whose heading ends in '?'
//	ans-rtd     Sphinx        python-celery-doc, borgbackup-doc, python-scrapy-doc, snakemake-doc: their FAQ pages
//	ans-zsh     yodl          zsh-doc             FAQ01-06.html: h2 questions and the paragraphs after them
//	ans-git     AsciiDoc      git-doc             gitfaq.html: definition-list questions (dt) and answers (dd)
//
// scripts/dev-eval/answers.py asks each question through the CLI and
// scores the answers next to a lead-2 baseline.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// answerSet is one answer set: manuals (dir copied under prefix) and
// their FAQ pages in one layout.
type answerSet struct {
	name   string
	layout string // "sections" (Sphinx), "flat" (headings then paragraphs), "dl" (dt question, dd answer)
	parts  []answerPart
}

type answerPart struct {
	dir, prefix string
	faq         []string
}

func answerSets() []answerSet {
	django := []string{"faq/admin.html", "faq/contributing.html", "faq/general.html", "faq/help.html",
		"faq/install.html", "faq/models.html", "faq/troubleshooting.html", "faq/usage.html"}
	return []answerSet{
		{name: "ans-django", layout: "sections", parts: []answerPart{
			{dir: "/usr/share/doc/python-django-doc/html", prefix: "django", faq: django}}},
		{name: "ans-rtd", layout: "sections", parts: []answerPart{
			{dir: "/usr/share/doc/python-celery-doc/html", prefix: "celery", faq: []string{"faq.html"}},
			{dir: "/usr/share/doc/borgbackup/html", prefix: "borg", faq: []string{"faq.html"}},
			{dir: "/usr/share/doc/python-scrapy-doc/html", prefix: "scrapy", faq: []string{"faq.html"}},
			{dir: "/usr/share/doc/snakemake/html", prefix: "snakemake", faq: []string{"project_info/faq.html"}}}},
		{name: "ans-zsh", layout: "flat", parts: []answerPart{
			{dir: "/usr/share/doc/zsh-doc/html", prefix: "zsh",
				faq: []string{"FAQ01.html", "FAQ02.html", "FAQ03.html", "FAQ04.html", "FAQ05.html", "FAQ06.html"}}}},
		{name: "ans-git", layout: "dl", parts: []answerPart{
			{dir: "/usr/share/doc/git-doc", prefix: "git", faq: []string{"gitfaq.html"}}}},
	}
}

// answerCase is one question with its gold paragraph and section.
type answerCase struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Gold     string `json:"gold"`
	Section  string `json:"section"`
	Page     string `json:"page"`
}

// buildAnswers copies the manuals to out/corpus and writes
// out/answers.json.
func buildAnswers(s answerSet, out string) error {
	corpus := filepath.Join(out, "corpus")
	if err := os.RemoveAll(corpus); err != nil {
		return err
	}
	var cases []answerCase
	for _, p := range s.parts {
		err := filepath.WalkDir(p.dir, func(f string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !(strings.HasSuffix(f, ".html") || strings.HasSuffix(f, ".txt")) {
				return nil
			}
			rel, err := filepath.Rel(p.dir, f)
			if err != nil {
				return err
			}
			return copyFile(f, filepath.Join(corpus, p.prefix, rel))
		})
		if err != nil {
			return err
		}
		for _, faq := range p.faq {
			doc, err := parse(filepath.Join(p.dir, filepath.FromSlash(faq)))
			if err != nil {
				return err
			}
			for _, c := range faqCases(doc, s.layout) {
				c.Page = path.Join(p.prefix, faq)
				c.ID = fmt.Sprintf("%s-%d", s.name, len(cases)+1)
				cases = append(cases, c)
			}
		}
	}
	if len(cases) == 0 {
		return fmt.Errorf("no FAQ questions found")
	}
	b, err := json.MarshalIndent(map[string]any{"name": s.name, "cases": cases}, "", " ")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d questions\n", s.name, len(cases))
	return os.WriteFile(filepath.Join(out, "answers.json"), b, 0o644)
}

// faqCases finds a FAQ page's questions, each with the first paragraph
// of its answer (at least six words) and the answer's whole text.
func faqCases(doc *html.Node, layout string) []answerCase {
	var out []answerCase
	add := func(q string, gold, section []*html.Node) {
		q = headingText(&html.Node{Type: html.TextNode, Data: q})
		g := clean(nodesText(gold))
		if !strings.HasSuffix(q, "?") || len(strings.Fields(g)) < 6 {
			return
		}
		out = append(out, answerCase{Question: q, Gold: g, Section: clean(q + " " + nodesText(section))})
	}
	isHeading := func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			return n.Type == html.ElementNode
		}
		return false
	}
	isSection := func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return false
		}
		if n.DataAtom == atom.Section {
			return true
		}
		return n.DataAtom == atom.Div && strings.Contains(" "+attr(n, "class")+" ", " section ")
	}
	// firstP is the first paragraph under n outside nested sections.
	var firstP func(n *html.Node) *html.Node
	firstP = func(n *html.Node) *html.Node {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if isSection(c) || isHeading(c) {
				continue
			}
			if c.Type == html.ElementNode && c.DataAtom == atom.P {
				return c
			}
			if p := firstP(c); p != nil {
				return p
			}
		}
		return nil
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch {
		case layout == "sections" && isSection(n):
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if isHeading(c) {
					if p := firstP(n); p != nil {
						var rest []*html.Node
						for r := c.NextSibling; r != nil; r = r.NextSibling {
							rest = append(rest, r)
						}
						add(textOf(c), []*html.Node{p}, rest)
					}
					break
				}
			}
		case layout == "flat" && n.Type == html.ElementNode && (n.DataAtom == atom.H2 || n.DataAtom == atom.H3):
			var rest []*html.Node
			var gold *html.Node
			for r := n.NextSibling; r != nil && !isHeading(r); r = r.NextSibling {
				rest = append(rest, r)
				if gold == nil && r.Type == html.ElementNode && r.DataAtom == atom.P {
					gold = r
				}
			}
			if gold != nil {
				add(textOf(n), []*html.Node{gold}, rest)
			}
		case layout == "dl" && n.Type == html.ElementNode && n.DataAtom == atom.Dt:
			dd := n.NextSibling
			for dd != nil && dd.Type != html.ElementNode {
				dd = dd.NextSibling
			}
			if dd != nil && dd.DataAtom == atom.Dd {
				if p := firstP(dd); p != nil {
					add(textOf(n), []*html.Node{p}, []*html.Node{dd})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func nodesText(ns []*html.Node) string {
	var sb strings.Builder
	for _, n := range ns {
		sb.WriteString(blockText(n))
		sb.WriteString(" ")
	}
	return sb.String()
}

// blockText is textOf with a space at block boundaries.
func blockText(n *html.Node) string {
	if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style) {
		return ""
	}
	if n.Type != html.ElementNode || n.FirstChild == nil {
		return textOf(n)
	}
	var sb strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sb.WriteString(blockText(c))
		if c.Type == html.ElementNode {
			switch c.DataAtom {
			case atom.P, atom.Div, atom.Li, atom.Pre, atom.Dt, atom.Dd, atom.Tr, atom.Br, atom.Section:
				sb.WriteString(" ")
			}
		}
	}
	return sb.String()
}

func clean(s string) string {
	return strings.TrimSpace(spaceRE.ReplaceAllString(strings.ReplaceAll(s, "\u00a0", " "), " "))
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
