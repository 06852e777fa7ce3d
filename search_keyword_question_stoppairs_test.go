package engine

import (
	"fmt"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestKeywordQuestionStopPairsNoWeight checks, on every store, that the
// question pairs of two stop words weigh nothing: "How can I instruct a
// spider to stop itself?" shares "how can", "how i" and "can i" with the
// heading "How can I help with triaging?", whose text holds "stop" once,
// and only its content words with the chunk about stopping a spider,
// where "spider" is frequent. The spider chunk must be first (before,
// the triaging page was, as on the faqlinks set). A question of stop
// words only ("What is it?") keeps its pairs: its heading is first.
func TestKeywordQuestionStopPairsNoWeight(t *testing.T) {
	doc := func(crumb, text string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{MetaSource: "manual", MetaURL: "file:///manual", MetaBreadcrumb: crumb})
	}
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
				{"How can I instruct a spider to stop itself?", stopping},
				{"How can I help with triaging?", triage},
				{"What is it?", whatIs}, // only stop words: their pairs count
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
