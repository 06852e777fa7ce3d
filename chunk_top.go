package engine

import (
	"strings"
)

// Patterns of the top-level headings topLabel shortens.
var (
	// "TOP 7 Ein ...", "TOP N2 Honorarprofessur", "TOP 3a": agenda items.
	topAgendaRE = lazyRegexp(`^TOP\s*([A-Z]?\d+[a-z]?)(?:[.:)]|\s|$)`)
	// "N1. Antrag ...": an agenda item numbered without "TOP".
	topLetterNumRE = lazyRegexp(`^([A-Z]\d+[a-z]?)\.(?:\s|$)`)
	// "§ 12 Modulabschluss", "§12a Fristen".
	topParagraphRE = lazyRegexp(`^§\s*(\d+[a-z]?)(?:\s+(\S+))?`)
	// "A. Allgemeine Regelungen", "II. Modulabschluss".
	topPartRE = lazyRegexp(`^([A-Z]|[IVXLC]+)\.(?:\s|$)`)
)

// topCrossRefWords follow the number of an in-text cross-reference to a
// paragraph ("§ 54 Absatz 6 ThürHG ..."), not a heading's title.
var topCrossRefWords = map[string]bool{
	"abs": true, "abs.": true, "absatz": true, "absätze": true, "satz": true, "s.": true, "nr": true, "nr.": true,
	"nummer": true, "ziffer": true, "ziff.": true, "buchst.": true, "buchstabe": true, "lit.": true, "und": true,
	"bis": true, "oder": true, "des": true, "der": true, "i.v.m.": true, "gilt": true, "bleibt": true,
}

// topLabel returns the short label Chunk.Top carries for a top-level
// heading (docs/compat.md): "TOP 7" for "TOP 7 Ein
// Antrag", "TOP N2" for "TOP N2 Honorarprofessur", "TOP N1" for "N1.
// Antrag ...", "§ 12" for "§ 12 Modulabschluss", "A" for "A. Allgemeine
// Regelungen", "II" for "II. Modulabschluss". Other headings ("1.
// Begrüßung", "Bestätigt:") and in-text cross-references that merely start
// like a heading ("§ 54 Absatz 6 ThürHG anwesend sein.") give "".
func topLabel(heading string) string {
	h := strings.TrimSpace(heading)
	if m := topAgendaRE().FindStringSubmatch(h); m != nil {
		return "TOP " + m[1]
	}
	if m := topLetterNumRE().FindStringSubmatch(h); m != nil {
		return "TOP " + m[1]
	}
	if m := topParagraphRE().FindStringSubmatch(h); m != nil {
		// A sentence ("... anwesend sein.") or a reference into the
		// paragraph ("Absatz 6") is running text, not a heading.
		if topCrossRefWords[strings.ToLower(m[2])] || (strings.HasSuffix(h, ".") && len(strings.Fields(h)) > 3) {
			return ""
		}
		return "§ " + m[1]
	}
	if m := topPartRE().FindStringSubmatch(h); m != nil {
		return m[1]
	}
	return ""
}
