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
