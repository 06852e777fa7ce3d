package engine

import (
	"context"
	"errors"
	"fmt"
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
		"Assistent: Zu Beginn des Mietverhältnisses, zahlbar in 3 Raten." // no trailing newline
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
	if MaxHistoryTurns != 6 {
		t.Fatalf("MaxHistoryTurns = %d, the original engine's is 6", MaxHistoryTurns)
	}
	var long []QATurn
	for i := range 9 {
		long = append(long, QATurn{Question: fmt.Sprintf("q%d", i+1), Answer: strings.Repeat("a", 1000)})
	}
	got := TrimHistory(long)
	if len(got) != 6 || got[0].Question != "q4" || got[5].Question != "q9" {
		t.Errorf("TrimHistory(9 turns) = %d turns from %q, want the last 6 (q4..q9)", len(got), got[0].Question)
	}
	got[0].Question = "changed"
	if long[3].Question != "q4" {
		t.Error("TrimHistory shares its result with the input")
	}
	if got := TrimHistory(long[:2]); len(got) != 2 {
		t.Errorf("TrimHistory(2 turns) = %d turns", len(got))
	}
	if len(TrimHistory(nil)) != 0 {
		t.Error("empty history")
	}
}

func TestTrimHistoryWith(t *testing.T) {
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
		got := TrimHistoryWith(h, tc.turns, tc.chars)
		var qs []string
		for _, t := range got {
			qs = append(qs, t.Question)
		}
		if !slices.Equal(qs, tc.want) {
			t.Errorf("TrimHistoryWith(%d, %d) = %v, want %v", tc.turns, tc.chars, qs, tc.want)
		}
	}
	got := TrimHistoryWith(h, 0, 0)
	got[0].Question = "changed"
	if h[0].Question != "q1" {
		t.Error("TrimHistoryWith shares its result with the input")
	}
	if len(TrimHistoryWith(nil, 3, 3)) != 0 {
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
		if got := IsReliableCondense(q, tc.condensed, conversationHistory); got != tc.want {
			t.Errorf("IsReliableCondense(%q) = %v, want %v", tc.condensed, got, tc.want)
		}
	}
}

// A follow-up without a number of its own must not lose every anchor of
// the conversation; one with its own number, or the unchanged question,
// passes (the original engine's rule).
func TestIsReliableCondenseAnchors(t *testing.T) {
	q := "Und bis wann muss ich sie zahlen?"
	for _, tc := range []struct {
		question, condensed string
		want                bool
	}{
		{q, "Bis wann muss ich die Kaution zahlen?", false},                        // drops Lindenstraße 12, 2.400, 3
		{q, "Bis wann muss ich die Kaution für die Lindenstraße 12 zahlen?", true}, // keeps one
		{q, "Bis wann muss ich die Kaution von 2.400 Euro zahlen?", true},          // keeps another
		{q, "Bis wann muss ich die Kaution (2400 €) zahlen?", true},                // same number, other format
		{q, "  " + q + " ", true}, // unchanged: always
		{"Gilt das auch für Nummer 14?", "Gilt die Kaution auch für die Wohnung Nummer 14?", true}, // own number
		{"Gilt das auch für Nummer 14?", "Gilt die Kaution auch für die Lindenstraße 12?", false},  // drops its own 14
	} {
		if got := IsReliableCondense(tc.question, tc.condensed, conversationHistory); got != tc.want {
			t.Errorf("IsReliableCondense(%q, %q) = %v, want %v", tc.question, tc.condensed, got, tc.want)
		}
	}
	// A conversation without numbers has no anchor to keep.
	plain := []QATurn{{Question: "Wer unterschreibt das Formular?", Answer: "Die Dekanin."}}
	if !IsReliableCondense("Und wo?", "Wo unterschreibt die Dekanin das Formular?", plain) {
		t.Error("rewrite rejected although the conversation has no anchors")
	}
}

