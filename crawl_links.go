package engine

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// crawlLinks is what a page tells the crawler.
type crawlLinks struct {
	links     []*url.URL
	canonical *url.URL
	noindex   bool
	nofollow  bool
}

// crawlExtractLinks returns the links (<a> and <area> href, resolved against
// <base href> or the page URL; http and https only), the rel=canonical URL
// and the <meta name="robots"> directives of an HTML page.
func crawlExtractLinks(pageURL *url.URL, body string) crawlLinks {
	var (
		out     crawlLinks
		base    = pageURL
		hrefs   []string
		sawBase bool
	)
	z := html.NewTokenizer(strings.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		tag := string(name)
		if tag != "a" && tag != "area" && tag != "link" && tag != "base" && tag != "meta" {
			continue
		}
		attrs := make(map[string]string, 4)
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			key := string(k)
			if _, dup := attrs[key]; !dup { // the first of duplicate attributes counts
				attrs[key] = string(v)
			}
		}
		switch tag {
		case "a", "area":
			if h, ok := attrs["href"]; ok {
				hrefs = append(hrefs, h)
			}
		case "base":
			if h, ok := attrs["href"]; ok && !sawBase {
				sawBase = true
				if b, err := pageURL.Parse(strings.TrimSpace(h)); err == nil && (b.Scheme == "http" || b.Scheme == "https") {
					base = b
				}
			}
		case "link":
			if out.canonical == nil && crawlHasToken(attrs["rel"], "canonical") {
				if c, err := pageURL.Parse(strings.TrimSpace(attrs["href"])); err == nil && attrs["href"] != "" && (c.Scheme == "http" || c.Scheme == "https") {
					out.canonical = c
				}
			}
		case "meta":
			n := strings.ToLower(strings.TrimSpace(attrs["name"]))
			if n != "robots" && n != crawlRobotsToken {
				continue
			}
			for d := range strings.SplitSeq(strings.ToLower(attrs["content"]), ",") {
				switch strings.TrimSpace(d) {
				case "noindex":
					out.noindex = true
				case "nofollow":
					out.nofollow = true
				case "none":
					out.noindex, out.nofollow = true, true
				}
			}
		}
	}
	for _, h := range hrefs {
		h = strings.TrimSpace(h)
		if h == "" || strings.HasPrefix(h, "#") {
			continue
		}
		l, err := base.Parse(h)
		if err != nil || (l.Scheme != "http" && l.Scheme != "https") || l.Host == "" {
			continue
		}
		out.links = append(out.links, l)
	}
	return out
}

// crawlHasToken reports whether the space-separated list s contains tok
// (case-insensitively).
func crawlHasToken(s, tok string) bool {
	for f := range strings.FieldsSeq(s) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}
