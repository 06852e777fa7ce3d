// Command build-evalset builds the CLI's retrieval evaluation set from two
// Debian documentation manuals installed as Debian packages: the Debian
// Reference (debian-reference-en, GPL-2+) and the Debian FAQ (debian-faq,
// verbatim-copying licence of Software in the Public Interest). Neither
// manual is committed; install them with
//
//	apt-get install -y debian-reference-en debian-faq
//
// It copies the manuals' content pages (chapters, preface, appendix; not the
// tables of contents, which list every heading, nor the PDF and text
// editions, which hold every chapter) into -corpus, and writes -out: one
// question per section heading, the heading's text with its number removed,
// and as relevant document the page that section is in (every page with a
// heading of that text, when a heading repeats). Headings of one word are
// left out: too vague to be a question. Nothing is written to fit the
// chunker; the questions are the manuals' own headings and FAQ questions.
//
// Usage (from the repository root):
//
//	go run ./scripts/build-evalset [-corpus /tmp/askyourdocs-eval/corpus] [-out testdata/cli/debian-eval.json]
//	go run ./cmd/askyourdocs --data /tmp/askyourdocs-eval/index index /tmp/askyourdocs-eval/corpus
//	go run ./cmd/askyourdocs --data /tmp/askyourdocs-eval/index eval --dataset testdata/cli/debian-eval.json
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// manual is one installed manual.
type manual struct {
	pkg     string // Debian package
	dir     string // where its HTML pages are
	subdir  string // the corpus folder it is copied to
	pattern string // glob of its content pages
	skip    map[string]bool
	licence string
}

func main() {
	corpus := flag.String("corpus", filepath.Join(os.TempDir(), "askyourdocs-eval", "corpus"), "folder the manuals' pages are copied to")
	out := flag.String("out", "testdata/cli/debian-eval.json", "dataset file to write")
	flag.Parse()
	if err := build(*corpus, *out); err != nil {
		fmt.Fprintln(os.Stderr, "build-evalset:", err)
		os.Exit(1)
	}
}

func manuals() []manual {
	return []manual{
		{pkg: "debian-reference-en", dir: "/usr/share/debian-reference", subdir: "debian-reference", pattern: "*.en.html",
			skip: map[string]bool{"index.en.html": true}, licence: "GPL-2+"},
		{pkg: "debian-faq", dir: "/usr/share/doc/debian/FAQ", subdir: "debian-faq", pattern: "*.en.html",
			skip: map[string]bool{"index.en.html": true}, licence: "verbatim and modified copies permitted with the notice (Software in the Public Interest)"},
	}
}

// evalCase and dataset follow cmd/askyourdocs' eval format.
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

var (
	numberRE = regexp.MustCompile(`^(Chapter\s+\d+\.|Appendix\s+[A-Z]\.|([0-9A-Z]+\.)+[0-9]*\.?)\s*`)
	spaceRE  = regexp.MustCompile(`\s+`)
)

func build(corpus, out string) error {
	type heading struct {
		text, page string
	}
	var headings []heading
	var versions []string
	for _, m := range manuals() {
		pages, err := filepath.Glob(filepath.Join(m.dir, m.pattern))
		if err != nil {
			return err
		}
		if len(pages) == 0 {
			return fmt.Errorf("no pages in %s: apt-get install -y %s", m.dir, m.pkg)
		}
		v, _ := exec.Command("dpkg-query", "-W", "-f", "${Version}", m.pkg).Output()
		versions = append(versions, fmt.Sprintf("%s %s (%s)", m.pkg, strings.TrimSpace(string(v)), m.licence))
		if err := os.MkdirAll(filepath.Join(corpus, m.subdir), 0o755); err != nil {
			return err
		}
		sort.Strings(pages)
		for _, p := range pages {
			base := filepath.Base(p)
			if m.skip[base] {
				continue
			}
			rel := m.subdir + "/" + base
			if err := copyFile(p, filepath.Join(corpus, rel)); err != nil {
				return err
			}
			hs, err := pageHeadings(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			for _, h := range hs {
				headings = append(headings, heading{text: h, page: rel})
			}
		}
	}
	// One question per distinct heading text; relevant = every page with it.
	byText := map[string][]string{}
	var order []string
	ids := map[string]string{}
	for _, h := range headings {
		key := strings.ToLower(h.text)
		if _, ok := byText[key]; !ok {
			order = append(order, h.text)
			ids[key] = fmt.Sprintf("%s-%d", strings.TrimSuffix(h.page, ".en.html"), len(order))
		}
		if !slices.Contains(byText[key], h.page) {
			byText[key] = append(byText[key], h.page)
		}
	}
	ds := dataset{
		Name: "debian-manuals-headings",
		Description: "Questions are the section headings of the Debian Reference and the Debian FAQ (numbers removed, " +
			"one-word headings left out); relevant is the HTML page the section is in. Built by scripts/build-evalset from " +
			strings.Join(versions, " and ") + ".",
	}
	for _, t := range order {
		key := strings.ToLower(t)
		ds.Cases = append(ds.Cases, evalCase{ID: ids[key], Question: t, Relevant: byText[key]})
	}
	b, err := json.MarshalIndent(ds, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("%d questions from %d headings; corpus in %s; dataset %s\n", len(ds.Cases), len(headings), corpus, out)
	return nil
}

// pageHeadings returns the text of each h1-h4 heading of a page,
// numbering removed; one-word headings are left out.
func pageHeadings(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.H1, atom.H2, atom.H3, atom.H4:
				text := strings.ReplaceAll(textOf(n), "\u00a0", " ")
				text = strings.TrimSpace(spaceRE.ReplaceAllString(text, " "))
				text = strings.TrimSpace(numberRE.ReplaceAllString(text, ""))
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

func textOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var sb strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sb.WriteString(textOf(c))
	}
	return sb.String()
}

func copyFile(src, dst string) error {
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
	return errors.Join(out.Close())
}
