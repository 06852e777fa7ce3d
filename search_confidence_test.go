package engine

import (
	"strings"
	"testing"
)

// TestLooksLikeContents checks the contents and index detection on the
// kinds of text it must tell apart.
func TestLooksLikeContents(t *testing.T) {
	toc := "Contents\n1 Introduction 1\n2 Booking 4\n2.1 Cancelling 5\n3 Safety 9\n4 Prices 12\n5 Contact 15"
	leaders := "Introduction ........ 1 Booking ........ 4 Safety ........ 9"
	index := "kayak, 12, 45 canoe, 3, 7 refund, 5, 9 booking, 4, 8 safety, 9, 10 age, 2, 3"
	prose := "You can cancel a booking up to 14 days before the tour.\nThe refund is paid within 30 days.\nChildren under 12 paddle with an adult."
	table := "Single kayak | 2 hours | 35 EUR\nDouble kayak | 2 hours | 55 EUR\nCanoe | 2 hours | 50 EUR\nSUP | 1 hour | 20 EUR\nGuide | 1 day | 150 EUR"
	for text, want := range map[string]bool{toc: true, leaders: true, index: true, prose: false, table: false} {
		if got := looksLikeContents(text); got != want {
			t.Errorf("looksLikeContents(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestExcerptWithHeading checks ExcerptOptions.Heading: the heading goes
// on a line of its own above the quote, and without it the heading runs
// into the text.
func TestExcerptWithHeading(t *testing.T) {
	passage := "6.6.2 Manual input\nIf we enter the values by hand, the form checks them at once.\nOther text follows here."
	o := ExcerptOptions{Query: "manual input values by hand", MaxChars: 300, Heading: true}
	got := BestExcerptWithOptions(passage, &o)
	if !strings.HasPrefix(got, "6.6.2 Manual input\nIf we enter") {
		t.Errorf("heading not on a line of its own: %q", got)
	}
	o.Heading = false
	if got := BestExcerptWithOptions(passage, &o); strings.Contains(got, "\n") {
		t.Errorf("without Heading, a line break: %q", got)
	}
	if got := BestExcerptWithOptions("Plain sentence one. Plain sentence two.", &ExcerptOptions{Query: "two", MaxChars: 300, Heading: true}); strings.Contains(got, "\n") {
		t.Errorf("no heading, yet a line break: %q", got)
	}
}
