package main

import (
	"testing"
)

// TestFusionOptionsFromFlags checks that the defaults leave the fusion to
// the index (Search applies the settings it records for its embedder) and
// that settings a user gave are passed as given.
func TestFusionOptionsFromFlags(t *testing.T) {
	def := defaultRetrieveOptions()
	if f := def.fusion(); f != nil {
		t.Errorf("default options set the fusion: %+v", *f)
	}
	given := def
	given.embedderFusion, given.vectorWeight, given.rrfK = false, 0.3, 7
	f := given.fusion()
	if f == nil || f.RRFK != 7 || f.VectorWeight != 0.3 || f.TextWeight != def.keywordWeight || f.HyDEWeight != def.hydeWeight {
		t.Errorf("a user's settings were not passed as given: %+v", f)
	}
}
