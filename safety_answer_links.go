package engine

import (
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// link reports whether a Markdown link starts at the '[' at s[open] and
// returns the index just after it: "[t](dest "title")", "[t][ref]",
// "[t][]" or "[ref]" for a defined reference.
func (sc *answerScanner) link(s string, open, to int, brackets answerBrackets) (int, bool) {
	close, ok := brackets.match(open)
	if !ok || close >= to {
		return 0, false
	}
	after := close + 1
	if after < to && s[after] == '(' {
		if end, ok := answerInlineDest(s, after, to); ok {
			return end, true
		}
	}
	if after < to && s[after] == '[' {
		if c2, ok := brackets.match(after); ok && c2 < to {
			label := s[after+1 : c2]
			if label == "" {
				label = s[open+1 : close]
			}
			if sc.hasRef(label) {
				return c2 + 1, true
			}
		}
	}
	if sc.hasRef(s[open+1 : close]) {
		return after, true
	}
	return 0, false
}

// hasRef reports whether label names a reference definition. Labels longer
// than 999 bytes are never references (CommonMark's limit), which also keeps
// a text of nested brackets linear.
func (sc *answerScanner) hasRef(label string) bool {
	if len(sc.refs) == 0 || len(label) > 999 {
		return false
	}
	_, ok := sc.refs[foldRefLabel(label)]
	return ok
}

// linkDest returns the destination of the link s[open:end] whose text ends
// at close.
func (sc *answerScanner) linkDest(s string, open, close, end int) string {
	after := close + 1
	if after < end && s[after] == '(' {
		d := strings.TrimSpace(s[after+1 : end-1])
		if strings.HasPrefix(d, "<") {
			if j := strings.IndexByte(d, '>'); j > 0 {
				return d[1:j]
			}
		}
		if j := strings.IndexAny(d, " \t\n"); j >= 0 {
			d = d[:j]
		}
		return d
	}
	label := s[open+1 : close]
	if after < end && s[after] == '[' && end-after > 2 {
		label = s[after+1 : end-1]
	}
	return sc.refs[foldRefLabel(label)]
}

// answerInlineDest parses "(dest "title")" starting at the '(' at s[p] and
// returns the index after the closing ')'.
func answerInlineDest(s string, p, to int) (int, bool) {
	const maxDest = 2048
	i := p + 1
	limit := min(to, p+maxDest)
	for i < limit && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	if i < limit && s[i] == '<' {
		j := strings.IndexAny(s[i:limit], ">\n")
		if j < 0 || s[i+j] != '>' {
			return 0, false
		}
		i += j + 1
	} else {
		depth := 0
		for i < limit {
			c := s[i]
			if c == '\\' && i+1 < limit {
				i += 2
				continue
			}
			if c <= ' ' {
				break
			}
			if c == '(' {
				// cmark allows 32 levels; a deeper destination is not a
				// link, which keeps "[a]([a]([a](..." linear.
				if depth++; depth > 32 {
					return 0, false
				}
			} else if c == ')' {
				if depth == 0 {
					break
				}
				depth--
			}
			i++
		}
	}
	for i < limit && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	if i < limit && (s[i] == '"' || s[i] == '\'' || s[i] == '(') {
		closer := s[i]
		if closer == '(' {
			closer = ')'
		}
		j := strings.IndexByte(s[i+1:limit], closer)
		if j < 0 {
			return 0, false
		}
		i += j + 2
		for i < limit && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
	}
	if i < limit && s[i] == ')' {
		return i + 1, true
	}
	return 0, false
}

// answerBrackets maps the index of each '[' of a text to the index of its
// matching ']'.
type answerBrackets []int32

// match returns the index of the ']' matching the '[' at open.
func (br answerBrackets) match(open int) (int, bool) {
	if open < 0 || open >= len(br) || br[open] <= 0 {
		return 0, false
	}
	return int(br[open]), true
}

// matchAnswerBrackets returns the matching ']' for each '[' in s that has
// one (backslash escapes respected), in one pass.
func matchAnswerBrackets(s string) answerBrackets {
	if strings.IndexByte(s, '[') < 0 {
		return nil
	}
	m := make(answerBrackets, len(s))
	var stack []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			stack = append(stack, i)
		case ']':
			if n := len(stack); n > 0 {
				m[stack[n-1]] = int32(i)
				stack = stack[:n-1]
			}
		}
	}
	return m
}

// foldRefLabel normalises a reference label the way CommonMark matches
// them: case-insensitive, inner white space collapsed.
func foldRefLabel(label string) string {
	return strings.ToLower(strings.Join(strings.Fields(label), " "))
}

// answerLooksLikeURL reports whether link text is itself a URL, so keeping
// it would keep the target.
func answerLooksLikeURL(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "://") || strings.Contains(t, "www.") || strings.HasPrefix(strings.TrimSpace(t), "mailto:")
}

// answerAutolinkLen returns the length of the autolink "<scheme:...>" at
// the start of s and its URL, or 0.
func answerAutolinkLen(s string) (int, string) {
	i := 1
	if i >= len(s) || !answerASCIILetter(s[i]) {
		return 0, ""
	}
	for i++; i < len(s) && i <= 33 && (answerASCIILetter(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '.' || s[i] == '-'); i++ {
	}
	if i < 3 || i >= len(s) || s[i] != ':' {
		return 0, ""
	}
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '>':
			return i + 1, s[1:i]
		case c <= ' ' || c == '<' || c == 0x7f:
			return 0, ""
		}
	}
	return 0, ""
}