func TestFallbackStandaloneQuestion(t *testing.T) {
	if got := FallbackStandaloneQuestion(" Und in Raten? ", conversationHistory); got != "Und wann wird sie fällig? Und in Raten?" {
		t.Errorf("got %q", got)
	}
	if got := FallbackStandaloneQuestion("Frage?", nil); got != "Frage?" {
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
	if got := CondenseFollowUp(ctx, p, m, nil, q, conversationHistory); got != "Kann ich die Kaution von 2.400 Euro in 4 Raten zahlen?" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(seen, "Nutzer: Wie hoch ist die Kaution") || !strings.HasSuffix(seen, "Folgefrage: "+q) {
		t.Errorf("prompt input not passed: %q", seen)
	}
	// The same text under "conversation", for templates that avoid the
	// name of dotprompt's history helper.
	p2 := genkit.DefinePrompt(g, "condense2", ai.WithPrompt("{{conversation}}|{{question}}"))
	CondenseFollowUp(ctx, p2, m, nil, q, conversationHistory)
	if seen != FormatHistory(conversationHistory)+"|"+q {
		t.Errorf("conversation key: %q", seen)
	}
	fallback := FallbackStandaloneQuestion(q, conversationHistory)
	reply = "Kann ich die Kaution von 9.999 Euro in 4 Raten zahlen?" // invents a number
	if got := CondenseFollowUp(ctx, p, m, nil, q, conversationHistory); got != fallback {
		t.Errorf("invented number accepted: %q", got)
	}
	// Dropping every anchor of the conversation: the fallback, which is
	// "<last question> <follow-up>".
	noNumber := "Und bis wann muss ich sie zahlen?"
	reply = "Bis wann muss ich die Kaution zahlen?"
	if got, want := CondenseFollowUp(ctx, p, m, nil, noNumber, conversationHistory), "Und wann wird sie fällig? "+noNumber; got != want {
		t.Errorf("rewrite without anchors: %q, want %q", got, want)
	}
	reply = "Bis wann muss ich die Kaution für die Lindenstraße 12 zahlen?"
	if got := CondenseFollowUp(ctx, p, m, nil, noNumber, conversationHistory); got != reply {
		t.Errorf("rewrite keeping an anchor: %q", got)
	}
	reply = ""
	if got := CondenseFollowUp(ctx, p, m, nil, q, conversationHistory); got != fallback {
		t.Errorf("empty reply: %q", got)
	}
	fail = true
	if got := CondenseFollowUp(ctx, p, m, nil, q, conversationHistory); got != fallback {
		t.Errorf("model error: %q", got)
	}
	calls = 0
	if got := CondenseFollowUp(ctx, p, m, nil, q, nil); got != q || calls != 0 {
		t.Errorf("no history: %q after %d calls", got, calls)
	}
	fail = false
	reply = "Can I pay the deposit in 4 instalments?"
	CondenseFollowUpWith(ctx, p, m, nil, q, conversationHistory, WithLanguage("en"))
	if !strings.Contains(seen, "User: ") {
		t.Errorf("language option not applied to history: %q", seen)
	}
}

func TestConfidenceLabel(t *testing.T) {
	for score, want := range map[int]string{10: "hoch", 8: "hoch", 7: "mittel", 5: "mittel", 4: "niedrig", 0: "niedrig", -1: "niedrig", 12: "hoch"} {
		if got := ConfidenceLabel(score, false); got != want {
			t.Errorf("ConfidenceLabel(%d, false) = %q, want %q", score, got, want)
		}
		if got := ConfidenceLabel(score, true); got != "niedrig" {
			t.Errorf("ConfidenceLabel(%d, true) = %q, want niedrig (fallback)", score, got)
		}
	}
}

func TestConfidenceLabelWith(t *testing.T) {
	for score, want := range map[int]string{9: "hoch", 8: "hoch", 7: "mittel", 5: "mittel", 4: "niedrig"} {
		if got := ConfidenceLabelWith(score); got != want {
			t.Errorf("ConfidenceLabelWith(%d) = %q, want %q", score, got, want)
		}
	}
	if got := ConfidenceLabelWith(8, WithLanguage("EN")); got != "high" {
		t.Errorf("English: %q", got)
	}
	if got := ConfidenceLabelWith(5, WithLabels(ConversationLabels{Medium: "moyen"})); got != "moyen" {
		t.Errorf("custom: %q", got)
	}
}

func TestBestExcerpt(t *testing.T) {
	chunk := "Die Wohnung liegt im dritten Stock. Die Kaution beträgt drei Monatsmieten und ist zu Beginn fällig. " +
		"Haustiere sind erlaubt. Der Garten darf mitbenutzt werden."
	for _, tc := range []struct{ answer, want string }{
		// The one sentence overlapping the answer most, alone.
		{"Die Kaution ist zu Beginn des Mietverhältnisses fällig.", "Die Kaution beträgt drei Monatsmieten und ist zu Beginn fällig."},
		{"Ja, Haustiere sind in der Wohnung erlaubt.", "Haustiere sind erlaubt."},
		// No overlap: the first sentence.
		{"xyz", "Die Wohnung liegt im dritten Stock."},
		{"", "Die Wohnung liegt im dritten Stock."},
	} {
		if got := BestExcerpt(chunk, tc.answer); got != tc.want {
			t.Errorf("BestExcerpt(answer %q) = %q, want %q", tc.answer, got, tc.want)
		}
	}
	// A long sentence is cut to a sensible length at a word boundary.
	long := strings.Repeat("Kaution und Miete ", 60) + "sind fällig."
	got := BestExcerpt(long, "Kaution")
	if n := utf8.RuneCountInString(got); n > 220 || n < 180 || !strings.HasSuffix(got, "…") ||
		!strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("long sentence: %d runes %q", n, got)
	}
	// The original engine's case: cut near 220 characters (its test
	// allows 230 bytes, "…" included).
	long = strings.Repeat("Modulprüfung ", 30) + "abgeschlossen."
	if got := BestExcerpt(long, "Modulprüfung abgeschlossen."); len(got) > 230 || !strings.HasSuffix(got, "…") {
		t.Errorf("long German sentence: %d bytes %q", len(got), got)
	}
	// A line break (between two paragraphs of a chunk) ends a sentence.
	if got := BestExcerpt("TOP 4\nDer Senat beschließt einstimmig die Änderung", "Der Senat beschließt"); got != "Der Senat beschließt einstimmig die Änderung" {
		t.Errorf("line break: %q", got)
	}
	if BestExcerpt("  ", "q") != "" {
		t.Error("empty chunk")
	}
}

