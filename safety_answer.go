package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// removedLinkMarker replaces a link or URL that SanitizeAnswerWithOptions
// drops unless the labels name another marker (GermanLabels.RemovedLink).
const removedLinkMarker = "[Link entfernt]"

// SanitizeAnswerWithOptions returns a model's answer with what could leak data or
// mislead the reader taken out: Markdown images (inline "![a](u)" and
// reference style "![a][r]", which a renderer fetches without a click, so a
// URL carrying data leaks it; the alt text stays as plain text,
// docs/compat.md), raw HTML (tags and comments are removed, the
// text between tags is kept; script and style elements go whole), and every
// link or bare URL that is not allowed. A link keeps its text followed by
// o.Labels.RemovedLink (nil or "": "[Link entfernt]", EnglishLabels' is
// "[link removed]"; the text goes too when
// it is itself a URL); a bare URL or autolink becomes the marker alone.
// Reference definitions of dropped
// targets are removed.
//
// allowedURLs are the answer's own source URLs. A URL is allowed when it
// equals an entry, or has the same scheme, host and port and a path that
// extends the entry's at a path boundary: "https://a.b/docs" allows
// "https://a.b/docs", "https://a.b/docs/x" and "https://a.b/docs#s", but not
// "https://a.b/docs2", "https://a.b/docs/../admin" nor "https://a.b.evil.com".
// An entry with a query allows only that exact document.
//
// It works on the complete answer. When streaming, render
// neither images nor links until the answer is done, then replace what was
// shown with the sanitized text. Code spans and blocks are treated like
// prose (their URLs and tags are removed too).
func SanitizeAnswerWithOptions(answer string, allowedURLs []string, o *ConversationOptions) string {
	out, _ := sanitizeAnswerLoop(answer, allowedURLs, false, o.labels().RemovedLink)
	return out
}

// SanitizeAnswer is SanitizeAnswerWithOptions with the German marker
// "[Link entfernt]" for removed links.
//
// Deprecated: Use SanitizeAnswerWithOptions(answer, allowedURLs, nil), the
// same function (ConversationOptions.Labels.RemovedLink sets another
// marker: &ConversationOptions{Labels: EnglishLabels} the English one).
func SanitizeAnswer(answer string, allowedURLs []string) string {
	return SanitizeAnswerWithOptions(answer, allowedURLs, nil)
}

// AnswerLeaks returns what in answer shows that an attack succeeded, in
// order of appearance and without repeats: "canary" when it contains
// InjectionCanary (in any case), "image" for a Markdown image, "html" for a
// raw HTML tag or comment, "link:<url>" for a Markdown link or autolink and
// "url:<url>" for a bare URL whose target allowedURLs does not allow (the
// rule of SanitizeAnswerWithOptions). It returns nil when it finds nothing. Eval checks
// use it on generated answers.
func AnswerLeaks(answer string, allowedURLs []string) []string {
	var found []string
	if strings.Contains(strings.ToUpper(SanitizeUntrusted(answer)), InjectionCanary) {
		found = append(found, "canary")
	}
	_, leaks := sanitizeAnswerLoop(answer, allowedURLs, true, removedLinkMarker)
	for _, l := range leaks {
		if !answerContains(found, l) {
			found = append(found, l)
		}
	}
	return found
}

func answerContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sanitizeAnswerLoop runs the answer scanner until its output no longer
// changes (removing a tag can join the text around it into a new one), at
// most a few rounds; findings come from the first round only. If the text
// still changes after that, what is left that looks like markup is
// neutralised.
func sanitizeAnswerLoop(answer string, allowed []string, collect bool, marker string) (string, []string) {
	if !utf8.ValidString(answer) {
		answer = strings.ToValidUTF8(answer, "\uFFFD")
	}
	sc := answerScanner{allowed: allowed, collect: collect, marker: marker}
	out := sc.sanitize(answer)
	leaks := sc.leaks
	sc.collect = false
	if out == answer {
		return out, leaks
	}
	for round := 0; round < 4; round++ {
		next := sc.sanitize(out)
		if next == out {
			return out, leaks
		}
		out = next
	}
	out = strings.NewReplacer("<", "‹", "![", "!‹", "://", ":/ /").Replace(out)
	return out, leaks
}

