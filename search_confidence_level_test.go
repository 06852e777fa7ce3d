package engine

import (
	"strings"
	"testing"
)

func TestCalibratedConfidence(t *testing.T) {
	for _, c := range []struct {
		e    confidenceEvidence
		want ConfidenceLevel
	}{
		{confidenceEvidence{Evidence: 10, RunnerUp: 10, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 2}, ConfidenceHigh},
		{confidenceEvidence{Evidence: 9, RunnerUp: 10, VectorRank: 1, TextRank: 1, Keywords: 4, HeadingKeywords: 2}, ConfidenceHigh},
		// Two keywords: high only when the hit beats the runner-up.
		{confidenceEvidence{Evidence: 10, RunnerUp: 7, VectorRank: 1, TextRank: 1, Keywords: 2, HeadingKeywords: 1}, ConfidenceHigh},
		{confidenceEvidence{Evidence: 10, RunnerUp: 10, VectorRank: 1, TextRank: 1, Keywords: 2, HeadingKeywords: 2}, ConfidenceMedium},
		// The heading names less than half of the question.
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 1}, ConfidenceMedium},
		// One keyword: high when it beats the runner-up, else medium.
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 1, Keywords: 1, HeadingKeywords: 1}, ConfidenceHigh},
		{confidenceEvidence{Evidence: 10, RunnerUp: 10, VectorRank: 1, TextRank: 1, Keywords: 1, HeadingKeywords: 1}, ConfidenceMedium},
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 1, Keywords: 1}, ConfidenceMedium},
		{confidenceEvidence{Evidence: 10, VectorRank: 2, TextRank: 1, Keywords: 1, HeadingKeywords: 1}, ConfidenceLow},
		{confidenceEvidence{Evidence: 8, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, ConfidenceLow},
		{confidenceEvidence{Evidence: 9, RunnerUp: 9, VectorRank: 1, TextRank: 1, Keywords: 2, HeadingKeywords: 2}, ConfidenceMedium},
		// A long question whose heading names every keyword: high with
		// the vector list within 3.
		{confidenceEvidence{Evidence: 10, VectorRank: 3, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, ConfidenceHigh},
		{confidenceEvidence{Evidence: 10, VectorRank: 4, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, ConfidenceLow},
		{confidenceEvidence{Evidence: 10, VectorRank: 2, TextRank: 1, Keywords: 3, HeadingKeywords: 2}, ConfidenceLow}, // the vector list disagrees
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 2, Keywords: 3, HeadingKeywords: 3}, ConfidenceLow}, // the keyword list disagrees
		{confidenceEvidence{Evidence: 10, VectorRank: 0, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, ConfidenceLow},
		{confidenceEvidence{Evidence: 2, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, ConfidenceLow}, // a keyword occurs nowhere
		{confidenceEvidence{}, ConfidenceLow},
	} {
		if got := calibratedConfidence(c.e); got != c.want {
			t.Errorf("calibratedConfidence(%+v) = %v, want %v", c.e, got, c.want)
		}
	}
	if ConfidenceHigh.String() != "high" || ConfidenceHigh.LabelIn(GermanLabels) != "hoch" || ConfidenceLow.String() != "low" {
		t.Errorf("labels: %s %s %s", ConfidenceHigh, ConfidenceHigh.LabelIn(GermanLabels), ConfidenceLow)
	}
	// Empty fields of an app's own labels are German; the deprecated Label
	// is LabelIn(GermanLabels).
	own := ConversationLabels{High: "sure"}
	if ConfidenceHigh.LabelIn(own) != "sure" || ConfidenceMedium.LabelIn(own) != "mittel" || ConfidenceLow.Label() != "niedrig" {
		t.Errorf("own labels: %q %q %q", ConfidenceHigh.LabelIn(own), ConfidenceMedium.LabelIn(own), ConfidenceLow.Label())
	}
	// The spec's function keeps its thresholds.
	if ConfidenceLabel(5, false) != "mittel" || ConfidenceLabel(8, false) != "hoch" || ConfidenceLabel(9, true) != "niedrig" {
		t.Error("ConfidenceLabel changed")
	}
}

// TestLevelReasonAgreesWithLevel: the reason put first in a hit's
// ConfidenceBasis names what decided its level, never the opposite.
func TestLevelReasonAgreesWithLevel(t *testing.T) {
	for _, c := range []struct {
		e    confidenceEvidence
		want string
	}{
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, "both searches rank it first and its heading names 3 of 3"},
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 2, Keywords: 3, HeadingKeywords: 3}, "the keyword search ranks another passage first"},
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 0, Keywords: 3}, "the keyword search does not find it"},
		{confidenceEvidence{Evidence: 10, VectorRank: 2, TextRank: 1, Keywords: 2, HeadingKeywords: 0}, "the vector search ranks other passages first"},
		{confidenceEvidence{Evidence: 8, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 3}, "few of the question's words"},
		{confidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 1, Keywords: 4, HeadingKeywords: 1}, "both searches rank it first, but only its heading names 1 of 4"},
		{confidenceEvidence{Evidence: 9, RunnerUp: 9, VectorRank: 1, TextRank: 1, Keywords: 2, HeadingKeywords: 2}, "another passage matches as well"},
		{confidenceEvidence{VectorRank: 1, TextRank: 1}, "no keywords"},
	} {
		l := calibratedConfidence(c.e)
		got := levelReason(c.e, l)
		if !strings.Contains(got, c.want) {
			t.Errorf("%+v (%s): reason %q, want %q", c.e, l, got, c.want)
		}
		if (l == ConfidenceHigh) != strings.HasPrefix(got, "both searches rank it first and") && c.e.VectorRank == 1 {
			t.Errorf("%+v: level %s with reason %q", c.e, l, got)
		}
	}
}