func TestBestExcerptFor(t *testing.T) {
	text := "Die Wohnung liegt im dritten Stock. Die Kaution beträgt drei Monatsmieten und ist zu Beginn fällig. " +
		"Haustiere sind erlaubt. Der Garten darf mitbenutzt werden."
	got := BestExcerptFor(text, "Wann ist die Kaution fällig?", 120)
	if !strings.HasPrefix(got, "Die Kaution beträgt drei Monatsmieten und ist zu Beginn fällig.") {
		t.Errorf("got %q", got)
	}
	if utf8.RuneCountInString(got) > 120 || !strings.Contains(text, got) {
		t.Errorf("not a verbatim quote within 120 chars: %q", got)
	}
	// Inflection: "Haustieren" matches "Haustiere" by prefix.
	if got := BestExcerptFor(text, "Darf ich mit Haustieren einziehen?", 30); got != "Haustiere sind erlaubt." {
		t.Errorf("prefix match: %q", got)
	}
	// No match: the start of the text, cut at a word boundary.
	got = BestExcerptFor(text, "xyz", 20)
	if !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > 20 || !strings.HasPrefix(text, strings.TrimSuffix(got, "…")) {
		t.Errorf("cut: %q", got)
	}
	// Abbreviations do not split sentences.
	if got := BestExcerptFor("Zahlen Sie z. B. per Überweisung. Sonst bar.", "Überweisung", 200); !strings.HasPrefix(got, "Zahlen Sie z. B. per Überweisung.") {
		t.Errorf("abbreviation: %q", got)
	}
	if BestExcerptFor("  ", "q", 10) != "" {
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
		got := BestExcerptFor(text, question, max)
		if n := utf8.RuneCountInString(got); n > max {
			t.Fatalf("%d runes > %d", n, max)
		}
		if utf8.ValidString(text) && !strings.Contains(strings.Join(strings.Fields(text), " "), strings.TrimSuffix(got, "…")) {
			t.Fatalf("%q is not a quote of %q", got, text)
		}
		one := BestExcerpt(text, question)
		if n := utf8.RuneCountInString(one); n > 300 {
			t.Fatalf("BestExcerpt: %d runes > 300", n)
		}
		if utf8.ValidString(text) && !strings.Contains(strings.Join(strings.Fields(text), " "), strings.TrimSuffix(one, "…")) {
			t.Fatalf("BestExcerpt: %q is not a quote of %q", one, text)
		}
	})
}

// TestExcerptCJK: sentences end at 。！？ without a space, a Japanese or
// Chinese question's words are found inside the sentences' runs, and the
// quote stays verbatim.
func TestExcerptCJK(t *testing.T) {
	if got := SplitSentences("準備します。受験者数を入力してください！次へ？ Next one. Done"); !slices.Equal(got,
		[]string{"準備します。", "受験者数を入力してください！", "次へ？", "Next one.", "Done"}) {
		t.Errorf("SplitSentences = %q", got)
	}
	ja := "この章では試験の準備について説明します。採点の前に答案用紙を読み込みます。受験者数を入力してから、試験問題用紙を印刷してください。印刷には時間がかかります。"
	got := BestExcerptWithOptions(ja, &ExcerptOptions{Query: "受験者数はどこで入力しますか？", MaxChars: 60})
	if !strings.HasPrefix(got, "受験者数を入力してから、試験問題用紙を印刷してください。") || !strings.Contains(ja, got) {
		t.Errorf("Japanese excerpt = %q", got)
	}
	zh := "本章介绍如何安装软件包。配置文件位于系统目录中，修改后需要重新启动服务。日志文件记录了错误信息。"
	if got := BestExcerptWithOptions(zh, &ExcerptOptions{Query: "配置文件在哪里", MaxChars: 30}); !strings.HasPrefix(got, "配置文件位于系统目录中") {
		t.Errorf("Chinese excerpt = %q", got)
	}
}
