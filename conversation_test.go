package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

var conversationHistory = []QATurn{
	{Question: "Wie hoch ist die Kaution für die Wohnung in der Lindenstraße 12?", Answer: "Die Kaution beträgt 2.400 Euro, also drei Monatsmieten."},
	{Question: "Und wann wird sie fällig?", Answer: "Zu Beginn des Mietverhältnisses, zahlbar in 3 Raten."},
}

func TestFormatHistory(t *testing.T) {
	got := FormatHistory(conversationHistory)
	want := "Nutzer: Wie hoch ist die Kaution für die Wohnung in der Lindenstraße 12?\n" +
		"Assistent: Die Kaution beträgt 2.400 Euro, also drei Monatsmieten.\n" +
		"\n" +
		"Nutzer: Und wann wird sie fällig?\n" +
		"Assistent: Zu Beginn des Mietverhältnisses, zahlbar in 3 Raten.\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	en := FormatHistory(conversationHistory[:1], WithLanguage("en-US"))
	if !strings.HasPrefix(en, "User: ") || !strings.Contains(en, "\nAssistant: ") {
		t.Errorf("English labels: %q", en)
	}
	custom := FormatHistory(conversationHistory[:1], WithLabels(ConversationLabels{User: "Q"}))
	if !strings.HasPrefix(custom, "Q: ") || !strings.Contains(custom, "\nAssistent: ") {
		t.Errorf("custom labels: %q", custom)
	}
	if FormatHistory(nil) != "" {
		t.Error("empty history not empty")
	}
	if fr := FormatHistory(conversationHistory[:1], WithLanguage("fr")); !strings.HasPrefix(fr, "Nutzer: ") {
		t.Errorf("unknown language should keep German: %q", fr)
	}
}

func TestTrimHistory(t *testing.T) {
	h := []QATurn{{"q1", "aaaa"}, {"q2", "bbbb"}, {"q3", "cccc"}, {"q4", "dddd"}} // 6 chars each
	for _, tc := range []struct {
		turns, chars int
		want         []string
	}{
		{0, 0, []string{"q1", "q2", "q3", "q4"}},
		{2, 0, []string{"q3", "q4"}},
		{0, 12, []string{"q3", "q4"}},
		{0, 13, []string{"q3", "q4"}},
		{3, 100, []string{"q2", "q3", "q4"}},
		{0, 1, []string{"q4"}}, // the newest turn is always kept
		{1, 1, []string{"q4"}},
	} {
		got := TrimHistory(h, tc.turns, tc.chars)
		var qs []string
		for _, t := range got {
			qs = append(qs, t.Question)
		}
		if !slices.Equal(qs, tc.want) {
			t.Errorf("TrimHistory(%d, %d) = %v, want %v", tc.turns, tc.chars, qs, tc.want)
		}
	}
	got := TrimHistory(h, 0, 0)
	got[0].Question = "changed"
	if h[0].Question != "q1" {
		t.Error("TrimHistory shares its result with the input")
	}
	if len(TrimHistory(nil, 3, 3)) != 0 {
		t.Error("empty history")
	}
}

func TestIsReliableCondense(t *testing.T) {
	q := "Kann ich sie auch in 4 Raten zahlen?"
	for _, tc := range []struct {
		condensed string
		want      bool
	}{
		{"Kann ich die Kaution von 2.400 Euro für die Wohnung in der Lindenstraße 12 auch in 4 Raten zahlen?", true},
		{"Kann ich die Kaution (2400 Euro) auch in 4 Raten zahlen?", true},     // same number, other format
		{"Kann ich die Kaution auch in 4 Raten statt 3 Raten zahlen?", true},   // 3 is in the history
		{"Kann ich die Kaution für Lindenstraße 14 in 4 Raten zahlen?", false}, // invented 14
		{"Kann ich die Kaution von 2.500 Euro in 4 Raten zahlen?", false},      // invented 2.500
		{"Kann ich die Kaution für die Wohnung auch in Raten zahlen?", false},  // dropped 4
		{"", false},
		{strings.Repeat("Kaution 4 ", 200), false}, // runaway reply
	} {
		if got := IsReliableCondense(conversationHistory, q, tc.condensed); got != tc.want {
			t.Errorf("IsReliableCondense(%q) = %v, want %v", tc.condensed, got, tc.want)
		}
	}
}

func TestFallbackStandaloneQuestion(t *testing.T) {
	if got := FallbackStandaloneQuestion(conversationHistory, " Und in Raten? "); got != "Und wann wird sie fällig? Und in Raten?" {
		t.Errorf("got %q", got)
	}
	if got := FallbackStandaloneQuestion(nil, "Frage?"); got != "Frage?" {
		t.Errorf("no history: %q", got)
	}
}

