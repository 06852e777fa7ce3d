package engine

import (
	"math/rand/v2"
	"testing"
)

// TestPgvecShareBoundHolds checks pgvecShareBound against every posting a
// chunk can have: for term frequencies up to 400 and lengths from the
// shortest chunk up to 4,000, any posting whose stored impact (a float4,
// as PostgreSQL keeps it) is at most w has a BM25 share at most the bound;
// and that the shortest length tightens the bound.
func TestPgvecShareBoundHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b0 := bm25K1*(1-bm25B), bm25K1*bm25B/pgvecImpactLen
	tighter := 0
	for range 300 {
		w := float32(0.2 + 0.8*r.Float64())
		if r.IntN(10) == 0 {
			w = float32(0.99 + 0.01*r.Float64())
		}
		avg := 20 + 500*r.Float64()
		minLen := int64(r.IntN(300))
		bound := pgvecShareBound(w, avg, minLen)
		var worst float64
		for tf := 1; tf <= 400; tf++ {
			for l := max(int(minLen), tf); l <= 4000; l++ {
				impact := float32(float64(tf) / (float64(tf) + a + b0*float64(l)))
				if impact > w {
					continue
				}
				share := (bm25K1 + 1) * float64(tf) / (float64(tf) + bm25K1*(1-bm25B+bm25B*float64(l)/avg))
				worst = max(worst, share)
				if share > bound {
					t.Fatalf("w %v, avg %.1f, shortest %d: tf %d, len %d has share %v above the bound %v", w, avg, minLen, tf, l, share, bound)
				}
			}
		}
		if loose := pgvecShareBound(w, avg, 0); bound > loose {
			t.Errorf("w %v, avg %.1f: the bound with shortest length %d (%v) is looser than without (%v)", w, avg, minLen, bound, loose)
		} else if bound < loose*0.999 {
			tighter++
		}
		if worst > 0 && bound > worst*1.05 && pgvecImpactLen/avg > 1 && minLen > 0 && w < 0.99 {
			t.Errorf("w %v, avg %.1f, shortest %d: bound %v is more than 5%% above the best share %v", w, avg, minLen, bound, worst)
		}
	}
	if tighter == 0 {
		t.Error("the shortest length never tightened the bound")
	}
}
