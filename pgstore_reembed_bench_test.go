package engine

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPgvecReembed measures a re-embedding migration from 384 to 768
// dimensions of ASKYOURDOCS_BENCH_REEMBED_N chunks (default 2000) with an
// embedder that returns precomputed vectors, so the figure is the store's
// share (reading the chunks, writing the shadow column, building its HNSW
// index, the swap); an app adds its embedder's time for n texts.
func BenchmarkPgvecReembed(b *testing.B) {
	ctx := context.Background()
	dsn := pgTestDSN(b)
	n := pgBenchSize(b, "ASKYOURDOCS_BENCH_REEMBED_N", 2000)
	docs, from := pgBenchCorpus(n, 384)
	_, to := pgBenchCorpus(n, 768)
	var total time.Duration
	for range b.N {
		b.StopTimer()
		name := pgTestStoreName(b)
		pgTestDropStore(b, dsn, name)
		s, err := NewPgvecStore(ctx, nil, name, from, dsn, 384)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Index(ctx, docs); err != nil {
			b.Fatal(err)
		}
		s.Close()
		b.StartTimer()
		start := time.Now()
		s, err = NewPgvecStore(ctx, nil, name, to, dsn, 768)
		if err != nil {
			b.Fatal(err)
		}
		got, err := s.Reembed(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		if got != n {
			b.Fatalf("re-embedded %d of %d chunks", got, n)
		}
		s.Close()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N)/(float64(n)/1000), "ms/1k-chunks")
}
