package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// BenchmarkPgvecKeywordSearch measures PgvecStore.KeywordSearch (all stages,
// 10 results) over ASKYOURDOCS_BENCH_KW_ROWS chunks (default 10,000) of
// about 120 words drawn from a Zipf-distributed vocabulary of 5,000 words,
// as prose has, with the "english" configuration: p50 and p95 latency over
// a fixed mix of keyword, long-keyword (prefix stage) and quoted-phrase
// queries.
func BenchmarkPgvecKeywordSearch(b *testing.B) {
	n := pgBenchSize(b, "ASKYOURDOCS_BENCH_KW_ROWS", 10000)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = pgBenchWord(r, 3+r.IntN(8))
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	docs := make([]*ai.Document, n)
	for i := range docs {
		words := make([]string, 100+r.IntN(40))
		for j := range words {
			words[j] = vocab[zipf.Uint64()]
		}
		docs[i] = ai.DocumentFromText(strings.Join(words, " "), map[string]any{MetaURL: fmt.Sprintf("doc%d.pdf", i/20)})
	}
	queries := []string{
		vocab[3] + " " + vocab[250],
		vocab[40] + " " + vocab[900] + " " + vocab[2000],
		vocab[1200],
		vocab[7] + " " + vocab[15],
		`"` + strings.Join(strings.Fields(DocText(docs[17]))[10:13], " ") + `" ` + vocab[60],
		"information retrieval " + vocab[400],
		pgBenchWord(r, 11) + " " + vocab[30],
	}
	s := pgBenchStore(b, newTestEmbedder(8), 8, &PgvecOptions{TextSearchConfig: "english"})
	for start := 0; start < n; start += 5000 {
		if err := s.Index(ctx, docs[start:min(start+5000, n)]); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.Pool.Exec(ctx, `VACUUM ANALYZE `+pgvecIdent(s.Table())); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := s.KeywordSearch(ctx, queries[i%len(queries)], 10, nil, "", nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(n), "rows")
}

// pgBenchWord returns a random lower-case word of n letters.
func pgBenchWord(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}
