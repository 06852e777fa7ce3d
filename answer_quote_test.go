package engine

import (
	"strings"
	"testing"
)

// quoteFor is passageQuote for a question.
func quoteFor(passage, question string, headings []string, maxCols int) string {
	q, _, _, _ := passageQuote(passage, "", quoteTerms(question), headings, maxCols)
	return q
}

// englishSanitize has the English removed-link marker.
var englishSanitize = &ConversationOptions{Labels: EnglishLabels}

// citeQuote is generatedQuote for a passage.
func citeQuote(passage, answer string, used []string) string {
	return generatedQuote(SearchHit{Passage: passage}, answer, used, englishSanitize)
}

func TestPassageQuote(t *testing.T) {
	passage := "Setup\nTo start, run the tool:\nkiln init --force\nIt writes a config file. Then edit it by hand.\n- first item of a long list that must stay whole\nSecond section text."
	got := quoteFor(passage, "how do I start the tool", []string{"Setup"}, 40)
	if got != "To start, run the tool:\nkiln init --force" {
		t.Errorf("excerpt %q", got)
	}
	if got := quoteFor(passage, "long list item", []string{"Setup"}, 20); !strings.Contains(got, "- first item of a long list that must stay whole") {
		t.Errorf("list item cut: %q", got)
	}
	for l, want := range map[string]bool{"tern env create ./harbor-env --prompt harbor": true, "python3 -m venv proj": true,
		"Creating a virtual environment": false, "It writes a config file.": false, "6.6.2 Manual input": false} {
		if looksLikeCode(l) != want {
			t.Errorf("looksLikeCode(%q) = %v", l, !want)
		}
	}
}

// TestPassageQuoteSkipsFragments: what links and navigation leave in a
// page's text (a removed-link marker, "See more", a breadcrumb, a
// Markdown image, a two-word line) is not quoted as the answer even when
// it matches as many words of the question as the sentence that answers,
// and a quote stops before such a fragment.
func TestPassageQuoteSkipsFragments(t *testing.T) {
	for _, c := range []struct{ passage, question, want, not string }{
		{"Virtual environment [link removed] See more.\nTo create a new one, run the venv module with the folder to create it in.",
			"How do I create a virtual environment?", "To create a new one, run the venv module", "See more"},
		{"Docs » Tutorial » Virtual environments\nA virtual environment keeps the packages of each project apart.",
			"what is a virtual environment", "A virtual environment keeps the packages", "»"},
		{"![tracking](https://evil.example/leak.png) See [more](https://evil.example/phish) about virtual environments.\nA virtual environment is a folder with its own interpreter.",
			"virtual environments", "A virtual environment is a folder with its own interpreter.", "tracking"},
		{"Virtual environments.\nA virtual environment is a folder with its own interpreter and packages.",
			"virtual environments", "A virtual environment is a folder", "Virtual environments."},
		{"A virtual environment keeps the packages of each project apart. See more [Link entfernt]. Unrelated closing words here.",
			"virtual environment packages", "A virtual environment keeps the packages of each project apart.", "See more"},
	} {
		got := quoteFor(c.passage, c.question, []string{"Virtual environments"}, 300)
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%q: excerpt %q, want it to start with %q and not to contain %q", c.question, got, c.want, c.not)
		}
	}
	// Whole units stay quotable: a short list item, a code line, a table row.
	for _, c := range []struct{ passage, question, want string }{
		{"- Windows: activate.bat\nSome other sentence about nothing at all here.", "windows", "- Windows: activate.bat"},
		{"Run it:\npython3 -m venv env\nThat is all there is to it, really.", "venv", "Run it:\npython3 -m venv env"},
		{"Web toolkit | 95 MB\nSizes vary with the packages you install later on.", "toolkit size", "Web toolkit | 95 MB"},
	} {
		if got := quoteFor(c.passage, c.question, nil, 300); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: excerpt %q, want it to start with %q", c.question, got, c.want)
		}
	}
	for text, want := range map[string]bool{
		"See more [link removed].": true, "Home » Guide » Setup": true, "Next": true, "- [link removed]": true,
		"A virtual environment is a folder.": false, "python3 -m venv env": false, "- Windows: activate.bat": false,
	} {
		u := passageUnits(text, []string{"unused heading"})
		if len(u) != 1 || weakUnit(u[0]) != want {
			t.Errorf("weakUnit(%q) = %v, want %v (units %+v)", text, !want, want, u)
		}
	}
}

