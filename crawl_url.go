package engine

import (
	"net"
	"net/url"
	"path"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// crawlNormalize returns the URL the crawler fetches for u and the key it
// uses to recognise the same page under another spelling.
//
// The URL has the scheme and host lower-cased, a trailing dot of the host,
// a default port (80 for http, 443 for https), user info and fragment
// dropped, percent-encodings of unreserved characters decoded and the others
// upper-cased, dot segments and doubled slashes removed, and query
// parameters sorted by name (stable, so repeated names keep their order).
// The key additionally ignores the scheme, a trailing slash and a final
// index.html or index.htm segment.
func crawlNormalize(u *url.URL) (*url.URL, string) {
	scheme := strings.ToLower(u.Scheme)
	host := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	hostport := host
	switch {
	case port != "":
		hostport = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		hostport = "[" + host + "]"
	}

	p := crawlNormalizeEscapes(u.EscapedPath())
	trailing := strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") || p == "." || p == ".."
	p = path.Clean("/" + p)
	if trailing && p != "/" {
		p += "/"
	}

	query := crawlNormalizeQuery(u.RawQuery)
	raw := scheme + "://" + hostport + p
	if query != "" {
		raw += "?" + query
	}
	n, err := url.Parse(raw)
	if err != nil { // cannot happen for parts taken from a parsed URL
		v := *u
		v.Fragment, v.RawFragment, v.User = "", "", nil
		n = &v
	}

	keyPath := p
	if base := path.Base(keyPath); strings.EqualFold(base, "index.html") || strings.EqualFold(base, "index.htm") {
		keyPath = path.Dir(keyPath)
	}
	keyPath = strings.TrimSuffix(keyPath, "/")
	key := "//" + hostport + keyPath
	if query != "" {
		key += "?" + query
	}
	return n, key
}

// crawlNormalizeEscapes decodes percent-encoded unreserved characters and
// upper-cases the hex digits of the remaining escapes.
func crawlNormalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	unhex := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				v := hi<<4 | lo
				if v >= 'a' && v <= 'z' || v >= 'A' && v <= 'Z' || v >= '0' && v <= '9' || v == '-' || v == '.' || v == '_' || v == '~' {
					b.WriteByte(v)
				} else {
					b.WriteByte('%')
					b.WriteByte(hexDigits[v>>4])
					b.WriteByte(hexDigits[v&15])
				}
				i += 2
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// crawlNormalizeQuery drops empty parameters and sorts the others by name.
func crawlNormalizeQuery(q string) string {
	if q == "" {
		return ""
	}
	var params []string
	for p := range strings.SplitSeq(q, "&") {
		if p != "" {
			params = append(params, crawlNormalizeEscapes(p))
		}
	}
	slices.SortStableFunc(params, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	return strings.Join(params, "&")
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
