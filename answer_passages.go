package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// duplicateOverlap is the share of the shorter passage's words the longer
// one must hold for two passages to be the same content (a page indexed
// as HTML and as its reStructuredText or AsciiDoc source, or overlapping
// chunks of one section).
const duplicateOverlap = 0.7

// answerPassages picks up to n hits whose passages differ: a hit whose
// place (page or file, pages, section) or content (duplicateOverlap)
// repeats an earlier one's is dropped, except that an HTML page replaces
// an earlier plain-text copy of itself (Sphinx's _sources/*.txt, AsciiDoc
// .txt beside its .html) in that copy's position. Tables of contents and
// indexes (by their chunk or passage, looksLikeContents) go last; of the
// hits of a section whose heading is the question (terms), the passage
// that starts the section is kept.
func answerPassages(hits []SearchHit, n int, terms []excerptTerm) []SearchHit {
	ordered := make([]SearchHit, 0, len(hits))
	var contents []SearchHit
	for _, h := range hits {
		if passageContents(&h) {
			contents = append(contents, h)
			continue
		}
		ordered = append(ordered, h)
	}
	ordered = append(ordered, contents...)
	var used []SearchHit
	var words []map[string]bool
	places := map[string]int{} // place -> index in used
	for _, h := range ordered {
		place := h.URL + "\x00" + h.Source + "\x00" + h.Pages + "\x00" + h.Section
		if i, ok := places[place]; ok {
			// One passage per section: when the section's heading is the
			// question, the one that starts it (holds the heading line),
			// whose first sentences are its lead.
			if startsSection(h, terms) && !startsSection(used[i], terms) {
				used[i], words[i] = h, passageWords(h.Passage)
			}
			continue
		}
		w := passageWords(h.Passage)
		dup := -1
		for i, u := range words {
			if sameContent(w, u) {
				dup = i
				break
			}
		}
		if dup >= 0 {
			if sourceCopy(used[dup]) && !sourceCopy(h) {
				places[place] = dup
				used[dup], words[dup] = h, w
			}
			continue
		}
		if len(used) == n {
			continue // only an HTML page replacing a copy may still come
		}
		places[place] = len(used)
		used = append(used, h)
		words = append(words, w)
	}
	return used
}

// startsSection reports whether h's passage holds its section's heading
// (the last part of its breadcrumb) as a line of its own, and that heading
// holds quoteCoverage of terms (the question's).
func startsSection(h SearchHit, terms []excerptTerm) bool {
	if h.Section == "" || len(terms) == 0 {
		return false
	}
	parts := strings.Split(h.Section, " > ")
	head := joinFields(parts[len(parts)-1])
	if float64(countTrue(termsIn(head, terms))) < quoteCoverage*float64(len(terms)) {
		return false
	}
	for l := range strings.SplitSeq(h.Passage, "\n") {
		if joinFields(l) == head {
			return true
		}
	}
	return false
}

// passageWords are the distinct lower-case words of a passage with three
// or more letters (a CJK run as its bigrams).
func passageWords(p string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(p), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.ContainsFunc(w, isCJKRune) {
			for _, t := range cjkKeywords([]string{w}) {
				out[t] = true
			}
			continue
		}
		if utf8.RuneCountInString(w) >= 3 {
			out[w] = true
		}
	}
	return out
}

// sameContent reports whether two passages' words overlap by
// duplicateOverlap of the smaller set (at least ten words).
func sameContent(a, b map[string]bool) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) < 10 {
		return false
	}
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return float64(n) >= duplicateOverlap*float64(len(a))
}

// sourceCopy reports whether a hit comes from a plain-text source copy of
// a page (sourceCopyURL of its URL, else its source).
func sourceCopy(h SearchHit) bool {
	u := h.URL
	if u == "" {
		u = h.Source
	}
	return sourceCopyURL(u)
}

// sourceCopyURL reports whether u names a plain-text source copy of a
// page: a .txt file (Sphinx's _sources/*.rst.txt or *.txt, AsciiDoc
// sources beside their HTML) or anything under _sources/, rather than a
// rendered page.
func sourceCopyURL(u string) bool {
	return strings.HasSuffix(u, ".txt") || strings.Contains(u, "/_sources/")
}