// answerScanner holds the state of one pass of SanitizeAnswer over a text.
type answerScanner struct {
	allowed []string
	collect bool
	leaks   []string
	refs    map[string]string // reference label (folded) -> destination
	marker  string            // what replaces a removed link
}

func (sc *answerScanner) leak(kind string) {
	if sc.collect && !answerContains(sc.leaks, kind) {
		sc.leaks = append(sc.leaks, kind)
	}
}

// answerRefDef matches a Markdown link reference definition line.
var answerRefDef = lazyRegexp(`(?m)^ {0,3}\[((?:[^\]\\\n]|\\.){1,999})\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|\S+)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$\n?`)

// sanitize is one pass: reference definitions, then a left-to-right scan
// for images, links, autolinks, HTML and bare URLs.
func (sc *answerScanner) sanitize(s string) string {
	sc.refs = map[string]string{}
	if strings.Contains(s, "]:") {
		s = answerRefDef().ReplaceAllStringFunc(s, func(line string) string {
			m := answerRefDef().FindStringSubmatch(line)
			label := foldRefLabel(m[1])
			dest := strings.TrimSuffix(strings.TrimPrefix(m[2], "<"), ">")
			if _, dup := sc.refs[label]; !dup {
				sc.refs[label] = dest
			}
			if sc.urlAllowed(dest) {
				return line
			}
			return ""
		})
	}
	brackets := matchAnswerBrackets(s)
	var b strings.Builder
	b.Grow(len(s))
	sc.scan(&b, s, 0, len(s), brackets)
	return b.String()
}

// scan writes the sanitized form of s[from:to] to b. brackets maps the index
// of each '[' in s to the index of its matching ']'.
func (sc *answerScanner) scan(b *strings.Builder, s string, from, to int, brackets answerBrackets) {
	i := from
	for i < to {
		c := s[i]
		switch {
		case c == '\\' && i+1 < to && s[i+1] < utf8.RuneSelf && unicode.IsPunct(rune(s[i+1])):
			b.WriteString(s[i : i+2])
			i += 2
			continue
		case c == '!' && i+1 < to && s[i+1] == '[':
			if end, ok := sc.link(s, i+1, to, brackets); ok {
				sc.leak("image")
				// The alt text stays as plain text (docs/compat.md); a
				// URL in it is handled like any other.
				close, _ := brackets.match(i + 1)
				sc.scan(b, s, i+2, close, brackets)
				i = end
				continue
			}
		case c == '[':
			if end, ok := sc.link(s, i, to, brackets); ok {
				close, _ := brackets.match(i)
				dest := sc.linkDest(s, i, close, end)
				if sc.urlAllowed(dest) {
					b.WriteByte('[')
					sc.scan(b, s, i+1, close, brackets)
					b.WriteString(s[close:end])
				} else {
					sc.leak("link:" + dest)
					text := s[i+1 : close]
					if strings.TrimSpace(text) != "" && !answerLooksLikeURL(text) {
						sc.scan(b, s, i+1, close, brackets)
						b.WriteByte(' ')
					}
					b.WriteString(sc.marker)
				}
				i = end
				continue
			}
		case c == '<':
			if end, ok := sc.markup(b, s, i, to); ok {
				i = end
				continue
			}
		case c == 'h' || c == 'H' || c == 'f' || c == 'F' || c == 'w' || c == 'W':
			if end := answerBareURLEnd(s, i, to); end > i {
				u := s[i:end]
				if sc.urlAllowed(u) {
					b.WriteString(u)
				} else {
					sc.leak("url:" + u)
					b.WriteString(sc.marker)
				}
				i = end
				continue
			}
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+w])
		i += w
	}
}
