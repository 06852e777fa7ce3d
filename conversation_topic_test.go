package engine

import (
	"strings"
	"testing"
)

// TestTopicStandaloneQuestion: a short follow-up keeps the topic over
// several turns (turn 3 still says "virtual environment", which
// FallbackStandaloneQuestion loses), a question with enough words of its
// own starts a new topic, and an empty history changes nothing.
func TestTopicStandaloneQuestion(t *testing.T) {
	h := []QATurn{
		{Question: "How do I create a virtual environment?", Answer: "Run tern env create ./my-env."},
		{Question: "and how do I activate it?", Answer: "Run tern env activate."},
	}
	const turn3 = "and how do I activate it on Windows? what about deleting it?"
	got := TopicStandaloneQuestion(turn3, h, 0)
	if !strings.Contains(got, "virtual environment") || !strings.HasSuffix(got, turn3) {
		t.Errorf("turn 3: %q, want the topic words and the follow-up", got)
	}
	if strings.Count(got, "activate") != 1 {
		t.Errorf("turn 3 repeats a word of its own: %q", got)
	}
	if old := FallbackStandaloneQuestion(turn3, h); strings.Contains(old, "virtual") {
		t.Fatalf("the spec function's behaviour changed: %q", old)
	}
	// Turn 2 alone.
	if got := TopicStandaloneQuestion(h[1].Question, h[:1], 0); got != "create virtual environment and how do I activate it?" {
		t.Errorf("turn 2: %q", got)
	}
	// A new topic: enough content words of its own.
	const fresh = "Which compression levels does the backup archiver support for nightly jobs?"
	if got := TopicStandaloneQuestion(fresh, h, 0); got != fresh {
		t.Errorf("new topic: %q", got)
	}
	// ... and a short follow-up after it continues the new topic.
	h2 := append(h, QATurn{Question: fresh})
	if got := TopicStandaloneQuestion("and the default?", h2, 0); !strings.Contains(got, "compression") || strings.Contains(got, "virtual") {
		t.Errorf("follow-up of the new topic: %q", got)
	}
	if got := TopicStandaloneQuestion(" Frage? ", nil, 0); got != "Frage?" {
		t.Errorf("no history: %q", got)
	}
	// minTerms 1: every question with a content word is its own topic.
	if got := TopicStandaloneQuestion(turn3, h, 1); got != turn3 {
		t.Errorf("minTerms 1: %q", got)
	}
}
