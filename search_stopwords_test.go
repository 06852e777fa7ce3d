package engine

import "testing"

func TestQuestionStopWords(t *testing.T) {
	sw := QuestionStopWords()
	for _, w := range []string{"how", "does", "the", "what", "wie", "der", "können"} {
		if !sw[w] {
			t.Errorf("%q is not a stop word", w)
		}
	}
	for _, w := range []string{"refund", "kayak", "rechnung", "c", "install"} {
		if sw[w] {
			t.Errorf("content word %q is a stop word", w)
		}
	}
	sw["refund"] = true
	if QuestionStopWords()["refund"] {
		t.Error("a caller's change to the map reached the next call")
	}
}
