package engine

import (
	"cmp"
	"slices"
	"strings"
)

// A question such as "How do I purge all waiting tasks?", or an index term
// such as "backend weight", wants the page that documents the feature, but
// a manual's release notes mention almost every feature, often in short
// entries holding all of the query's words ("purge now also purges waiting
// tasks"). So unless the query asks about versions or changes, Search
// multiplies the score of a hit from a release-notes page by
// SearchOptions.ReleaseNotesWeight (0.5 by default: about six ranks lower
// at the default fusion settings) before it cuts the list to K; a hit whose
// own heading is the query keeps its score (docs/search.md, "Release
// notes").

// defaultReleaseNotesWeight is SearchOptions.ReleaseNotesWeight's 0.
const defaultReleaseNotesWeight = 0.5

// releaseNotesTitle matches a page title (the first part of a chunk's
// breadcrumb, its section number left out) of release notes: "Release
// Notes", "Django 1.11 release notes", "Change history for Celery 2.2",
// "What's new in Celery 3.0", "Changelog", "Release 4.0.1", "Changes in
// version 2", "News".
var releaseNotesTitle = lazyRegexp(`(?i)(\brelease notes?\b|\bchange ?logs?\b|\bchange history\b|\bwhat[’']?s new\b|^news$|^changes$|^(release|version) v?\d|^changes (in|since|for)\b)`)

// sectionNumber matches a leading section number ("A.57. ", "3.2 ").
var sectionNumber = lazyRegexp(`^([A-Z]\.)?\d+(\.\d+)*\.?\s+`)

// asksAboutChanges matches a query about versions or changes, which
// release notes answer: a version number or a word such as "release",
// "new", "changed", "deprecated", "removed", "upgrade", "migrate".
var asksAboutChanges = lazyRegexp(`(?i)(\d+\.\d|\breleas|\bnew(er|est)?\b|\bchang|\bversion|\bdeprecat|\bremov|\bupgrad|\bmigrat|\bhistory\b|\bnews\b|\bsince\b)`)

// isReleaseNotesPage reports whether a chunk with breadcrumb crumb comes
// from a release-notes page.
func isReleaseNotesPage(crumb string) bool {
	title, _, _ := strings.Cut(crumb, " > ")
	// Every title releaseNotesTitle matches holds one of these words; most
	// titles hold none, and skip the regular expressions.
	lower := strings.ToLower(title)
	if !strings.Contains(lower, "releas") && !strings.Contains(lower, "change") &&
		!strings.Contains(lower, "new") && !strings.Contains(lower, "version") {
		return false
	}
	title = headingKey(title)
	return title != "" && releaseNotesTitle().MatchString(title)
}

// headingKey is a heading as compared with a query: its section number
// and a trailing pilcrow (Sphinx's permalink) left out, white space
// collapsed.
func headingKey(h string) string {
	h = sectionNumber().ReplaceAllString(strings.TrimSpace(h), "")
	return strings.Join(strings.Fields(strings.TrimRight(h, "¶ ")), " ")
}

// namesHeading reports whether query is, case aside, the heading of hit:
// the last part of its breadcrumb or a heading merged into it
// (MetaHeadings).
func namesHeading(h SearchHit, query string) bool {
	q := headingKey(query)
	if q == "" {
		return false
	}
	last := h.Section
	if i := strings.LastIndex(last, " > "); i >= 0 {
		last = last[i+len(" > "):]
	}
	heads := []string{last}
	if h.Doc != nil {
		if more, ok := h.Doc.Metadata[MetaHeadings].(string); ok {
			heads = append(heads, strings.Split(more, "\n")...)
		}
	}
	for _, hd := range heads {
		if strings.EqualFold(headingKey(hd), q) {
			return true
		}
	}
	return false
}

// demoteReleaseNotes multiplies by weight the score of every hit from a
// release-notes page whose heading query does not name, unless query asks
// about versions or changes, and sorts the hits by score again (stable:
// ties keep their fused order). It marks the demoted hits and returns how
// many there are.
func demoteReleaseNotes(hits []SearchHit, query string, weight float64) int {
	if weight >= 1 || asksAboutChanges().MatchString(query) {
		return 0
	}
	n := 0
	for i := range hits {
		h := &hits[i]
		if h.ReleaseNotes && !namesHeading(*h, query) {
			h.Score *= weight
			h.Demoted = true
			n++
		}
	}
	if n > 0 {
		slices.SortStableFunc(hits, func(a, b SearchHit) int { return cmp.Compare(b.Score, a.Score) })
	}
	return n
}
