package engine

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

var cjkBenchSizes = flag.String("cjk-bench-sizes", "10000", "chunk counts of BenchmarkSQLiteKeywordLanguages, comma-separated")

// keywordBenchDocsCJK returns n synthetic Japanese-like chunks of about
// 800 characters, the CJK counterpart of keywordBenchDocs: Zipf-distributed
// words of two or three characters (Han and kana) written without spaces,
// with a comma every few words and a full stop every dozen.
func keywordBenchDocsCJK(n int) []*ai.Document {
	r := rand.New(rand.NewPCG(7, 8))
	chars := make([]rune, 0, 3200)
	for i := range 3000 {
		chars = append(chars, 0x4E00+rune(i*7)) // spread over the Unified Ideographs block
	}
	for c := rune(0x3041); c <= 0x3093; c++ { // hiragana
		chars = append(chars, c)
	}
	vocab := make([]string, 20000)
	for i := range vocab {
		w := make([]rune, 2+r.IntN(2))
		for j := range w {
			w[j] = chars[r.IntN(len(chars))]
		}
		vocab[i] = string(w)
	}
	z := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	docs := make([]*ai.Document, n)
	for i := range docs {
		var sb strings.Builder
		runes, words := 0, 0
		for runes < 800 {
			w := vocab[z.Uint64()]
			sb.WriteString(w)
			runes += len([]rune(w))
			words++
			switch {
			case words%12 == 0:
				sb.WriteString("。")
			case words%5 == 0:
				sb.WriteString("、")
			}
		}
		docs[i] = ai.DocumentFromText(sb.String(), map[string]any{MetaURL: fmt.Sprintf("file:///doc%d", i/20), MetaSource: "bench"})
	}
	return docs
}

// keywordBenchQueriesCJK returns n queries of 4-8 consecutive characters
// of docs (two to three words, as a CJK question's keyword clause).
func keywordBenchQueriesCJK(docs []*ai.Document, n int) []string {
	r := rand.New(rand.NewPCG(9, 10))
	qs := make([]string, n)
	for i := range qs {
		rs := []rune(DocText(docs[r.IntN(len(docs))]))
		k := 4 + r.IntN(5)
		start := r.IntN(len(rs) - k)
		qs[i] = string(rs[start : start+k])
	}
	return qs
}

// BenchmarkSQLiteKeywordLanguages builds a SQLiteStore of English and of
// Japanese-like chunks (keywordBenchDocs, keywordBenchDocsCJK: about 800
// characters each) and reports, side by side in one run, the build time
// per chunk, the keyword index's size and the p50 and p90 latency of
// KeywordSearch (top 10): a CJK chunk gives about one bigram per character,
// an English one a term per word. Sizes: -cjk-bench-sizes (default 10000;
// the figure in docs/retrieval.md is at 100000):
//
//	go test -run '^$' -bench SQLiteKeywordLanguages -benchtime 1x -timeout 60m . -args -cjk-bench-sizes 100000
func BenchmarkSQLiteKeywordLanguages(b *testing.B) {
	ctx := context.Background()
	var sizes []int
	for f := range strings.SplitSeq(*cjkBenchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1000 {
			b.Fatalf("-cjk-bench-sizes: %q is not a chunk count of 1000 or more", f)
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		for _, lang := range []string{"english", "japanese"} {
			var docs []*ai.Document
			var queries []string
			if lang == "english" {
				docs = keywordBenchDocs(n)
				queries = keywordBenchQueries(docs[:min(n, 2000)], 200)
			} else {
				docs = keywordBenchDocsCJK(n)
				queries = keywordBenchQueriesCJK(docs[:min(n, 2000)], 200)
			}
			b.Run(fmt.Sprintf("%dk/%s", n/1000, lang), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "k.db")
				var lat []time.Duration
				for b.Loop() {
					b.StopTimer()
					os.Remove(path)
					b.StartTimer()
					start := time.Now()
					s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
					if err != nil {
						b.Fatal(err)
					}
					if err := IndexInBatches(ctx, s, docs, nil); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(time.Since(start).Microseconds())/float64(n), "us-build/chunk")
					var pages int64
					if err := s.db.QueryRowContext(ctx, `SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'chunk_terms%'`).Scan(&pages); err == nil {
						b.ReportMetric(float64(pages)/float64(n), "B-index/chunk")
					}
					lat = lat[:0]
					for _, q := range queries {
						t0 := time.Now()
						got, err := s.keywordSearch(ctx, q, 10, nil, nil)
						if err != nil {
							b.Fatal(err)
						}
						if len(got) == 0 {
							b.Fatalf("query %q found nothing", q)
						}
						lat = append(lat, time.Since(t0))
					}
					s.Close()
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "ms-p50")
				b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1e3, "ms-p90")
			})
		}
	}
}