// answerTagLen returns the length of the HTML start or end tag, or the
// declaration or processing instruction ("<!x>", "<?x>"), at the start of
// s, or 0. Attributes may not contain '<'.
func answerTagLen(s string) int {
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '?') {
		i++
	} else {
		if i < len(s) && s[i] == '/' {
			i++
		}
		if i >= len(s) || !answerASCIILetter(s[i]) {
			return 0
		}
		for i++; i < len(s) && (answerASCIILetter(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '-'); i++ {
		}
		if i < len(s) && s[i] != '>' && s[i] != '/' && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' && s[i] != '\f' {
			return 0
		}
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case '>':
			return i + 1
		case '<':
			return 0
		}
	}
	return 0
}

func answerASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// markup handles what starts with '<' at s[i]: an autolink, an HTML
// comment, CDATA section, declaration or tag. It writes what remains of it
// to b and returns the index after it, or false if s[i] starts none of them.
func (sc *answerScanner) markup(b *strings.Builder, s string, i, to int) (int, bool) {
	rest := s[i:to]
	if n, u := answerAutolinkLen(rest); n > 0 {
		if sc.urlAllowed(u) {
			b.WriteString(rest[:n])
		} else {
			sc.leak("link:" + u)
			b.WriteString(sc.marker)
		}
		return i + n, true
	}
	for _, pair := range [][2]string{{"<!--", "-->"}, {"<![CDATA[", "]]>"}} {
		if strings.HasPrefix(rest, pair[0]) {
			sc.leak("html")
			j := strings.Index(rest[len(pair[0]):], pair[1])
			if j < 0 {
				return to, true
			}
			return i + len(pair[0]) + j + len(pair[1]), true
		}
	}
	n := answerTagLen(rest)
	if n == 0 {
		return 0, false
	}
	m := rest[:n]
	if m[1] == '!' || m[1] == '?' {
		sc.leak("html")
		return i + n, true
	}
	sc.leak("html")
	end := i + len(m)
	name := strings.ToLower(strings.TrimLeft(m[1:], "/"))
	if k := strings.IndexFunc(name, func(r rune) bool { return !(r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) }); k >= 0 {
		name = name[:k]
	}
	if m[1] != '/' && (name == "script" || name == "style" || name == "iframe" || name == "textarea" || name == "noscript") {
		closeTag := "</" + name
		if j := answerIndexFold(s[end:to], closeTag); j >= 0 {
			k := strings.IndexByte(s[end+j:to], '>')
			if k < 0 {
				return to, true
			}
			return end + j + k + 1, true
		}
		return to, true
	}
	return end, true
}

// answerIndexFold is strings.Index ignoring ASCII case; sub is lower case.
func answerIndexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}

// answerBareURLEnd returns the end of a bare URL (http://, https://, ftp://
// or www.) starting at s[i], or i if none starts there. Like GitHub's
// autolinker it stops at white space and '<', and leaves trailing
// punctuation and unbalanced closing brackets out.
func answerBareURLEnd(s string, i, to int) int {
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '/' || r == '.' || r == '@' {
			return i
		}
	}
	rest := s[i:to]
	ok := false
	for _, p := range []string{"http://", "https://", "ftp://", "www."} {
		if len(rest) > len(p) && strings.EqualFold(rest[:len(p)], p) {
			ok = true
			break
		}
	}
	if !ok {
		return i
	}
	end := i
	for end < to {
		r, w := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) || r == '<' || r == '>' || r == '"' || r == '`' || r == '\\' || unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			break
		}
		end += w
	}
	for end > i {
		last := s[end-1]
		switch {
		case strings.IndexByte(".,:;!?*_~'", last) >= 0:
			end--
			continue
		case last == ')' && strings.Count(s[i:end], "(") < strings.Count(s[i:end], ")"):
			end--
			continue
		case last == ']' && strings.Count(s[i:end], "[") < strings.Count(s[i:end], "]"):
			end--
			continue
		}
		break
	}
	if end-i <= 8 { // a scheme or "www." with nothing after it
		return i
	}
	return end
}

// urlAllowed reports whether raw is allowed by sc.allowed (see
// SanitizeAnswerWithOptions).
func (sc *answerScanner) urlAllowed(raw string) bool {
	return answerURLAllowed(raw, sc.allowed)
}

func answerURLAllowed(raw string, allowed []string) bool {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return false
	}
	for _, a := range allowed {
		if strings.TrimSpace(a) == raw {
			return true
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Scheme == "" && strings.HasPrefix(strings.ToLower(raw), "www.") {
		if u, err = url.Parse("https://" + raw); err != nil {
			return false
		}
	}
	if u.Host == "" || u.Opaque != "" {
		return false
	}
	for _, a := range allowed {
		e, err := url.Parse(strings.TrimSpace(a))
		if err != nil || e.Host == "" || e.Opaque != "" {
			continue
		}
		if !strings.EqualFold(u.Host, e.Host) || !strings.EqualFold(u.Scheme, e.Scheme) || u.User.String() != e.User.String() {
			continue
		}
		up := answerCleanPath(u.Path)
		ep := answerCleanPath(e.Path)
		if e.RawQuery != "" {
			if up == ep && u.RawQuery == e.RawQuery {
				return true
			}
			continue
		}
		if ep == "/" || up == ep || strings.HasPrefix(up, ep+"/") {
			return true
		}
	}
	return false
}

// answerCleanPath cleans a URL path for comparison: "." and ".." resolved,
// no trailing slash, "/" for empty.
func answerCleanPath(p string) string {
	if p == "" {
		return "/"
	}
	return path.Clean("/" + p)
}
