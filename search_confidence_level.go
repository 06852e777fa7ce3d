package engine

import "fmt"

// ConfidenceLevel is a coarse confidence that a hit answers its question,
// independent of the language it is shown in: String gives the English
// word, and an app showing another language picks the High, Medium or Low
// field of its ConversationLabels (GermanLabels, say) by the level.
type ConfidenceLevel int

// The confidence levels, lowest first.
const (
	ConfidenceLow ConfidenceLevel = iota
	ConfidenceMedium
	ConfidenceHigh
)

// String returns "low", "medium" or "high".
func (l ConfidenceLevel) String() string { return l.labelIn(EnglishLabels) }

// Label returns the level's German label ("hoch", "mittel", "niedrig");
// opts may select others.
//
// Deprecated: Use String for English, or the level's field of the app's
// ConversationLabels (GermanLabels.High for ConfidenceHigh, and so on);
// LabelOption is the deprecated functional-option style.
func (l ConfidenceLevel) Label(opts ...LabelOption) string {
	return l.LabelIn(conversationLabels(opts))
}

// LabelIn returns the level's label in c: c.High, c.Medium or c.Low, the
// German label where that field is empty (as ConversationOptions.Labels).
//
// Deprecated: Use String for English, or the level's field of the app's
// ConversationLabels (c.High for ConfidenceHigh, and so on).
func (l ConfidenceLevel) LabelIn(c ConversationLabels) string {
	c = (&ConversationOptions{Labels: c}).labels()
	return l.labelIn(c)
}

// labelIn returns the level's label in c, empty fields included.
func (l ConfidenceLevel) labelIn(c ConversationLabels) string {
	switch l {
	case ConfidenceHigh:
		return c.High
	case ConfidenceMedium:
		return c.Medium
	}
	return c.Low
}

// confidenceEvidence is what a SearchHit's Level is decided from: one hit's
// evidence score and ranks, the next hit's evidence score and how much of
// the question the hit's section heading names (the hit's fields
// Confidence, VectorRank, TextRank, RunnerUp, QuestionKeywords and
// HeadingKeywords).
type confidenceEvidence struct {
	// Evidence is the hit's evidence score (0-10, SearchHit.Confidence
	// without a reranker); RunnerUp is the next hit's (0 when none).
	Evidence, RunnerUp int
	// VectorRank and TextRank are the hit's 1-based ranks in the vector
	// and keyword lists (0: not in that list).
	VectorRank, TextRank int
	// Keywords is the number of keywords of the question
	// (ExtractKeywords), HeadingKeywords how many of them its section
	// heading (breadcrumb and first line) contains.
	Keywords, HeadingKeywords int
}

// Thresholds of calibratedConfidence, chosen on one half of the dev sets'
// questions and reported on the other (docs/serve.md has the table and
// the command that reproduces it).
const (
	// calibratedMediumVectorRank is the vector rank within which, with
	// keyword rank 1, a hit can be medium; calibratedHighVectorRank the
	// one within which a long question's hit whose heading names every
	// keyword can be high (other highs need rank 1).
	calibratedMediumVectorRank = 1
	calibratedHighVectorRank   = 3
	// calibratedMediumEvidence is the evidence score medium needs.
	calibratedMediumEvidence = 9
	// calibratedHighEvidence is the evidence score high needs, with
	// calibratedHighKeywords keywords and at least
	// calibratedHighHeadingShare of them in the heading; a question with
	// fewer than calibratedHighLongQuestion keywords also needs the hit's
	// evidence to beat the runner-up's.
	calibratedHighEvidence     = 9
	calibratedHighKeywords     = 1
	calibratedHighHeadingShare = 0.5
	calibratedHighLongQuestion = 3
)

// calibratedConfidence returns the level of a hit from e (SearchHit.Level). It needs the
// keyword list to rank the hit first for medium or high. High: evidence
// at least 9, and either both lists rank it first and its heading names
// half of the question's keywords or more, or the vector list ranks it
// within 3 and its heading names all of them; a question with fewer than
// three keywords also needs more evidence than the runner-up. Medium:
// both lists rank it first, evidence at least 9. Low otherwise. On the
// held-out half of every dev set "high" is right (the top hit relevant)
// at least 90% of the time, and 90% or more of the questions from
// another manual are low (docs/serve.md). The spec's ConfidenceLabel
// keeps its fixed 8/5 thresholds; use it for a reranker's score.
func calibratedConfidence(e confidenceEvidence) ConfidenceLevel {
	if e.TextRank != 1 || e.VectorRank <= 0 || e.VectorRank > calibratedHighVectorRank || e.Keywords == 0 {
		return ConfidenceLow
	}
	long := e.Keywords >= calibratedHighLongQuestion
	heading := e.VectorRank == 1 && float64(e.HeadingKeywords) >= calibratedHighHeadingShare*float64(e.Keywords) ||
		long && e.HeadingKeywords == e.Keywords
	if heading && e.Evidence >= calibratedHighEvidence && e.Keywords >= calibratedHighKeywords && (long || e.Evidence > e.RunnerUp) {
		return ConfidenceHigh
	}
	if e.VectorRank <= calibratedMediumVectorRank && e.Evidence >= calibratedMediumEvidence {
		return ConfidenceMedium
	}
	return ConfidenceLow
}

// levelReason says in words why calibratedConfidence gave e level l: for
// a low level the first condition that failed, for medium what high
// lacked, for high what it rests on, so that a label never contradicts
// its reasons.
func levelReason(e confidenceEvidence, l ConfidenceLevel) string {
	heading := fmt.Sprintf("its heading names %d of %d question terms", e.HeadingKeywords, e.Keywords)
	switch {
	case l == ConfidenceHigh:
		if e.VectorRank == 1 {
			return "both searches rank it first and " + heading
		}
		return "the keyword search ranks it first and " + heading
	case e.Keywords == 0:
		return "the question has no keywords to check"
	case e.TextRank != 1:
		if e.TextRank == 0 {
			return "the keyword search does not find it"
		}
		return "the keyword search ranks another passage first"
	case e.VectorRank <= 0:
		return "the vector search does not find it"
	case l == ConfidenceMedium:
		if e.Evidence <= e.RunnerUp && e.Keywords < calibratedHighLongQuestion {
			return "both searches rank it first, but another passage matches as well"
		}
		return "both searches rank it first, but only " + heading
	case e.VectorRank > calibratedMediumVectorRank:
		return "the vector search ranks other passages first"
	}
	return fmt.Sprintf("few of the question's words stand in it: evidence %d, %d needed", e.Evidence, calibratedMediumEvidence)
}

// rerankLevel is the level of a reranker's 0-10 score: the spec's
// thresholds (8 and 5), as ConfidenceLabel.
func rerankLevel(score int) ConfidenceLevel {
	switch {
	case score >= 8:
		return ConfidenceHigh
	case score >= 5:
		return ConfidenceMedium
	}
	return ConfidenceLow
}
