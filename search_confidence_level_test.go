package engine

import "testing"

func TestCalibratedConfidence(t *testing.T) {
	for _, c := range []struct {
		evidence, vr, tr, kws int
		want                  ConfidenceLevel
	}{
		{10, 1, 1, 3, ConfidenceHigh},
		{8, 1, 1, 2, ConfidenceHigh},
		{10, 1, 1, 1, ConfidenceMedium}, // one keyword: never high
		{7, 1, 1, 3, ConfidenceLow},
		{10, 2, 1, 3, ConfidenceMedium},
		{10, 3, 1, 3, ConfidenceMedium},
		{10, 4, 1, 3, ConfidenceLow},
		{10, 1, 2, 3, ConfidenceLow}, // the keyword list disagrees
		{9, 2, 1, 3, ConfidenceLow},
		{10, 0, 1, 3, ConfidenceLow},
		{2, 1, 1, 3, ConfidenceLow}, // a keyword occurs nowhere
	} {
		if got := CalibratedConfidence(c.evidence, c.vr, c.tr, c.kws); got != c.want {
			t.Errorf("CalibratedConfidence(%d, %d, %d, %d) = %v, want %v", c.evidence, c.vr, c.tr, c.kws, got, c.want)
		}
	}
	if ConfidenceHigh.String() != "high" || ConfidenceHigh.Label() != "hoch" || ConfidenceLow.Label(WithLanguage("en")) != "low" {
		t.Errorf("labels: %s %s %s", ConfidenceHigh, ConfidenceHigh.Label(), ConfidenceLow.Label(WithLanguage("en")))
	}
	// The spec's function keeps its thresholds.
	if ConfidenceLabel(5, false) != "mittel" || ConfidenceLabel(8, false) != "hoch" || ConfidenceLabel(9, true) != "niedrig" {
		t.Error("ConfidenceLabel changed")
	}
}
