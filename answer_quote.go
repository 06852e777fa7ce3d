package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// An extractive answer quotes whole units of a passage: a sentence of
// prose, or a whole line that must not be cut or split, a code block
// (HTML <pre> and Markdown fences arrive as one line each), a list item or
// a table row. A line ending in ":" introduces what follows it, so the
// two are quoted together ("run the module as a script:" and the command).

// quoteUnit is one quotable unit of a passage.
type quoteUnit struct {
	text    string
	line    int  // index of the passage line it is from
	whole   bool // code, list item or table row: never cut or split
	heading string
}

var (
	// listItemLine is a list item's marker.
	listItemLine = lazyRegexp(`^([-*•▪◦] |\d{1,3}[.)] |[a-z][.)] )`)
	// codeish matches what prose lines rarely have and commands and code
	// always do: a command-line option, a path, an assignment, brackets, a
	// prompt, a file extension, an identifier with _ or ::.
	codeish = lazyRegexp(`(^[$>#%] |\s--?[A-Za-z][\w-]*|\./|~/|\w/\w|[=(){}\[\];<>\\]|::|\w_\w|\.[a-z]{1,4}\b|^[a-z][\w-]*\s+[a-z][\w-]*(\s|$))`)
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
	return codeish().MatchString(l)
}

// isTableRow reports whether l is a table row as the readers write one
// ("a | b | c", "Name: Alice | Age: 42").
func isTableRow(l string) bool { return strings.Contains(l, " | ") || strings.HasPrefix(l, "|") }

// passageUnits splits passage into units. knownHeadings are the section's
// headings (breadcrumb elements); a line equal to one is a heading, other
// lines are headings only when they look like one and are neither code
// nor introduced by a line ending in ":".
func passageUnits(passage string, knownHeadings []string) []quoteUnit {
	known := map[string]bool{}
	for _, h := range knownHeadings {
		known[joinFields(h)] = true
	}
	var lines []string
	for _, l := range strings.Split(passage, "\n") {
		if l = joinFields(l); l != "" {
			lines = append(lines, l)
		}
	}
	var units []quoteUnit
	heading := ""
	for i, l := range lines {
		introduced := i > 0 && strings.HasSuffix(lines[i-1], ":")
		code := looksLikeCode(l)
		if known[l] || (i < len(lines)-1 && !introduced && !code && len(known) == 0 && isHeadingLine(l)) {
			heading = l
			continue
		}
		if code || introduced && !strings.ContainsAny(l[len(l)-1:], ".!?") || listItemLine().MatchString(l) || isTableRow(l) {
			units = append(units, quoteUnit{text: l, line: i, whole: true, heading: heading})
			continue
		}
		for _, s := range SplitSentences(l) {
			units = append(units, quoteUnit{text: s, line: i, heading: heading})
		}
	}
	return units
}

// quoteTerms are the terms a quote is chosen by: the question's keywords
// (QuestionStopWords left out), a CJK word as its bigrams (cjkKeywords),
// each with its 5-letter prefix (excerptPrefix).
func quoteTerms(question string) []excerptTerm {
	kws := cjkKeywords(ExtractKeywords(textNFKC(question), searchStopWords))
	ts := make([]excerptTerm, len(kws))
	for i, t := range kws {
		ts[i] = excerptTerm{word: t, prefix: excerptPrefix(t), cjk: isCJKRune(firstRune(t))}
	}
	return ts
}

// termsIn returns which of terms text holds.
func termsIn(text string, terms []excerptTerm) []bool {
	hit := make([]bool, len(terms))
	excerptScoreTerms(text, terms, hit)
	return hit
}

