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
	doc := kwCrumbDoc
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
	kwExpectFirst(t, docs, []kwFirstCase{
		{"What is a session?", heading},
		{"what is a session", heading},
		{"Session Cookies", cookies},
		{"max_session_age", ident},
	})
}

// TestKeywordQuestionStopPairsNoWeight checks, on every store, that the
// question pairs of two stop words weigh nothing: "How can I instruct a
// spider to stop itself?" shares "how can", "how i" and "can i" with the
// heading "How can I help with triaging?", whose text holds "stop" once,
// and only its content words with the chunk about stopping a spider,
// where "spider" is frequent. The spider chunk must be first (before,
// the triaging page was, as on the faqlinks set). A question of stop
// words only ("What is it?") keeps its pairs: its heading is first.
func TestKeywordQuestionStopPairsNoWeight(t *testing.T) {
	doc := kwCrumbDoc
	triage := doc("Contributing > How can I help with triaging?",
		"Stop by the ticket tracker, read the open tickets and confirm the ones you can reproduce.")
	stopping := doc("Spiders > Closing spiders",
		"Raise CloseSpider from a callback to stop the spider with a reason of your own.")
	whatIs := doc("Introduction > What is it?", "A framework for crawling web sites and extracting data from their pages.")
	docs := []*ai.Document{triage, stopping, whatIs}
	for i := range 30 {
		docs = append(docs, doc(fmt.Sprintf("Spiders > Spider Arguments %d", i),
			fmt.Sprintf("A spider takes argument %d on the command line; the spider reads it in its constructor.", i)))
	}
	for i := range 4 {
		docs = append(docs, doc(fmt.Sprintf("Items > What it holds %d", i),
			fmt.Sprintf("Item %d: what it is, what is in it and what it is for is what it says.", i)))
	}
	for i := range 20 {
		docs = append(docs, doc(fmt.Sprintf("Settings > Part %d", i),
			fmt.Sprintf("Setting %d changes how the crawler schedules requests: I can say what it is and when it retries them.", i)))
	}
	kwExpectFirst(t, docs, []kwFirstCase{
		{"How can I instruct a spider to stop itself?", stopping},
		{"How can I help with triaging?", triage},
		{"What is it?", whatIs}, // only stop words: their pairs count
	})
}

// TestBM25QuestionPairs checks the query side of the heading pairs: the
// pairs of the consecutive keywords first, then those of the whole word
// sequence (stop words included) at most bm25PairWindow apart, each once,
// never of two stop words unless the stop words are the query's only
// words, never of the whole-identifier terms.
func TestBM25QuestionPairs(t *testing.T) {
	an, _ := newTextAnalyzer("simple")
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

// kwFirstCase is one query of a ranking test and the chunk it must rank first.
type kwFirstCase struct {
	query string
	first *ai.Document
}

// kwCrumbDoc is a chunk of the test manual under breadcrumb crumb.
func kwCrumbDoc(crumb, text string) *ai.Document {
	return ai.DocumentFromText(text, map[string]any{MetaSource: "manual", MetaURL: "file:///manual", MetaBreadcrumb: crumb})
}

// kwExpectFirst indexes docs in each store of kwTestOpeners and checks that
// every case's query, searched with QuestionStopWords, ranks its chunk first.
func kwExpectFirst(t *testing.T, docs []*ai.Document, cases []kwFirstCase) {
	t.Helper()
	for name, open := range kwTestOpeners() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if err := s.index(docs); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
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
