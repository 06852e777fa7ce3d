package engine

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

var searchBenchSizes = flag.String("search-bench-sizes", "10000,100000", "chunk counts of BenchmarkSearch, comma-separated")

// searchBenchDim is the dimension of the built-in embedder in the
// benchmark: the CLI's.
const searchBenchDim = 1024

// BenchmarkSearch measures Search's latency (nil options: the built-in
// embedder's fusion, depth 40, 10 hits with excerpts and confidence) next
// to its two lists alone (SearchVector and SearchText, 40 each) on every
// store at each size of -search-bench-sizes, over real text chunks from
// /usr/share/doc and 64 questions and descriptions made of their words. It reports p50 and
// p95 of each and Search's p50 as a ratio of the slower list's and of the
// two lists' sum (Search runs them concurrently). PgvecStore needs
// ASKYOURDOCS_TEST_DSN (skipped without it). Building the stores takes
// minutes at 100k; benchmarks only run with -bench.
func BenchmarkSearch(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(*searchBenchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("-search-bench-sizes: %q is not a positive number", f)
		}
		sizes = append(sizes, n)
	}
	texts := realTextChunks(slices.Max(sizes))
	questions := searchBenchQuestions(texts, 64)
	for _, n := range sizes {
		if len(texts) < n {
			b.Logf("only %d chunks of real text under /usr/share/doc, not %d", len(texts), n)
		}
		docs := sqliteBenchDocs(texts[:min(n, len(texts))])
		for _, name := range []string{"localvec", "sqlite", "pgvector"} {
			b.Run(fmt.Sprintf("%s/%dk", name, n/1000), func(b *testing.B) {
				ctx := context.Background()
				emb := NewLocalEmbedder(searchBenchDim)
				var s Searcher
				switch name {
				case "localvec":
					s = ingestTestLocalvecB(b, emb)
				case "sqlite":
					s = sqliteTestStore(b, filepath.Join(b.TempDir(), "bench.db"), emb)
				default:
					s = pgTestStore(b, emb, searchBenchDim)
				}
				if err := IndexInBatches(ctx, s, docs, nil); err != nil {
					b.Fatal(err)
				}
				// One warm-up round: caches, the vector matrix, plans.
				for _, q := range questions {
					if _, err := searchHits(Search(ctx, s, q, nil)); err != nil {
						b.Fatal(err)
					}
				}
				var vec, txt, all []time.Duration
				i := 0
				for b.Loop() {
					q := questions[i%len(questions)]
					i++
					start := time.Now()
					if _, err := s.SearchVector(ctx, q, defaultSearchDepth, nil); err != nil {
						b.Fatal(err)
					}
					vec = append(vec, time.Since(start))
					start = time.Now()
					if _, err := s.SearchText(ctx, q, defaultSearchDepth, nil); err != nil {
						b.Fatal(err)
					}
					txt = append(txt, time.Since(start))
					start = time.Now()
					if _, err := searchHits(Search(ctx, s, q, nil)); err != nil {
						b.Fatal(err)
					}
					all = append(all, time.Since(start))
				}
				pv, pt, ps := searchBenchReport(b, "vector", vec), searchBenchReport(b, "text", txt), searchBenchReport(b, "search", all)
				b.ReportMetric(ps/max(pv, pt), "search/slower-list")
				b.ReportMetric(ps/(pv+pt), "search/lists-sum")
				b.ReportMetric(float64(len(docs)), "chunks")
			})
		}
	}
}

// searchBenchReport reports the p50 and p95 of lat in ms under name and
// returns the p50.
func searchBenchReport(b *testing.B, name string, lat []time.Duration) float64 {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p50 := ms(lat[len(lat)/2])
	b.ReportMetric(p50, name+"-p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*95/100)]), name+"-p95-ms")
	return p50
}

// searchBenchQuestions makes n questions of 2-5 words taken from texts, in
// the two shapes users type: half as questions ("how do I ... ?"), half as
// descriptions (the words alone, which the long-page and proximity rules
// rank).
func searchBenchQuestions(texts []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		w := strings.Fields(texts[(i*7919)%len(texts)])
		start := (i * 13) % max(1, len(w)-6)
		words := w[start:min(len(w), start+2+i%4)]
		out[i] = "How do I " + strings.Join(words, " ") + "?"
		if (i/4)%2 == 1 {
			out[i] = strings.Join(words, " ")
		}
	}
	return out
}

// ingestTestLocalvecB is ingestTestLocalvec for a benchmark.
func ingestTestLocalvecB(b *testing.B, emb ai.Embedder) *LocalvecStore {
	b.Helper()
	s, err := NewLocalvecStore(genkit.Init(context.Background()), "bench", emb, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
