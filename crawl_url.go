package engine

import (
	"net"
	"net/url"
	"path"
	"slices"
	"strings"
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

// crawlPageURL is the URL passed to indexPage and the cache: the final URL
// without fragment and user info.
func crawlPageURL(u *url.URL) string {
	v := *u
	v.Fragment, v.RawFragment, v.User = "", "", nil
	return v.String()
}

// crawlPathQuery returns the path and query robots.txt rules match.
func crawlPathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// crawlAssetExts are extensions of links that are never HTML pages.
var crawlAssetExts = map[string]bool{
	".css": true, ".js": true, ".mjs": true, ".json": true, ".map": true,
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".bmp": true, ".tif": true, ".tiff": true, ".avif": true,
	".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".eot": true,
	".mp3": true, ".mp4": true, ".m4a": true, ".webm": true, ".ogg": true, ".wav": true, ".avi": true, ".mov": true,
	".zip": true, ".gz": true, ".tgz": true, ".bz2": true, ".xz": true, ".7z": true, ".rar": true, ".tar": true,
	".exe": true, ".dmg": true, ".msi": true, ".iso": true, ".apk": true,
}

// crawlSkipExt reports whether u's path ends in an asset extension.
func crawlSkipExt(u *url.URL) bool {
	return crawlAssetExts[strings.ToLower(path.Ext(u.Path))]
}
