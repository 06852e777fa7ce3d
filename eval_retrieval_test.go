package engine

import (
	"math"
	"testing"
	"time"
)

func TestRetrievalMetricsHandComputed(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	tests := []struct {
		name             string
		ranked, relevant []string
		hit1, hit5, rr   float64
		ndcg             float64
	}{
		{"first", []string{"a", "b", "c"}, []string{"a"}, 1, 1, 1, 1},
		// relevant at rank 3: RR 1/3, DCG 1/log2(4) = 0.5, IDCG 1.
		{"third", []string{"x", "y", "a"}, []string{"a"}, 0, 1, 1.0 / 3, 0.5},
		// duplicates collapse: x, y, a -> a is rank 3, not 5.
		{"duplicates", []string{"x", "x", "y", "y", "a"}, []string{"a"}, 0, 1, 1.0 / 3, 0.5},
		// two relevant at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5),
		// IDCG = 1 + 1/log2(3).
		{"two relevant", []string{"x", "a", "y", "b"}, []string{"a", "b"}, 0, 1, 0.5,
			(1/math.Log2(3) + 1/math.Log2(5)) / (1 + 1/math.Log2(3))},
		{"rank six misses hit5", []string{"1", "2", "3", "4", "5", "a"}, []string{"a"}, 0, 0, 1.0 / 6,
			(1 / math.Log2(7)) / 1},
		{"beyond ten", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "a"}, []string{"a"}, 0, 0, 0, 0},
		{"no relevant", []string{"a"}, nil, 0, 0, 0, 0},
		{"empty ranking", nil, []string{"a"}, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hitAtK(tt.ranked, tt.relevant, 1); got != tt.hit1 {
				t.Errorf("hit@1 = %v, want %v", got, tt.hit1)
			}
			if got := hitAtK(tt.ranked, tt.relevant, 5); got != tt.hit5 {
				t.Errorf("hit@5 = %v, want %v", got, tt.hit5)
			}
			if got := reciprocalRankAtK(tt.ranked, tt.relevant, 10); !near(got, tt.rr) {
				t.Errorf("RR@10 = %v, want %v", got, tt.rr)
			}
			if got := ndcgAtK(tt.ranked, tt.relevant, 10); !near(got, tt.ndcg) {
				t.Errorf("nDCG@10 = %v, want %v", got, tt.ndcg)
			}
		})
	}
}

func TestEvaluateRetrievalAggregates(t *testing.T) {
	m := EvaluateRetrieval([]RetrievalCase{
		{Ranked: []string{"a"}, Relevant: []string{"a"}, Latency: 10 * time.Millisecond},
		{Ranked: []string{"x", "a"}, Relevant: []string{"a"}, Latency: 30 * time.Millisecond},
		{Ranked: []string{"x"}, Relevant: []string{"a"}, Latency: 20 * time.Millisecond},
		{Ranked: []string{"a"}, Relevant: []string{"a"}},
	})
	if m.Cases != 4 || m.HitAt1 != 0.5 || m.HitAt5 != 0.75 {
		t.Fatalf("got %+v", m)
	}
	if want := (1 + 0.5 + 0 + 1) / 4.0; math.Abs(m.MRRAt10-want) > 1e-9 {
		t.Errorf("MRR@10 = %v, want %v", m.MRRAt10, want)
	}
	if want := (1 + 1/math.Log2(3) + 0 + 1) / 4; math.Abs(m.NDCGAt10-want) > 1e-9 {
		t.Errorf("nDCG@10 = %v, want %v", m.NDCGAt10, want)
	}
	if m.MeanLatency != 20*time.Millisecond || m.P50Latency != 20*time.Millisecond || m.P95Latency != 30*time.Millisecond {
		t.Errorf("latencies = %v %v %v", m.MeanLatency, m.P50Latency, m.P95Latency)
	}
	if z := EvaluateRetrieval(nil); z != (RetrievalMetrics{}) {
		t.Errorf("empty = %+v", z)
	}
}
