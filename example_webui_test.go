package engine_test

import (
	"fmt"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// A short follow-up keeps the conversation's topic words over turns.
func ExampleTopicStandaloneQuestion() {
	history := []askyourdocs.QATurn{
		{Question: "How do I create a virtual environment?"},
		{Question: "and how do I activate it?"},
	}
	fmt.Println(askyourdocs.TopicStandaloneQuestion("and on Windows? what about deleting it?", history, 0))
	// Output: create virtual environment activate and on Windows? what about deleting it?
}

// A hit's confidence level (SearchHit.Level, calibrated from its
// evidence) in English (String) and in German (the level's field of
// GermanLabels).
func ExampleConfidenceLevel() {
	de := askyourdocs.GermanLabels
	german := map[askyourdocs.ConfidenceLevel]string{
		askyourdocs.ConfidenceHigh:   de.High,
		askyourdocs.ConfidenceMedium: de.Medium,
		askyourdocs.ConfidenceLow:    de.Low,
	}
	for _, l := range []askyourdocs.ConfidenceLevel{askyourdocs.ConfidenceHigh, askyourdocs.ConfidenceMedium, askyourdocs.ConfidenceLow} {
		fmt.Println(l, german[l])
	}
	// Output:
	// high hoch
	// medium mittel
	// low niedrig
}

// Sentences end after ".", "!" or "?" and a space, not after a single
// letter.
func ExampleSplitSentences() {
	for _, s := range askyourdocs.SplitSentences("Bring z. B. a towel. Book early! Questions? Ask us.") {
		fmt.Println(s)
	}
	// Output:
	// Bring z. B. a towel.
	// Book early!
	// Questions?
	// Ask us.
}
