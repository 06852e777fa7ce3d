package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestKeywordQuestionHeadingFirst checks, on every store, that a question
// phrased as a section's heading ranks that section first although its one
// content word is frequent elsewhere: "What is a session?" keeps only
// "session" as a keyword (the stop words are in most chunks), which chunks
// about session cookies hold more often; the heading pairs of the
// question's whole word sequence ("what is", "a session", ...) are the
// heading's. Queries without stop words (an identifier, a heading of
// content words) keep their first chunk.
func TestKeywordQuestionHeadingFirst(t *testing.T) {
	doc := func(crumb, text string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{MetaSource: "manual", MetaURL: "file:///manual", MetaBreadcrumb: crumb})
	}
	heading := doc("User State > What is a session?", "It keeps the state of one user between requests.")
	cookies := doc("Module Reference > Session Cookies",
		"The session cookie carries the session; the session is encoded and a session expires.")
	ident := doc("Module Reference > Directives", "Set max_session_age to bound how long it is a valid one.")
	docs := []*ai.Document{heading, cookies, ident}
	for i := range 8 {
		docs = append(docs, doc(fmt.Sprintf("Module Reference > Session Store %d", i),
			fmt.Sprintf("Store %d keeps a session in a table: what is stored is a session and its key.", i)))
	}
	for i := range 40 {
		docs = append(docs, doc(fmt.Sprintf("Requests > Part %d", i),
			fmt.Sprintf("What the server returns for request %d is a response, and what it reads is a header.", i)))
	}
	for name, open := range kwTestOpeners() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if err := s.index(docs); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				query string
				first *ai.Document
			}{
				{"What is a session?", heading},
				{"what is a session", heading},
				{"Session Cookies", cookies},
				{"max_session_age", ident},
			} {
				got, err := s.search(c.query, QuestionStopWords())
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 0 || DocText(got[0]) != DocText(c.first) {
					t.Errorf("%q: first %q, want %q", c.query, kwTestTexts(got[:min(3, len(got))]), DocText(c.first))
				}
			}
		})
	}
}

// TestBM25QuestionPairs checks the query side of the heading pairs: the
// pairs of the consecutive keywords first, then those of the whole word
// sequence (stop words included) at most bm25PairWindow apart, each once,
// never of two stop words unless the stop words are the query's only
// words, never of the whole-identifier terms.
func TestBM25QuestionPairs(t *testing.T) {
	an, _ := NewTextAnalyzer("simple")
	stop := map[string]bool{"what": true, "is": true, "a": true, "on": true, "how": true, "can": true, "i": true, "it": true}
	for _, c := range []struct {
		query string
		pairs []string // after keepStopWords
	}{
		{"What is a session?", []string{"is session", "a session"}},
		{"How can I stop it?", []string{"can stop", "i stop", "stop it"}},
		{"what is", []string{"what is"}},
		{"properties on targets", []string{"properties targets", "properties on", "on targets"}},
		{"max_log size", []string{"max log", "log size", "max size"}},
		{"session", nil},
	} {
		p := newBM25Plan(an, c.query, stop)
		p.keepStopWords(100, func(string) int { return 50 })
		if got := p.pairs; !slices.Equal(got, c.pairs) {
			t.Errorf("%q: pairs %q, want %q", c.query, got, c.pairs)
		}
	}
}
