package engine

import (
	"fmt"
	"testing"
)

func TestSanitizeAnswerWithMarker(t *testing.T) {
	in := "See [here](https://evil.example/?q=1) and https://evil.example/x ![i](https://evil.example/p.png)"
	allowed := []string{"https://docs.example/"}
	if got, want := SanitizeAnswerWith(in, allowed, WithRemovedLinkMarker(EnglishRemovedLinkMarker)),
		"See here [link removed] and [link removed] i"; got != want {
		t.Errorf("English marker: %q, want %q", got, want)
	}
	if got := SanitizeAnswerWith(in, allowed); got != SanitizeAnswer(in, allowed) {
		t.Errorf("no option differs from SanitizeAnswer: %q", got)
	}
	if got := SanitizeAnswerWith(in, allowed, WithRemovedLinkMarker("")); got != SanitizeAnswer(in, allowed) {
		t.Errorf("empty marker: %q", got)
	}
}

func ExampleSanitizeAnswerWith() {
	answer := "Details: [the full list](https://evil.example/leak?d=secret)."
	fmt.Println(SanitizeAnswerWith(answer, nil, WithRemovedLinkMarker(EnglishRemovedLinkMarker)))
	// Output: Details: the full list [link removed].
}
