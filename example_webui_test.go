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

// The calibrated level of a hit from its evidence: score, ranks in the
// vector and keyword lists, the question's keywords and how many of them
// its heading names.
func ExampleCalibratedConfidence() {
	e := askyourdocs.ConfidenceEvidence{Evidence: 10, VectorRank: 1, TextRank: 1, Keywords: 3, HeadingKeywords: 2}
	fmt.Println(askyourdocs.CalibratedConfidence(e))
	e.HeadingKeywords = 1
	fmt.Println(askyourdocs.CalibratedConfidence(e).String())
	e.TextRank = 4
	fmt.Println(askyourdocs.CalibratedConfidence(e).Label())
	// Output:
	// high
	// medium
	// niedrig
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
