package engine

import (
	"math"
	"slices"
	"time"
)

// RetrievalCase is one query of a retrieval evaluation: the keys (source
// names, file paths or URLs) of the results a retriever returned, best
// first, and the keys that answer the query.
//
// Ranked may repeat a key (several chunks of one document); the metrics
// count each key once, at its best rank, so they judge which documents a
// retriever finds, not how many chunks of one document it returns.
type RetrievalCase struct {
	Ranked   []string
	Relevant []string
	// Latency is the time the retrieval took; zero values are left out of
	// the latency figures.
	Latency time.Duration
}

// RetrievalMetrics summarises a retrieval evaluation; every rate is the mean
// over all cases, between 0 and 1.
type RetrievalMetrics struct {
	Cases int
	// HitAt1 and HitAt5: share of cases with a relevant key among the first
	// 1 or 5 distinct keys.
	HitAt1, HitAt5 float64
	// MRRAt10 is the mean reciprocal rank of the first relevant key within
	// the first 10 distinct keys (0 when there is none).
	MRRAt10 float64
	// NDCGAt10 is the mean normalised discounted cumulative gain over the
	// first 10 distinct keys with binary relevance.
	NDCGAt10 float64
	// MeanLatency, P50Latency and P95Latency summarise the cases' latencies
	// (nearest-rank percentiles).
	MeanLatency, P50Latency, P95Latency time.Duration
}

// EvaluateRetrieval returns the metrics of cases. A case without relevant
// keys counts as a miss everywhere. An empty slice gives zero metrics; a
// slice of one case gives that case's own figures.
func EvaluateRetrieval(cases []RetrievalCase) RetrievalMetrics {
	m := RetrievalMetrics{Cases: len(cases)}
	if len(cases) == 0 {
		return m
	}
	var lat []time.Duration
	for _, c := range cases {
		m.HitAt1 += hitAtK(c.Ranked, c.Relevant, 1)
		m.HitAt5 += hitAtK(c.Ranked, c.Relevant, 5)
		m.MRRAt10 += reciprocalRankAtK(c.Ranked, c.Relevant, 10)
		m.NDCGAt10 += ndcgAtK(c.Ranked, c.Relevant, 10)
		if c.Latency > 0 {
			lat = append(lat, c.Latency)
		}
	}
	n := float64(len(cases))
	m.HitAt1 /= n
	m.HitAt5 /= n
	m.MRRAt10 /= n
	m.NDCGAt10 /= n
	if len(lat) > 0 {
		slices.Sort(lat)
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		m.MeanLatency = sum / time.Duration(len(lat))
		m.P50Latency = nearestRank(lat, 0.50)
		m.P95Latency = nearestRank(lat, 0.95)
	}
	return m
}

// nearestRank returns the p-quantile of sorted by the nearest-rank method.
func nearestRank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// distinctTopK returns the first k distinct keys of ranked, in order.
func distinctTopK(ranked []string, k int) []string {
	out := make([]string, 0, min(k, len(ranked)))
	seen := make(map[string]bool, k)
	for _, r := range ranked {
		if len(out) == k {
			break
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// hitAtK returns 1 if one of the first k distinct keys of ranked is in
// relevant, else 0.
func hitAtK(ranked, relevant []string, k int) float64 {
	if reciprocalRankAtK(ranked, relevant, k) > 0 {
		return 1
	}
	return 0
}

// reciprocalRankAtK returns 1/r for the rank r (1-based, over distinct keys)
// of the first relevant key among the first k, or 0 if there is none.
func reciprocalRankAtK(ranked, relevant []string, k int) float64 {
	for i, r := range distinctTopK(ranked, k) {
		if slices.Contains(relevant, r) {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// ndcgAtK returns the normalised discounted cumulative gain of the first k
// distinct keys of ranked with binary relevance: DCG = sum over relevant
// keys at rank r of 1/log2(r+1), divided by the DCG of an ideal ranking
// that puts min(k, len(distinct relevant)) relevant keys first.
func ndcgAtK(ranked, relevant []string, k int) float64 {
	nrel := len(distinctTopK(relevant, len(relevant)))
	if nrel == 0 || k <= 0 {
		return 0
	}
	var dcg, ideal float64
	for i, r := range distinctTopK(ranked, k) {
		if slices.Contains(relevant, r) {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(k, nrel) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}
