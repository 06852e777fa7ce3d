package engine_test

import (
	"fmt"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// BestExcerptWithOptions quotes the sentence that shares the most words with the query
// and the sentences after it that fit. Without Heading, lines are joined,
// so headings run into the text; with it (as SearchHit.Excerpt) the
// heading of the quote's section goes on a line above the quote, and the
// quote ends with that section.
func ExampleBestExcerptWithOptions() {
	chunk := "Kayak rental\nPrices\nA day tour costs 95 euros per person. Children pay half.\n" +
		"Safety\nEvery paddler wears a life jacket."

	fmt.Println(askyourdocs.BestExcerptWithOptions(chunk, &askyourdocs.ExcerptOptions{Query: "price of a day tour", MaxChars: 80}))
	fmt.Println("---")
	fmt.Println(askyourdocs.BestExcerptWithOptions(chunk, &askyourdocs.ExcerptOptions{Query: "price of a day tour", Heading: true}))
	// Output:
	// Kayak rental Prices A day tour costs 95 euros per person. Children pay half.
	// ---
	// Prices
	// A day tour costs 95 euros per person. Children pay half.
}
