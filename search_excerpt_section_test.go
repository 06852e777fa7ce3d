package engine

import "testing"

// TestExcerptWithHeadingStaysInSection checks that a quote under a heading
// (ExcerptOptions.Heading, SearchHit.Excerpt) does not run on into the
// next section, whose sentences the heading above would misattribute.
func TestExcerptWithHeadingStaysInSection(t *testing.T) {
	passage := "Kayak rental\nPrices\nA day tour costs 95 euros per person, equipment included.\n" +
		"Safety\nEvery paddler wears a life jacket; children under 12 paddle with an adult."
	o := ExcerptOptions{Query: "How much is a day tour?", MaxChars: 300, Heading: true}
	if got, want := BestExcerptWithOptions(passage, &o), "Prices\nA day tour costs 95 euros per person, equipment included."; got != want {
		t.Errorf("Excerpt = %q, want %q", got, want)
	}
	o.Query = "life jacket"
	if got, want := BestExcerptWithOptions(passage, &o), "Safety\nEvery paddler wears a life jacket; children under 12 paddle with an adult."; got != want {
		t.Errorf("Excerpt = %q, want %q", got, want)
	}
	// Within one section the quote still extends by the following sentences.
	one := "Prices\nA day tour costs 95 euros. Children pay half. Groups get a discount."
	o.Query = "day tour"
	if got, want := BestExcerptWithOptions(one, &o), "Prices\nA day tour costs 95 euros. Children pay half. Groups get a discount."; got != want {
		t.Errorf("Excerpt = %q, want %q", got, want)
	}
}
