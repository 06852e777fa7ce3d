package main

import (
	"path"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// docbookIndexEntries returns (question, target page) pairs of a DocBook
// back-of-book index page as the DSSSL and XSL stylesheets write it: a
// definition list whose <dt> holds the term, a comma and links to the
// sections using it, with sub-entries in a nested list of the <dd> that
// follows. A sub-entry's question is its parent's term and its own
// ("failover command"); an entry with no link gives none. Target pages are
// relative to the index page's folder, fragments dropped.
func docbookIndexEntries(p string) ([][2]string, error) {
	doc, err := parse(p)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	var list func(dl *html.Node, parent string)
	list = func(dl *html.Node, parent string) {
		term := ""
		for c := dl.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Dt:
				term = docbookTerm(c)
				if parent != "" && term != "" {
					term = parent + " " + term
				}
				if term == "" {
					continue
				}
				for a := c.FirstChild; a != nil; a = a.NextSibling {
					if a.Type != html.ElementNode || a.DataAtom != atom.A {
						continue
					}
					for _, at := range a.Attr {
						if at.Key != "href" {
							continue
						}
						page, _, _ := strings.Cut(at.Val, "#")
						if page != "" && !strings.Contains(page, ":") {
							out = append(out, [2]string{term, path.Clean(page)})
						}
					}
				}
			case atom.Dd:
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.Type == html.ElementNode && d.DataAtom == atom.Dl {
						list(d, term)
					}
				}
			}
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Dl {
			list(n, "")
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

// docbookTerm returns the term of an index <dt>: its text outside the
// links, white space collapsed, the trailing comma and "see also" parts
// dropped.
func docbookTerm(dt *html.Node) string {
	var sb strings.Builder
	for c := dt.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.A {
			break // the term ends where the links begin
		}
		sb.WriteString(textOf(c))
	}
	t := strings.TrimSpace(spaceRE.ReplaceAllString(sb.String(), " "))
	if i := strings.Index(strings.ToLower(t), "(see"); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return strings.TrimSpace(strings.TrimSuffix(t, ","))
}
