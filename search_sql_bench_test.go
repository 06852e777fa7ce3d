package engine

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// BenchmarkPgvecKeywordSearch measures PgvecStore.KeywordSearch (all stages,
// 10 results) over chunks of about 120 words drawn from a Zipf-distributed
// vocabulary of 5,000 words, as prose has, with the "english"
// configuration: p50 and p95 latency over a fixed mix of keyword,
// long-keyword (prefix stage) and quoted-phrase queries, one operation
// being the 7 queries in turn. ASKYOURDOCS_BENCH_KW_ROWS is a
// comma-separated list of store sizes (default 10000; docs/postgres.md uses
// 50000,100000): one store grows to each size in turn (with
// ASKYOURDOCS_BENCH_KEEP=1, one store per size, kept for the next run),
// with sub-benchmarks per size:
//
//   - rows=N/postings: the posting table and threshold search, each query
//     followed (or, alternately, preceded) by the anchor: the plain GIN AND
//     query an app would write, SELECT ... WHERE tsv @@
//     websearch_to_tsquery('english', query) LIMIT 10 (every word, phrases
//     as phrases, unranked); reports ours_p50_ms, ours_p95_ms, gin_p50_ms,
//     gin_p95_ms and p95_ratio (ours over the anchor), and per query its
//     median in the log;
//   - rows=N/postings-filtered: a filter that keeps every chunk, which the
//     threshold search checks per chunk;
//   - rows=N/tsvector: the ranking from the tsvector column, as before
//     schema version 4 and for custom configurations.
func BenchmarkPgvecKeywordSearch(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(cmp.Or(os.Getenv("ASKYOURDOCS_BENCH_KW_ROWS"), "10000"), ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || (len(sizes) > 0 && v <= sizes[len(sizes)-1]) {
			b.Fatalf("ASKYOURDOCS_BENCH_KW_ROWS=%q: want increasing positive numbers separated by commas", os.Getenv("ASKYOURDOCS_BENCH_KW_ROWS"))
		}
		sizes = append(sizes, v)
	}
	n := sizes[len(sizes)-1]
	ctx := context.Background()
	docs, queries := pgKeywordBenchCorpus(n)
	keep := os.Getenv("ASKYOURDOCS_BENCH_KEEP") == "1"
	opts := &PgvecOptions{TextSearchConfig: "english"}
	var s *PgvecStore
	loaded := 0
	for _, size := range sizes {
		if keep {
			// A store per size, kept: the chunks are the same on every
			// run, so those stored already are skipped.
			st, err := NewPgvecStoreWithOptions(ctx, nil, fmt.Sprintf("bench/keyword/%d", size), newTestEmbedder(8), pgTestDSN(b), 8, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			s = st
			var have int
			if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.Table())).Scan(&have); err != nil {
				b.Fatal(err)
			}
			if have == size {
				loaded = size
			} else {
				loaded = 0
			}
		} else if s == nil {
			s = pgTestStoreWith(b, newTestEmbedder(8), 8, opts)
		}
		fresh := loaded < size
		for ; loaded < size; loaded = min(loaded+5000, size) {
			if err := s.Index(ctx, docs[loaded:min(loaded+5000, size)]); err != nil {
				b.Fatal(err)
			}
		}
		if fresh {
			for _, t := range []string{s.Table(), s.names.kw, s.names.kwDF} {
				if _, err := s.Pool.Exec(ctx, `VACUUM ANALYZE `+pgvecIdent(t)); err != nil {
					b.Fatal(err)
				}
			}
		}
		lang := s.curLang()
		gin := `SELECT content, metadata FROM ` + pgvecIdent(s.Table()) + ` WHERE tsv @@ websearch_to_tsquery('english', $1) LIMIT 10`
		for _, mode := range []string{"postings", "postings-filtered", "tsvector"} {
			b.Run(fmt.Sprintf("rows=%d/%s", size, mode), func(b *testing.B) {
				where, args := "", []any(nil)
				switch mode {
				case "postings-filtered":
					// A filter every chunk passes: checked per chunk by
					// the threshold search.
					where, args = "url <> $3", []any{"none"}
				case "tsvector":
					// The ranking before the posting table (as a custom
					// configuration still gets it).
					s.lang.Store(&pgvecLanguage{name: lang.name})
					defer s.lang.Store(lang)
				}
				anchor := mode == "postings"
				ours := func(q string) {
					if _, err := s.KeywordSearch(ctx, q, 10, nil, where, args); err != nil {
						b.Fatal(err)
					}
				}
				plain := func(q string) {
					rows, err := s.Pool.Query(ctx, gin, q)
					if err == nil {
						_, err = pgvecScanDocs(rows)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				timed := func(lat *[]time.Duration, f func(string), q string) {
					start := time.Now()
					f(q)
					*lat = append(*lat, time.Since(start))
				}
				var lat, ginLat []time.Duration
				perQuery := make([][]time.Duration, len(queries))
				round := 0
				for b.Loop() {
					for i, q := range queries {
						if anchor && (round+i)%2 == 1 {
							timed(&ginLat, plain, q)
						}
						timed(&lat, ours, q)
						perQuery[i] = append(perQuery[i], lat[len(lat)-1])
						if anchor && (round+i)%2 == 0 {
							timed(&ginLat, plain, q)
						}
					}
					round++
				}
				p50, p95 := pgBenchPercentiles(lat)
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p95, "p95-ms")
				b.ReportMetric(float64(size), "rows")
				if anchor {
					g50, g95 := pgBenchPercentiles(ginLat)
					b.ReportMetric(p50, "ours_p50_ms")
					b.ReportMetric(p95, "ours_p95_ms")
					b.ReportMetric(g50, "gin_p50_ms")
					b.ReportMetric(g95, "gin_p95_ms")
					b.ReportMetric(p95/g95, "p95_ratio")
					for i, q := range queries {
						m, _ := pgBenchPercentiles(perQuery[i])
						b.Logf("query %d %q: median %.2f ms", i, q, m)
					}
				}
			})
		}
	}
}

// pgKeywordBenchCorpus returns BenchmarkPgvecKeywordSearch's n chunks and
// its 7 queries.
func pgKeywordBenchCorpus(n int) ([]*ai.Document, []string) {
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
		`"` + strings.Join(strings.Fields(DocText(docs[min(17, n-1)]))[10:13], " ") + `" ` + vocab[60],
		"information retrieval " + vocab[400],
		pgBenchWord(r, 11) + " " + vocab[30],
	}
	return docs, queries
}

// pgBenchWord returns a random lower-case word of n letters.
func pgBenchWord(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}