// countTrue counts the set entries of b.
func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// Fragments are what a page's navigation and links leave in its text:
// "See more", a removed-link marker, a breadcrumb, a link alone.
var (
	// fragmentLink is a Markdown image or link, a URL or a removed-link
	// marker (the German default and the English one).
	fragmentLink = lazyRegexp(`!?\[[^\]]*\]\([^)]*\)|https?://\S+|\[(Link entfernt|link removed)\]`)
	// fragmentNav is a navigation label.
	fragmentNav = lazyRegexp(`(?i)\b(see|read|learn|show) more\b|\b(back to top|skip to (main )?content|edit (this page|on github)|click here|permalink)\b|` +
		`^(- )?(table of contents|contents|home|index|up|(previous|next|prev)( chapter| page| section| topic)?)$`)
	// fragmentCrumb is a breadcrumb or pager separator.
	fragmentCrumb = lazyRegexp(`[»›→←]|\s[>/|]\s`)
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
// is a breadcrumb (two separators such as "»"). A CJK character counts as
// a word of its own.
func weakUnit(u quoteUnit) bool {
	if looksLikeCode(u.text) && !fragmentLink().MatchString(u.text) {
		return false
	}
	if !u.whole && len(fragmentCrumb().FindAllStringIndex(u.text, 2)) == 2 {
		return true
	}
	rest := fragmentLink().ReplaceAllStringFunc(u.text, func(m string) string {
		// A link keeps its text; an image and a URL go.
		if strings.HasPrefix(m, "[") && strings.Contains(m, "](") {
			return m[1:strings.Index(m, "](")]
		}
		return " "
	})
	rest = fragmentNav().ReplaceAllString(rest, " ")
	words, runes := 0, 0
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		n := utf8.RuneCountInString(w)
		if cjk := n - countNonCJK(w); n >= 2 || cjk > 0 {
			words += max(1, cjk)
			runes += n
		}
	}
	if u.whole {
		return words == 0
	}
	return words < fragmentMinWords || runes+words-1 < fragmentMinRunes
}

// countNonCJK counts the runes of w that are not CJK characters.
func countNonCJK(w string) int {
	n := 0
	for _, r := range w {
		if !isCJKRune(r) {
			n++
		}
	}
	return n
}

// navFragment reports whether u is a fragment left by links or
// navigation (not merely a short sentence): where a quote stops.
func navFragment(u quoteUnit) bool {
	return weakUnit(u) && (fragmentLink().MatchString(u.text) || fragmentNav().MatchString(u.text) || fragmentCrumb().MatchString(u.text))
}

// wideRune reports whether r is a Han, kana or Hangul character, or CJK
// punctuation or a full-width form: two columns wide in a terminal.
func wideRune(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x3000 && r <= 0x303F, r >= 0xFF01 && r <= 0xFF60:
		return true
	}
	return isCJKRune(r)
}

// quoteWidth is the columns s takes in a terminal: a wide rune two.
func quoteWidth(s string) int {
	n := 0
	for _, r := range s {
		n++
		if wideRune(r) {
			n++
		}
	}
	return n
}

// joinsCJK reports whether two units meet inside Chinese or Japanese text,
// which puts no space between sentences.
func joinsCJK(prev, next string) bool {
	a, _ := utf8.DecodeLastRuneInString(prev)
	b, _ := utf8.DecodeRuneInString(next)
	return cjkJoinable(a) && cjkJoinable(b)
}

// quoteCoverage is the share of a question's terms a heading must hold
// for its section to be the question's own (an FAQ entry, a how-to): the
// quote then starts where the section's text does.
const quoteCoverage = 2.0 / 3