// TestGeneratedQuoteNotHeading: a generated answer that repeats a section's
// heading ("Creating a virtual environment [1]") gets the section's text
// as its citation's quote, not the heading alone, and a fragment left by
// a link is not the quote either.
func TestGeneratedQuoteNotHeading(t *testing.T) {
	p := "Creating a virtual environment\nTo create a virtual environment, choose a folder for it and run the env command:\ntern env create ./harbor-env"
	got := citeQuote(p, "Creating a virtual environment [1]\n\ntracking See more [link removed].", nil)
	if !strings.Contains(got, "To create a virtual environment, choose a folder") {
		t.Errorf("quote %q", got)
	}
	// The sentence ends in a colon: the command it introduces is quoted too.
	if !strings.Contains(got, "tern env create ./harbor-env") {
		t.Errorf("quote %q", got)
	}
	p = "See more [link removed] about virtual environments.\nA virtual environment keeps each project's packages apart."
	if got := citeQuote(p, "about virtual environments", nil); !strings.HasPrefix(got, "A virtual environment keeps") {
		t.Errorf("quote %q", got)
	}
}

// TestGeneratedQuoteNoGluedHeading: a passage's leading heading (which the
// citation's label shows) is not glued to the quote's first sentence.
func TestGeneratedQuoteNoGluedHeading(t *testing.T) {
	cases := []struct{ passage, answer string }{
		{"Creating a virtual environment\nTo create a virtual environment, choose a folder for it and run the env command.", "Creating a virtual environment [1]"},
		{"Working in virtual environments\nTern keeps the packages of each project apart by installing them into a virtual environment.", "Tern keeps packages apart in a virtual environment."},
		{"Cancellations and refunds\nYou can cancel a booking free of charge up to 48 hours before the tour starts.", "You can cancel up to 48 hours before."},
	}
	for _, c := range cases {
		heading := c.passage[:strings.Index(c.passage, "\n")]
		if got := citeQuote(c.passage, c.answer, nil); strings.HasPrefix(got, heading) || got == "" {
			t.Errorf("generated: quote %q starts with the heading %q", got, heading)
		}
		if got := quoteFor(c.passage, c.answer, []string{heading}, 300); strings.HasPrefix(got, heading) || got == "" {
			t.Errorf("extractive: quote %q starts with the heading %q", got, heading)
		}
	}
}

// TestGeneratedQuoteDistinct: a quote an earlier citation already shows is
// replaced by the passage's next best sentence.
func TestGeneratedQuoteDistinct(t *testing.T) {
	p := "Wetsuits cost 15 euros per day. Spray skirts are included. Gloves are free."
	first := citeQuote(p, "wetsuits cost 15 euros", nil)
	second := citeQuote(p, "wetsuits cost 15 euros", []string{first})
	if first != "Wetsuits cost 15 euros per day." || second == first || second == "" {
		t.Errorf("excerpts %q then %q", first, second)
	}
}

// TestPassageQuoteCJK: a Japanese question finds the sentence that answers
// it (its keyword is a whole clause, matched by pairs of characters), the
// quote joins Japanese sentences without a space, and its length counts a
// CJK character as two columns.
func TestPassageQuoteCJK(t *testing.T) {
	passage := "試験の準備\n" +
		"このマニュアルでは試験の流れを説明します。採点の前に答案を読み込みます。" +
		"試験の準備では、まず受験者数を入力してから、人数分の試験問題用紙を印刷してください。予備の用紙も用意すると安心です。" +
		"補足として関連する項目も確認しておくと作業が円滑に進みます。"
	got := quoteFor(passage, "受験者数はどこで入力しますか", []string{"試験の準備"}, 120)
	want := "試験の準備では、まず受験者数を入力してから、人数分の試験問題用紙を印刷してください。予備の用紙も用意すると安心です。"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if w := quoteWidth("ab設定"); w != 6 {
		t.Errorf("quoteWidth = %d, want 6", w)
	}
}

// TestSanitizingWriter: however the model's reply is split into chunks,
// the streamed text equals what SanitizeAnswer makes of the whole reply
// (no image or foreign link gets through half-written).
func TestSanitizingWriter(t *testing.T) {
	reply := "You can cancel up to 48 hours before [1].\n![x](https://evil.example/p.png) See [here](https://evil.example/a) or https://evil.example/b now.\nDone [2]."
	want := SanitizeAnswerWithOptions(reply, nil, englishSanitize)
	for size := 1; size <= len(reply); size++ {
		var got strings.Builder
		sw := &sanitizingWriter{opts: englishSanitize, emit: func(s string) { got.WriteString(s) }}
		for i := 0; i < len(reply); i += size {
			sw.write(reply[i:min(i+size, len(reply))])
		}
		sw.flush()
		if strings.Contains(got.String(), "evil.example") || strings.Contains(got.String(), "![") || strings.Contains(got.String(), "entfernt") {
			t.Fatalf("chunks of %d: leaked: %q", size, got.String())
		}
		if strings.Join(strings.Fields(got.String()), " ") != strings.Join(strings.Fields(want), " ") {
			t.Fatalf("chunks of %d:\n got %q\nwant %q", size, got.String(), want)
		}
	}
}
