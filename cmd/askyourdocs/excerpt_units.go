package main

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// An extractive answer quotes whole units of a passage: a sentence of
// prose, or a whole line that must not be cut or split, a code block
// (HTML <pre> and Markdown fences arrive as one line each), a list item or
// a table row. A line ending in ":" introduces what follows it, so the
// two are quoted together ("run the module as a script:" and the command).

// excerptUnit is one quotable unit of a passage.
type excerptUnit struct {
	text    string
	line    int  // index of the passage line it is from
	whole   bool // code, list item or table row: never cut or split
	heading string
}

var (
	// listItemLine is a list item's marker.
	listItemLine = regexp.MustCompile(`^([-*•▪◦] |\d{1,3}[.)] |[a-z][.)] )`)
	// codeish matches what prose lines rarely have and commands and code
	// always do: a command-line option, a path, an assignment, brackets, a
	// prompt, a file extension, an identifier with _ or ::.
	codeish = regexp.MustCompile(`(^[$>#%] |\s--?[A-Za-z][\w-]*|\./|~/|\w/\w|[=(){}\[\];<>\\]|::|\w_\w|\.[a-z]{1,4}\b|^[a-z][\w-]*\s+[a-z][\w-]*(\s|$))`)
)

// looksLikeCode reports whether line l is code or a command: no sentence
// punctuation at its end and code-like characters in it.
func looksLikeCode(l string) bool {
	if l == "" || utf8.RuneCountInString(l) > 400 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(l)
	if strings.ContainsRune(".!?", last) && !strings.HasSuffix(l, "...") {
		return false
	}
	return codeish.MatchString(l)
}

// isTableRow reports whether l is a table row as the readers write one
// ("a | b | c", "Name: Alice | Age: 42").
func isTableRow(l string) bool { return strings.Contains(l, " | ") || strings.HasPrefix(l, "|") }

