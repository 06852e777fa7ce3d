package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// TestConversationOptions checks the options forms of the conversation
// family: nil is the spec function's behaviour, labels and limits come
// from ConversationOptions, and the deprecated twins give the same results.
func TestConversationOptions(t *testing.T) {
	english := &ConversationOptions{Labels: EnglishLabels}
	if got, want := FormatHistoryWithOptions(conversationHistory, nil), FormatHistory(conversationHistory); got != want {
		t.Errorf("FormatHistoryWithOptions(nil) = %q, want FormatHistory's %q", got, want)
	}
	if got := FormatHistoryWithOptions(conversationHistory[:1], english); !strings.HasPrefix(got, "User: ") || !strings.Contains(got, "\nAssistant: ") {
		t.Errorf("FormatHistoryWithOptions(English) = %q", got)
	}
	partial := &ConversationOptions{Labels: ConversationLabels{User: "Q"}}
	if got := FormatHistoryWithOptions(conversationHistory[:1], partial); !strings.HasPrefix(got, "Q: ") || !strings.Contains(got, "\nAssistent: ") {
		t.Errorf("empty label fields should stay German: %q", got)
	}

	long := make([]QATurn, 10)
	for i := range long {
		long[i] = QATurn{Question: strings.Repeat("q", 10), Answer: strings.Repeat("a", 10)}
		long[i].Question += string(rune('0' + i))
	}
	for _, c := range []struct {
		name  string
		o     *ConversationOptions
		first int // index of the first turn kept
	}{
		{"nil keeps MaxHistoryTurns", nil, 10 - MaxHistoryTurns},
		{"zero MaxTurns keeps MaxHistoryTurns", &ConversationOptions{}, 10 - MaxHistoryTurns},
		{"MaxTurns", &ConversationOptions{MaxTurns: 3}, 7},
		{"negative MaxTurns: no turn limit", &ConversationOptions{MaxTurns: -1}, 0},
		{"MaxChars", &ConversationOptions{MaxTurns: -1, MaxChars: 45}, 8},
		{"newest turn kept over MaxChars", &ConversationOptions{MaxChars: 5}, 9},
	} {
		got := TrimHistoryWithOptions(long, c.o)
		if !slices.Equal(got, long[c.first:]) {
			t.Errorf("%s: kept %d turns, want the last %d", c.name, len(got), 10-c.first)
		}
	}
	if got := TrimHistoryWithOptions(long, nil); !slices.Equal(got, TrimHistory(long)) {
		t.Error("TrimHistoryWithOptions(nil) differs from TrimHistory")
	}
	if got := TrimHistoryWithOptions(long, &ConversationOptions{MaxTurns: 4, MaxChars: 50}); !slices.Equal(got, TrimHistoryWith(long, 4, 50)) {
		t.Error("TrimHistoryWithOptions differs from its deprecated twin TrimHistoryWith")
	}

	for score := range 11 {
		for _, fb := range []bool{false, true} {
			if got, want := ConfidenceLabelWithOptions(score, fb, nil), ConfidenceLabel(score, fb); got != want {
				t.Errorf("ConfidenceLabelWithOptions(%d, %v, nil) = %q, want %q", score, fb, got, want)
			}
		}
		if got, want := ConfidenceLabelWithOptions(score, false, english), ConfidenceLabelWith(score, WithLanguage("en")); got != want {
			t.Errorf("ConfidenceLabelWithOptions(%d, English) = %q, want %q", score, got, want)
		}
	}
	if got := ConfidenceLabelWithOptions(9, true, english); got != "low" {
		t.Errorf("fallback in English = %q, want low", got)
	}

	text := "Die Wohnung liegt im dritten Stock. Die Kaution beträgt drei Monatsmieten. Haustiere sind erlaubt."
	for _, max := range []int{0, 30, 80} {
		if got, want := BestExcerptWithOptions(text, &ExcerptOptions{Query: "Kaution", MaxChars: max}), BestExcerptFor(text, "Kaution", max); got != want {
			t.Errorf("Excerpt(MaxChars %d) = %q, want %q", max, got, want)
		}
	}
	if got := BestExcerptWithOptions(text, &ExcerptOptions{Query: "Wie hoch ist die Kaution?", MaxChars: 80}); got != "Die Kaution beträgt drei Monatsmieten. Haustiere sind erlaubt." {
		t.Errorf("Excerpt = %q", got)
	}
}