// passageQuote returns the units of passage that answer question, joined
// (a unit's own line kept apart with "\n", sentences of one line with a
// space, Chinese and Japanese ones with none), which of terms they (and
// the heading they are the lead of) hold, and whether they are the lead
// of the section whose heading is the question. headings are the passage's section headings (its breadcrumb and
// merged headings), told apart from its text.
//
// The quote starts at the lead of the section whose heading holds at
// least quoteCoverage of the question's terms (the question is that
// section's subject, so its first sentences answer it); otherwise at the
// unit, not a fragment (weakUnit), whose terms weigh the most (a term
// weighs one over the number of the passage's units holding it), the earliest
// on ties after those inside chunk (the text retrieval matched, which the
// passage surrounds), preceded by the line that introduces it with ":" when it is a
// code block or list item. It is extended by the following units of the
// same section up to the next navigation fragment while it stays within
// maxCols terminal columns (quoteWidth), always by the unit a ":"
// introduces and by a second unit (up to twice maxCols), and never cuts a code block, list
// item or table row short of three times maxCols. heading is the heading
// of the section the quote comes from ("" when none precedes it in the
// passage).
func passageQuote(passage, chunk string, terms []excerptTerm, headings []string, maxCols int) (quote string, hit []bool, lead bool, heading string) {
	units := passageUnits(passage, headings)
	if len(units) == 0 {
		return "", make([]bool, len(terms)), false, ""
	}
	best, leadHeading := quoteLead(units, terms)
	if best < 0 {
		// A term weighs the less the more units hold it: "symlinks" picks
		// its sentence among those that all say "switch".
		hits := make([][]bool, len(units))
		df := make([]int, len(terms))
		for i, u := range units {
			hits[i] = termsIn(u.text, terms)
			for k, h := range hits[i] {
				if h {
					df[k]++
				}
			}
		}
		chunk = joinFields(chunk)
		bestScore := -1.0
		for i, u := range units {
			if weakUnit(u) {
				continue
			}
			s := 0.0
			for k, h := range hits[i] {
				if h {
					s += 1 / float64(df[k])
				}
			}
			// Ties go to a unit of the chunk retrieval matched (the passage
			// around it is context), then to the earliest.
			if chunk != "" && strings.Contains(chunk, u.text) {
				s += 1e-6
			}
			if s > bestScore {
				best, bestScore = i, s
			}
		}
	}
	if best < 0 {
		best = 0 // only fragments
	}
	start := best
	if start > 0 && units[start].whole && strings.HasSuffix(units[start-1].text, ":") && units[start-1].heading == units[start].heading {
		start--
	}
	n := quoteWidth(units[start].text)
	end := start + 1
	for end < len(units) && units[end].heading == units[start].heading && (end <= best || !navFragment(units[end])) {
		l := quoteWidth(units[end].text) + 1
		// A line ending in ":" brings what it introduces, and a quote of
		// one sentence its next one, within twice maxCols.
		forced := strings.HasSuffix(units[end-1].text, ":") || end <= best || end == start+1
		if n+l > maxCols && !(forced && n+l <= 2*maxCols) {
			break
		}
		n += l
		end++
	}
	var b strings.Builder
	for i := start; i < end; i++ {
		u := units[i]
		// A sentence is cut at maxCols, a whole unit only past three
		// times that (a huge table row or code block).
		limit := maxCols
		if u.whole {
			limit = 3 * maxCols
		}
		text := cutExcerpt(u.text, limit)
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
	q := b.String()
	// The quote answers what its section's heading asks too.
	return q, termsIn(leadHeading+"\n"+q, terms), leadHeading != "", units[start].heading
}

// quoteLead returns the first unit (a short one too, "Yes.", but not a
// navigation fragment) of the section whose
// heading line in the passage holds quoteCoverage of terms, and that
// heading; -1 and "" when there is none. (A passage whose text starts
// below its section's heading may start in the middle of the section: its
// first sentence is no lead.)
func quoteLead(units []quoteUnit, terms []excerptTerm) (int, string) {
	if len(terms) == 0 {
		return -1, ""
	}
	covers := func(h string) bool {
		return h != "" && float64(countTrue(termsIn(h, terms))) >= quoteCoverage*float64(len(terms))
	}
	for i, u := range units {
		if h := u.heading; covers(h) && !navFragment(u) {
			return i, h
		}
	}
	return -1, ""
}
