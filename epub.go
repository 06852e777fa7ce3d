package engine

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

// extractEpub returns the paragraphs of the EPUB book of size bytes in r.
// Errors wrap ErrInvalidDocument or ErrDocumentTooLarge.
//
// The chapters (the package's spine, in order, including non-linear items)
// are read through HTMLToStructuredText. Each chapter's title, from the
// book's table of contents (the EPUB 3 navigation document, else the EPUB
// 2 NCX; the first entry pointing into the chapter's file) or else its
// first heading, becomes the top of the breadcrumb of every paragraph in
// it: "Chapter 2 > Section" for a heading "Section" inside. When the
// chapter's own first heading is the title already, it is not repeated;
// when the chapter has no heading with that title, a Heading paragraph with
// the title starts the chapter. Items that are not XHTML or HTML (images,
// styles) are skipped. PageNum is 0.
func extractEpub(r io.ReaderAt, size int64) ([]Paragraph, error) {
	a, err := openZipArchive(r, size, zipDefaultLimits, ErrInvalidDocument, ".epub")
	if err != nil {
		return nil, err
	}
	var container struct {
		Rootfiles []struct {
			Path string `xml:"full-path,attr"`
			Type string `xml:"media-type,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := a.parse("META-INF/container.xml", true, func(d *xml.Decoder) error { return d.Decode(&container) }); err != nil {
		return nil, err
	}
	opfPath := ""
	for _, rf := range container.Rootfiles {
		if rf.Type == "" || rf.Type == "application/oebps-package+xml" {
			opfPath = epubClean(rf.Path)
			break
		}
	}
	if opfPath == "" {
		return nil, fmt.Errorf("%w: META-INF/container.xml names no package document", ErrInvalidDocument)
	}
	var pkg struct {
		Title    []string `xml:"metadata>title"`
		Manifest []struct {
			ID    string `xml:"id,attr"`
			Href  string `xml:"href,attr"`
			Type  string `xml:"media-type,attr"`
			Props string `xml:"properties,attr"`
		} `xml:"manifest>item"`
		Spine struct {
			Toc   string `xml:"toc,attr"`
			Items []struct {
				IDRef string `xml:"idref,attr"`
			} `xml:"itemref"`
		} `xml:"spine"`
	}
	if err := a.parse(opfPath, true, func(d *xml.Decoder) error { return d.Decode(&pkg) }); err != nil {
		return nil, err
	}
	dir := path.Dir(opfPath)
	type item struct{ href, typ string }
	items := make(map[string]item, len(pkg.Manifest))
	navPath, ncxPath := "", ""
	for _, it := range pkg.Manifest {
		href := epubResolve(dir, it.Href)
		items[it.ID] = item{href, it.Type}
		if strings.Contains(" "+it.Props+" ", " nav ") {
			navPath = href
		}
		if it.ID == pkg.Spine.Toc {
			ncxPath = href
		}
	}
	titles := map[string]string{}
	switch {
	case navPath != "":
		if err := epubNavTitles(a, navPath, titles); err != nil {
			return nil, err
		}
	case ncxPath != "":
		if err := epubNCXTitles(a, ncxPath, titles); err != nil {
			return nil, err
		}
	}

	var out []Paragraph
	text := 0 // bytes of text in the chapters read
	seen := map[string]bool{}
	for _, ref := range pkg.Spine.Items {
		it, ok := items[ref.IDRef]
		if !ok || seen[it.href] {
			continue
		}
		seen[it.href] = true
		switch it.typ {
		case "application/xhtml+xml", "text/html", "application/x-dtbook+xml", "":
		default:
			continue
		}
		paras, err := epubReadChapter(a, it.href, maxDocumentTextBytes-text)
		if err != nil {
			return nil, err
		}
		for _, p := range paras {
			text += len(p.Text)
		}
		out = epubChapter(out, titles[it.href], paras)
		if len(out) > maxDocumentParagraphs {
			return nil, fmt.Errorf("%w: more than %d paragraphs", ErrDocumentTooLarge, maxDocumentParagraphs)
		}
	}
	return out, nil
}

// epubReadChapter returns the paragraphs of the chapter in the named part,
// streamed from the archive through the HTML reader with at most textLeft
// bytes of text (its input bounded as an HTML file's, see htmlParse).
func epubReadChapter(a *zipArchive, name string, textLeft int) ([]Paragraph, error) {
	rc, err := a.open(name)
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, fmt.Errorf("%w: spine item %s is missing", ErrInvalidDocument, name)
	}
	defer rc.Close()
	paras, err := htmlParseText(rc, false, textLeft)
	switch {
	case errors.Is(err, ErrDocumentTooLarge):
		return nil, fmt.Errorf("chapter %s: %w", name, err)
	case err != nil:
		return nil, fmt.Errorf("%w: chapter %s: %w", ErrInvalidDocument, name, err)
	}
	return paras, nil
}

// epubChapter appends a chapter's paragraphs to out under its title.
func epubChapter(out []Paragraph, title string, paras []Paragraph) []Paragraph {
	if len(paras) == 0 {
		return out
	}
	if title == "" {
		for _, p := range paras {
			if p.Heading {
				title = p.Text
				break
			}
		}
	}
	if title == "" {
		return append(out, paras...)
	}
	// The chapter's own top heading is the title: keep its breadcrumbs.
	top := ""
	for _, p := range paras {
		if p.Heading {
			top, _, _ = strings.Cut(p.Breadcrumb, " > ")
			break
		}
	}
	if strings.EqualFold(top, title) {
		for _, p := range paras {
			if !strings.HasPrefix(p.Breadcrumb, top) {
				p.Breadcrumb = title + epubSuffix(p.Breadcrumb)
			}
			out = append(out, p)
		}
		return out
	}
	out = append(out, Paragraph{Text: title, Heading: true, Breadcrumb: title})
	for _, p := range paras {
		p.Breadcrumb = title + epubSuffix(p.Breadcrumb)
		out = append(out, p)
	}
	return out
}

func epubSuffix(crumb string) string {
	if crumb == "" {
		return ""
	}
	return " > " + crumb
}

// epubClean returns a zip path for an archive-relative path.
func epubClean(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// epubResolve resolves href (relative, percent-encoded, maybe with a
// fragment) against the directory dir of the document it appears in.
func epubResolve(dir, href string) string {
	href, _, _ = strings.Cut(href, "#")
	if u, err := url.PathUnescape(href); err == nil {
		href = u
	}
	if strings.HasPrefix(href, "/") {
		return epubClean(href)
	}
	return epubClean(path.Join(dir, href))
}

// epubNavTitles reads the toc nav of an EPUB 3 navigation document: the
// first link to each file gives its title.
func epubNavTitles(a *zipArchive, navPath string, titles map[string]string) error {
	dir := path.Dir(navPath)
	return a.parse(navPath, false, func(d *xml.Decoder) error {
		d.Strict = false
		d.AutoClose = xml.HTMLAutoClose
		d.Entity = xml.HTMLEntity
		var (
			inToc, navDepth int
			href            string
			inLink          bool
			sb              strings.Builder
		)
		return xmlEachToken(d, func(tok xml.Token) error {
			switch t := tok.(type) {
			case xml.StartElement:
				if t.Name.Local == "nav" {
					navDepth++
					if inToc == 0 && (docxAttr(t, "type") == "toc" || strings.Contains(docxAttr(t, "type"), "toc")) {
						inToc = navDepth
					}
				}
				if inToc > 0 && t.Name.Local == "a" {
					inLink, href = true, docxAttr(t, "href")
					sb.Reset()
				}
			case xml.CharData:
				if inLink {
					return xmlWriteText(&sb, t)
				}
			case xml.EndElement:
				switch t.Name.Local {
				case "a":
					if inLink {
						inLink = false
						epubAddTitle(titles, epubResolve(dir, href), sb.String())
					}
				case "nav":
					if navDepth == inToc {
						inToc = 0
					}
					navDepth--
				}
			}
			return nil
		})
	})
}

// epubNCXTitles reads an EPUB 2 NCX: each navPoint's label and content src.
func epubNCXTitles(a *zipArchive, ncxPath string, titles map[string]string) error {
	dir := path.Dir(ncxPath)
	return a.parse(ncxPath, false, func(d *xml.Decoder) error {
		var (
			label  strings.Builder
			inText bool
		)
		return xmlEachToken(d, func(tok xml.Token) error {
			switch t := tok.(type) {
			case xml.StartElement:
				switch t.Name.Local {
				case "navPoint":
					label.Reset()
				case "text":
					inText = true
				case "content":
					epubAddTitle(titles, epubResolve(dir, docxAttr(t, "src")), label.String())
				}
			case xml.CharData:
				if inText {
					return xmlWriteText(&label, t)
				}
			case xml.EndElement:
				if t.Name.Local == "text" {
					inText = false
				}
			}
			return nil
		})
	})
}

func epubAddTitle(titles map[string]string, file, title string) {
	title = NormalizeSpaces(title)
	if _, ok := titles[file]; !ok && title != "" && len(titles) < 100000 {
		titles[file] = title
	}
}
