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

// The calibrated level of a hit from its evidence score, its ranks in the
// vector and keyword lists and the question's keyword count.
func ExampleCalibratedConfidence() {
	fmt.Println(askyourdocs.CalibratedConfidence(10, 1, 1, 3))
	fmt.Println(askyourdocs.CalibratedConfidence(10, 2, 1, 3).Label(askyourdocs.WithLanguage("en")))
	fmt.Println(askyourdocs.CalibratedConfidence(10, 1, 4, 3).Label())
	// Output:
	// high
	// medium
	// niedrig
}