// passageUnits splits passage into units. knownHeadings are the section's
// headings (breadcrumb elements); a line equal to one is a heading, other
// lines are headings only when they look like one and are neither code
// nor introduced by a line ending in ":".
func passageUnits(passage string, knownHeadings []string) []excerptUnit {
	known := map[string]bool{}
	for _, h := range knownHeadings {
		known[strings.Join(strings.Fields(h), " ")] = true
	}
	raw := strings.Split(passage, "\n")
	var lines []string
	for _, l := range raw {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	var units []excerptUnit
	heading := ""
	for i, l := range lines {
		introduced := i > 0 && strings.HasSuffix(lines[i-1], ":")
		code := looksLikeCode(l)
		if known[l] || (i < len(lines)-1 && !introduced && !code && len(known) == 0 && isHeadingLine(l)) {
			heading = l
			continue
		}
		if code || introduced && !strings.ContainsAny(l[len(l)-1:], ".!?") || listItemLine.MatchString(l) || isTableRow(l) {
			units = append(units, excerptUnit{text: l, line: i, whole: true, heading: heading})
			continue
		}
		for _, s := range askyourdocs.SplitSentences(l) {
			units = append(units, excerptUnit{text: s, line: i, heading: heading})
		}
	}
	return units
}

// unitScore counts the question's keywords in a unit (words of 5 or more
// letters also by their first 5 letters, as the engine's excerpts do; a
// pair of CJK characters, cjkTerms, anywhere in its text).
func unitScore(text string, terms []string) int {
	lower := strings.ToLower(text)
	words := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	n := 0
	for _, t := range terms {
		if isCJKPair(t) {
			if strings.Contains(lower, t) {
				n++
			}
			continue
		}
		tp := keywordPrefix(t)
		for _, w := range words {
			if w == t || (utf8.RuneCountInString(tp) == 5 && strings.HasPrefix(w, tp)) {
				n++
				break
			}
		}
	}
	return n
}

// unitExcerpt returns the best units of passage for question, with the
// heading of their section on a line of its own above them: of the units
// that are not fragments (weakUnit), the one matching the most keywords
// (ties: the earliest; the line introducing it when it is a code block or
// list introduced by "...:"), extended by the following units of the same
// section up to the next link or navigation fragment while the quote stays within maxChars,
// and always by the unit a ":" introduces (up to twice maxChars). Code blocks, list items and table rows are never cut; lines
// are kept apart with "\n". maxChars counts terminal columns (textWidth: a
// CJK character two), and Chinese or Japanese sentences join without a
// space.
func unitExcerpt(passage, question string, headings []string, maxChars int) string {
	if maxChars <= 0 {
		maxChars = 400
	}
	units := passageUnits(passage, headings)
	if len(units) == 0 {
		return askyourdocs.Excerpt(passage, askyourdocs.ExcerptOptions{Query: question, MaxChars: maxChars})
	}
	terms := cjkTerms(askyourdocs.ExtractKeywords(question, cliStopWords))
	best, bestScore := -1, 0
	for i, u := range units {
		if weakUnit(u) {
			continue
		}
		if s := unitScore(u.text, terms); best < 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		// Only fragments: the old rule, the unit matching the most keywords.
		best = 0
		for i, u := range units {
			if s := unitScore(u.text, terms); s > bestScore {
				best, bestScore = i, s
			}
		}
	}
	start := best
	if start > 0 && units[start].whole && strings.HasSuffix(units[start-1].text, ":") && units[start-1].heading == units[start].heading {
		start--
	}
	n := textWidth(units[start].text)
	end := start + 1
	for end < len(units) && units[end].heading == units[start].heading && (end <= best || !navFragment(units[end])) {
		l := textWidth(units[end].text) + 1
		forced := strings.HasSuffix(units[end-1].text, ":") || end <= best
		if n+l > maxChars && !(forced && n+l <= 2*maxChars) {
			break
		}
		n += l
		end++
	}
	var b strings.Builder
	if h := units[start].heading; h != "" {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	for i := start; i < end; i++ {
		u := units[i]
		// A sentence is cut at maxChars, a whole unit only past three
		// times that (a huge table row or code block).
		limit := maxChars
		if u.whole {
			limit = 3 * maxChars
		}
		text := cutRunes(u.text, limit)
		if i > start {
			if u.line == units[i-1].line {
				if !joinsCJK(units[i-1].text, text) {
					b.WriteByte(' ')
				}
			} else {
				b.WriteByte('\n')
			}
		}
		b.WriteString(text)
	}
	return b.String()
}

// Fragments are what a page's navigation and links leave in its text:
// "See more", a removed-link marker, a breadcrumb, a link alone.
var (
	// fragmentLink is a Markdown image or link, a URL or a removed-link
	// marker (the SDK's German default and the page's English one).
	fragmentLink = regexp.MustCompile(`!?\[[^\]]*\]\([^)]*\)|https?://\S+|\[(Link entfernt|link removed)\]`)
	// fragmentNav is a navigation label.
	fragmentNav = regexp.MustCompile(`(?i)\b(see|read|learn|show) more\b|\b(back to top|skip to (main )?content|edit (this page|on github)|click here|permalink)\b`)
	// fragmentCrumb is a breadcrumb or pager separator.
	fragmentCrumb = regexp.MustCompile(`[»›→←]|\s[>/|]\s`)
)

// Fragment thresholds: a sentence needs fragmentMinWords words of two
// letters or more and fragmentMinRunes characters besides links and
// navigation labels to be quoted as an answer.
const (
	fragmentMinWords = 4
	fragmentMinRunes = 20
)

// weakUnit reports whether u is a fragment rather than an answer: a code
// block never is; a list item or table row is when nothing but links and
// navigation labels is left of it; a sentence when less than
// fragmentMinWords words or fragmentMinRunes characters are, or when it
// is a breadcrumb (two separators such as "»").
func weakUnit(u excerptUnit) bool {
	if looksLikeCode(u.text) && !fragmentLink.MatchString(u.text) {
		return false
	}
	if !u.whole && len(fragmentCrumb.FindAllStringIndex(u.text, 2)) == 2 {
		return true
	}
	rest := fragmentLink.ReplaceAllStringFunc(u.text, func(m string) string {
		// A link keeps its text; an image and a URL go.
		if strings.HasPrefix(m, "[") && strings.Contains(m, "](") {
			return m[1:strings.Index(m, "](")]
		}
		return " "
	})
	rest = fragmentNav.ReplaceAllString(rest, " ")
	words, runes := 0, 0
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if utf8.RuneCountInString(w) >= 2 {
			words++
			runes += utf8.RuneCountInString(w)
		}
	}
	if u.whole {
		return words == 0
	}
	return words < fragmentMinWords || runes+words-1 < fragmentMinRunes
}

// navFragment reports whether u is a fragment left by links or
// navigation (not merely a short sentence): where a quote stops.
func navFragment(u excerptUnit) bool {
	return weakUnit(u) && (fragmentLink.MatchString(u.text) || fragmentNav.MatchString(u.text) || fragmentCrumb.MatchString(u.text))
}

// cutRunes cuts s to at most n runes at a word boundary, ending in "…"
// when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := string([]rune(s)[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