func TestCondenseFollowUp(t *testing.T) {
	g := genkit.Init(context.Background())
	var reply string
	var fail bool
	var calls int
	var seen string
	m := genkit.DefineModel(g, "test/condense", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			calls++
			seen = req.Messages[len(req.Messages)-1].Text()
			if fail {
				return nil, errors.New("down")
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage(reply)}, nil
		})
	p := genkit.DefinePrompt(g, "condense", ai.WithPrompt("Verlauf:\n{{this.history}}\nFolgefrage: {{question}}"))
	ctx := context.Background()
	q := "Kann ich sie in 4 Raten zahlen?"

	reply = "Eigenständige Frage: \"Kann ich die Kaution von 2.400 Euro in 4 Raten zahlen?\""
	if got := CondenseFollowUp(ctx, p, m, nil, conversationHistory, q); got != "Kann ich die Kaution von 2.400 Euro in 4 Raten zahlen?" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(seen, "Nutzer: Wie hoch ist die Kaution") || !strings.HasSuffix(seen, "Folgefrage: "+q) {
		t.Errorf("prompt input not passed: %q", seen)
	}
	// The same text under "conversation", for templates that avoid the
	// name of dotprompt's history helper.
	p2 := genkit.DefinePrompt(g, "condense2", ai.WithPrompt("{{conversation}}|{{question}}"))
	CondenseFollowUp(ctx, p2, m, nil, conversationHistory, q)
	if seen != FormatHistory(conversationHistory)+"|"+q {
		t.Errorf("conversation key: %q", seen)
	}
	fallback := FallbackStandaloneQuestion(conversationHistory, q)
	reply = "Kann ich die Kaution von 9.999 Euro in 4 Raten zahlen?" // invents a number
	if got := CondenseFollowUp(ctx, p, m, nil, conversationHistory, q); got != fallback {
		t.Errorf("invented number accepted: %q", got)
	}
	reply = ""
	if got := CondenseFollowUp(ctx, p, m, nil, conversationHistory, q); got != fallback {
		t.Errorf("empty reply: %q", got)
	}
	fail = true
	if got := CondenseFollowUp(ctx, p, m, nil, conversationHistory, q); got != fallback {
		t.Errorf("model error: %q", got)
	}
	calls = 0
	if got := CondenseFollowUp(ctx, p, m, nil, nil, q); got != q || calls != 0 {
		t.Errorf("no history: %q after %d calls", got, calls)
	}
	fail = false
	reply = "Can I pay the deposit in 4 instalments?"
	CondenseFollowUp(ctx, p, m, nil, conversationHistory, q, WithLanguage("en"))
	if !strings.Contains(seen, "User: ") {
		t.Errorf("language option not applied to history: %q", seen)
	}
}

func TestConfidenceLabel(t *testing.T) {
	for score, want := range map[int]string{10: "hoch", 7: "hoch", 6: "mittel", 4: "mittel", 3: "niedrig", 0: "niedrig", -1: "niedrig", 12: "hoch"} {
		if got := ConfidenceLabel(score); got != want {
			t.Errorf("ConfidenceLabel(%d) = %q, want %q", score, got, want)
		}
	}
	if got := ConfidenceLabel(8, WithLanguage("EN")); got != "high" {
		t.Errorf("English: %q", got)
	}
	if got := ConfidenceLabel(5, WithLabels(ConversationLabels{Medium: "moyen"})); got != "moyen" {
		t.Errorf("custom: %q", got)
	}
}

func TestBestExcerpt(t *testing.T) {
	text := "Die Wohnung liegt im dritten Stock. Die Kaution beträgt drei Monatsmieten und ist zu Beginn fällig. " +
		"Haustiere sind erlaubt. Der Garten darf mitbenutzt werden."
	got := BestExcerpt(text, "Wann ist die Kaution fällig?", 120)
	if !strings.HasPrefix(got, "Die Kaution beträgt drei Monatsmieten und ist zu Beginn fällig.") {
		t.Errorf("got %q", got)
	}
	if utf8.RuneCountInString(got) > 120 || !strings.Contains(text, got) {
		t.Errorf("not a verbatim quote within 120 chars: %q", got)
	}
	// Inflection: "Haustieren" matches "Haustiere" by prefix.
	if got := BestExcerpt(text, "Darf ich mit Haustieren einziehen?", 30); got != "Haustiere sind erlaubt." {
		t.Errorf("prefix match: %q", got)
	}
	// No match: the start of the text, cut at a word boundary.
	got = BestExcerpt(text, "xyz", 20)
	if !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > 20 || !strings.HasPrefix(text, strings.TrimSuffix(got, "…")) {
		t.Errorf("cut: %q", got)
	}
	// Abbreviations do not split sentences.
	if got := BestExcerpt("Zahlen Sie z. B. per Überweisung. Sonst bar.", "Überweisung", 200); !strings.HasPrefix(got, "Zahlen Sie z. B. per Überweisung.") {
		t.Errorf("abbreviation: %q", got)
	}
	if BestExcerpt("  ", "q", 10) != "" {
		t.Error("empty text")
	}
}

func FuzzBestExcerpt(f *testing.F) {
	f.Add("Die Kaution beträgt drei Monatsmieten. Haustiere sind erlaubt.", "Kaution?", 40)
	f.Add("a. b. c.", "b", 1)
	f.Add("Ünïcödé… text! Mit? Zeichen.", "zeichen", 5)
	f.Fuzz(func(t *testing.T, text, question string, max int) {
		max = max%500 + 1
		if max < 1 {
			max += 500
		}
		got := BestExcerpt(text, question, max)
		if n := utf8.RuneCountInString(got); n > max {
			t.Fatalf("%d runes > %d", n, max)
		}
		if utf8.ValidString(text) && !strings.Contains(strings.Join(strings.Fields(text), " "), strings.TrimSuffix(got, "…")) {
			t.Fatalf("%q is not a quote of %q", got, text)
		}
	})
}
