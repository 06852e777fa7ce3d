package engine

import "slices"

// bm25AppendSeqPairs appends to pairs the heading pairs that the word
// sequence seq forms as the index forms them from a heading (every two
// terms at most bm25PairWindow apart, in order, stop words included),
// each once, and returns the result. A pair of two stop-listed words
// (stop[i] reports seq[i]'s) goes to stopPairs instead: "how can", "can
// i" or "what is" match every heading phrased the same way, whatever its
// subject, so they count only when the stop words are the query's only
// words (keepStopWords).
//
// A question that is (close to) a section's heading ("What is a
// session?") then finds that heading's pairs ("what is", "is a", "a
// session", ...), which the pairs of its keywords alone ("session" only)
// cannot: the heading phrased like the question outranks chunks where
// its content words are merely frequent. The pairs only add to the
// score, with their IDF (docs/retrieval.md, "Heading pairs").
func bm25AppendSeqPairs(pairs, stopPairs, seq []string, stop []bool) ([]string, []string) {
	for i := range seq {
		for d := 1; d <= bm25PairWindow && i+d < len(seq); d++ {
			pt := bm25Pair(seq[i], seq[i+d])
			switch {
			case stop[i] && stop[i+d]:
				if !slices.Contains(stopPairs, pt) {
					stopPairs = append(stopPairs, pt)
				}
			case !slices.Contains(pairs, pt):
				pairs = append(pairs, pt)
			}
		}
	}
	return pairs, stopPairs
}