// TestCondenseOptions checks that CondenseFollowUpWithOptions formats the history with the
// options' labels and that nil gives CondenseFollowUp's German prompt.
func TestCondenseOptions(t *testing.T) {
	g := genkit.Init(context.Background())
	var seen string
	m := genkit.DefineModel(g, "test/condense-options", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			seen = req.Messages[len(req.Messages)-1].Text()
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("Kann ich die Kaution von 2.400 Euro in 4 Raten zahlen?")}, nil
		})
	p := genkit.DefinePrompt(g, "condense-options", ai.WithPrompt("{{conversation}}|{{question}}"))
	ctx := context.Background()
	q := "Kann ich sie in 4 Raten zahlen?"
	got := CondenseFollowUpWithOptions(ctx, p, m, nil, q, conversationHistory, nil)
	if got != "Kann ich die Kaution von 2.400 Euro in 4 Raten zahlen?" || seen != FormatHistory(conversationHistory)+"|"+q {
		t.Errorf("CondenseFollowUpWithOptions(nil) = %q with prompt %q", got, seen)
	}
	CondenseFollowUpWithOptions(ctx, p, m, nil, q, conversationHistory, &ConversationOptions{Labels: EnglishLabels})
	if !strings.HasPrefix(seen, "User: ") {
		t.Errorf("English labels not applied to the prompt: %q", seen)
	}
}

// TestCleanAnswerMarker checks SanitizeAnswerWithOptions's options: nil is
// SanitizeAnswer, a marker replaces removed links, as the deprecated
// SanitizeAnswerWith does.
func TestCleanAnswerMarker(t *testing.T) {
	answer := "See [the form](https://evil.example/x) or https://docs.example/a."
	allowed := []string{"https://docs.example/a"}
	if got, want := SanitizeAnswerWithOptions(answer, allowed, nil), SanitizeAnswer(answer, allowed); got != want {
		t.Errorf("SanitizeAnswerWithOptions(nil) = %q, want SanitizeAnswer's %q", got, want)
	}
	got := SanitizeAnswerWithOptions(answer, allowed, &ConversationOptions{Labels: EnglishLabels})
	if !strings.Contains(got, "[link removed]") || strings.Contains(got, "evil") || !strings.Contains(got, "https://docs.example/a") {
		t.Errorf("SanitizeAnswerWithOptions(English labels) = %q", got)
	}
	if old := SanitizeAnswerWith(answer, allowed, WithRemovedLinkMarker(EnglishRemovedLinkMarker)); old != got {
		t.Errorf("SanitizeAnswerWith = %q, SanitizeAnswerWithOptions = %q", old, got)
	}
	if old := CleanAnswer(answer, allowed, &SanitizeOptions{RemovedLinkMarker: EnglishRemovedLinkMarker}); old != got {
		t.Errorf("CleanAnswer = %q, SanitizeAnswerWithOptions = %q", old, got)
	}
	// A label set of the app's own: its marker, the other fields German.
	own := SanitizeAnswerWithOptions(answer, allowed, &ConversationOptions{Labels: ConversationLabels{RemovedLink: "[lien supprimé]"}})
	if !strings.Contains(own, "[lien supprimé]") || strings.Contains(own, "[Link entfernt]") {
		t.Errorf("SanitizeAnswerWithOptions(own marker) = %q", own)
	}
}

// TestAnswerLabelsRemovedLink: Answer's removed-link marker is its
// Labels.RemovedLink, German by default.
func TestAnswerLabelsRemovedLink(t *testing.T) {
	for _, c := range []struct {
		name string
		o    AnswerOptions
		want string
	}{
		{"default", AnswerOptions{}, "[Link entfernt]"},
		{"english labels", AnswerOptions{Labels: EnglishLabels}, "[link removed]"},
		{"own marker", AnswerOptions{Labels: ConversationLabels{RemovedLink: "[x]"}}, "[x]"},
	} {
		got := SanitizeAnswerWithOptions("see https://evil.example/x", nil, c.o.sanitize())
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want the marker %q", c.name, got, c.want)
		}
	}
}
