package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// webuiFixtures is the folder of the web UI's own fixture documents.
func webuiFixtures(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "testdata", "webui"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// indexFixtures indexes the web UI fixture folder on the server.
func (ts *testServe) indexFixtures(t testing.TB) {
	t.Helper()
	rep, err := ts.s.runIndex(context.Background(), indexInput{Paths: []string{webuiFixtures(t)}}, func(string) {})
	if err != nil || len(rep.Failed) > 0 || rep.Sources < 2 {
		t.Fatalf("indexing the fixtures: %v, %+v", err, rep)
	}
}

// TestExtractiveAnswerQuotesWholeUnits: the command of a code block, a
// list item and a table row are quoted whole in extractive answers, and
// the line introducing a command ("...:") comes with it.
func TestExtractiveAnswerQuotesWholeUnits(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	ts.indexFixtures(t)
	for _, c := range []struct{ q, want string }{
		{"How do I create a virtual environment?", "run the env command of tern with the folder's name:\ntern env create ./harbor-env --prompt harbor"},
		{"How do I activate the environment on Windows?", `- On Windows: harbor-env\Scripts\activate.bat`},
		{"How do I delete an environment?", "remove its folder:\ntern env remove ./harbor-env"},
		{"How large is an environment with the web toolkit?", "With the web toolkit | Typical size: 95 MB"},
	} {
		out := ts.askJSON(t, askInput{Question: c.q})
		first, _, _ := strings.Cut(out.Answer, "\n\n")
		if !strings.Contains(first, c.want) {
			t.Errorf("%q: the first quote is\n%s\nwant it to contain %q", c.q, first, c.want)
		}
	}
}

func TestUnitExcerpt(t *testing.T) {
	passage := "Setup\nTo start, run the tool:\nkiln init --force\nIt writes a config file. Then edit it by hand.\n- first item of a long list that must stay whole\nSecond section text."
	got := unitExcerpt(passage, "how do I start the tool", []string{"Setup"}, 40)
	if got != "Setup\nTo start, run the tool:\nkiln init --force" {
		t.Errorf("excerpt %q", got)
	}
	if got := unitExcerpt(passage, "long list item", []string{"Setup"}, 20); !strings.Contains(got, "- first item of a long list that must stay whole") {
		t.Errorf("list item cut: %q", got)
	}
	for l, want := range map[string]bool{"tern env create ./harbor-env --prompt harbor": true, "python3 -m venv proj": true,
		"Creating a virtual environment": false, "It writes a config file.": false, "6.6.2 Manual input": false} {
		if looksLikeCode(l) != want {
			t.Errorf("looksLikeCode(%q) = %v", l, !want)
		}
	}
}

// TestUnitExcerptSkipsFragments: what links and navigation leave in a
// page's text (a removed-link marker, "See more", a breadcrumb, a
// Markdown image, a two-word line) is not quoted as the answer even when
// it matches as many words of the question as the sentence that answers,
// and a quote stops before such a fragment.
func TestUnitExcerptSkipsFragments(t *testing.T) {
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
		got := unitExcerpt(c.passage, c.question, []string{"Virtual environments"}, 300)
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
		if got := unitExcerpt(c.passage, c.question, nil, 300); !strings.HasPrefix(got, c.want) {
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

// TestNoMatchAnswer: a question whose words occur nowhere in the index
// says so first, in the API's answer (noMatch, missingTerms) and in
// MCP's ask_docs (the same answer), then quotes the closest passages.
func TestNoMatchAnswer(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	ts.indexFixtures(t)
	out := ts.askJSON(t, askInput{Question: "How do I tune the autovacuum daemon thresholds?"})
	if !strings.HasPrefix(out.Answer, `Nothing in the index matches "autovacuum", "daemon", "thresholds"; closest:`) || !out.NoMatch || len(out.Citations) == 0 {
		t.Errorf("no-match answer: %+v", out)
	}
	res, err := ts.s.b.answer(context.Background(), "How do I tune the autovacuum daemon thresholds?", defaultRetrieveOptions(), 5, nil)
	if err != nil || !strings.HasPrefix(answerText(res), "Nothing in the index matches") {
		t.Errorf("MCP answer text: %v %q", err, answerText(res))
	}
	// One unknown word among known ones is not a no-match.
	if out := ts.askJSON(t, askInput{Question: "How large is an environment with the web toolkit?"}); out.NoMatch {
		t.Errorf("partly matching question is a no-match: %q", out.Answer)
	}
}

// TestFollowUpKeepsTopic: a three-turn conversation without an LLM; turn
// 3 still searches for the virtual environment and finds the activation
// and removal sections.
func TestFollowUpKeepsTopic(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	ts.indexFixtures(t)
	var history []askyourdocs.QATurn
	for _, q := range []string{"How do I create a virtual environment?", "and how do I activate it?",
		"and how do I activate it on Windows? what about deleting it?"} {
		out := ts.askJSON(t, askInput{Question: q, History: history})
		history = append(history, askyourdocs.QATurn{Question: q, Answer: out.Answer})
		if len(history) == 3 {
			if !strings.Contains(out.Standalone, "virtual environment") {
				t.Errorf("turn 3 searched %q", out.Standalone)
			}
			if !strings.Contains(out.Answer, `harbor-env\Scripts\activate.bat`) || !strings.Contains(out.Answer, "tern env remove") {
				t.Errorf("turn 3 answer:\n%s", out.Answer)
			}
		}
	}
}

// TestBestExcerptNotHeading: a generated answer that repeats a section's
// heading ("Creating a virtual environment [1]") gets the section's text
// as its citation's quote, not the heading alone, and a fragment left by
// a link is not the quote either.
func TestBestExcerptNotHeading(t *testing.T) {
	p := "Creating a virtual environment\nTo create a virtual environment, choose a folder for it and run the env command:\ntern env create ./harbor-env"
	got := bestExcerpt(p, "Creating a virtual environment [1]\n\ntracking See more [link removed].", "", true, nil)
	if !strings.Contains(got, "To create a virtual environment, choose a folder") {
		t.Errorf("quote %q", got)
	}
	// The sentence ends in a colon: the command it introduces is quoted too.
	if !strings.Contains(got, "tern env create ./harbor-env") {
		t.Errorf("quote %q", got)
	}
	p = "See more [link removed] about virtual environments.\nA virtual environment keeps each project's packages apart."
	if got := bestExcerpt(p, "about virtual environments", "", true, nil); !strings.HasPrefix(got, "A virtual environment keeps") {
		t.Errorf("quote %q", got)
	}
}

// TestBestExcerptNoGluedHeading: a passage's leading heading (which the
// citation's label shows) is not glued to the quote's first sentence.
func TestBestExcerptNoGluedHeading(t *testing.T) {
	cases := []struct{ passage, answer string }{
		{"Creating a virtual environment\nTo create a virtual environment, choose a folder for it and run the env command.", "Creating a virtual environment [1]"},
		{"Working in virtual environments\nTern keeps the packages of each project apart by installing them into a virtual environment.", "Tern keeps packages apart in a virtual environment."},
		{"Cancellations and refunds\nYou can cancel a booking free of charge up to 48 hours before the tour starts.", "You can cancel up to 48 hours before."},
	}
	for _, c := range cases {
		heading := c.passage[:strings.Index(c.passage, "\n")]
		for _, generated := range []bool{true, false} {
			got := bestExcerpt(c.passage, c.answer, c.answer, generated, nil)
			if strings.HasPrefix(got, heading) || got == "" {
				t.Errorf("generated=%v: quote %q starts with the heading %q", generated, got, heading)
			}
		}
	}
}

// TestBestExcerptDistinct: a quote an earlier citation already shows is
// replaced by the passage's next best sentence.
func TestBestExcerptDistinct(t *testing.T) {
	p := "Wetsuits cost 15 euros per day. Spray skirts are included. Gloves are free."
	first := bestExcerpt(p, "wetsuits cost 15 euros", "", true, nil)
	second := bestExcerpt(p, "wetsuits cost 15 euros", "", true, []string{first})
	if first != "Wetsuits cost 15 euros per day." || second == first || second == "" {
		t.Errorf("excerpts %q then %q", first, second)
	}
}

// TestUnitExcerptCJK: a Japanese question finds the sentence that answers
// it (its keyword is a whole clause, matched by pairs of characters), the
// quote joins Japanese sentences without a space, and its length counts a
// CJK character as two columns.
func TestUnitExcerptCJK(t *testing.T) {
	passage := "試験の準備\n" +
		"このマニュアルでは試験の流れを説明します。採点の前に答案を読み込みます。" +
		"試験の準備では、まず受験者数を入力してから、人数分の試験問題用紙を印刷してください。予備の用紙も用意すると安心です。" +
		"補足として関連する項目も確認しておくと作業が円滑に進みます。"
	got := unitExcerpt(passage, "受験者数はどこで入力しますか", []string{"試験の準備"}, 120)
	want := "試験の準備\n試験の準備では、まず受験者数を入力してから、人数分の試験問題用紙を印刷してください。予備の用紙も用意すると安心です。"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if terms := cjkTerms([]string{"postgresqlの設定", "kayak"}); strings.Join(terms, ",") != "postgresql,の設,設定,kayak" {
		t.Errorf("cjkTerms = %q", terms)
	}
	if w := textWidth("ab設定"); w != 6 {
		t.Errorf("textWidth = %d, want 6", w)
	}
}
