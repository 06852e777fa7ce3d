package engine

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// The benchmarks below compare LocalvecStore with Genkit's localvec driven
// directly, in one run, with the same fake embedder (testEmbedder, which
// implements ai.Embedder directly). Run them once:
//
//	go test -run '^$' -bench 'Localvec|EmbedderDefine' -benchtime 1x -timeout 30m .

const (
	benchIndexDocs = 20000
	benchIndexDim  = 768
	benchQueryRows = 50000
	benchQueryDim  = 768
	benchQueryTopK = 10
)

// benchGenkitDocs is the prefix of the 20,000 chunks indexed with Genkit's
// localvec (the whole 20,000 take about a minute; pass 20000 to measure
// instead of extrapolate).
var benchGenkitDocs = flag.Int("localvec-genkit-docs", 3000, "documents BenchmarkGenkitLocalvecIndex indexes (multiple of 100)")

// benchLocalvecDocs returns n chunk-like documents (~600 characters, with
// url/source metadata), deterministic.
func benchLocalvecDocs(n int) []*ai.Document {
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"contract", "invoice", "meeting", "protocol", "budget", "committee", "decision", "report", "member", "agenda", "payment", "deadline"}
	docs := make([]*ai.Document, n)
	for i := range docs {
		b := make([]byte, 0, 640)
		b = append(b, "Chunk "...)
		b = strconv.AppendInt(b, int64(i), 10)
		for len(b) < 600 {
			b = append(b, ' ')
			b = append(b, words[rng.IntN(len(words))]...)
			b = strconv.AppendInt(b, int64(rng.IntN(500)), 10)
		}
		docs[i] = ai.DocumentFromText(string(b), map[string]any{MetaURL: fmt.Sprintf("https://example.com/doc%d", i/50), MetaSource: "bench"})
	}
	return docs
}

// BenchmarkLocalvecIndex20k indexes 20,000 chunks of 768 dimensions in
// batches of 100 with IndexInBatches into a fresh LocalvecStore.
func BenchmarkLocalvecIndex20k(b *testing.B) {
	docs := benchLocalvecDocs(benchIndexDocs)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		s, err := NewLocalvecStore(genkit.Init(ctx), "bench", newTestEmbedder(benchIndexDim), dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := IndexInBatches(ctx, s, docs, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchIndexDocs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/20k")
}

// BenchmarkGenkitLocalvecIndex indexes the first 3,000 (-localvec-genkit-docs) of the same 20,000
// chunks with Genkit's localvec, one localvec.Index call per batch of 100,
// measures each batch, fits batch time = a + c x (documents stored after the
// batch) by least squares, and reports the fit and the time it extrapolates
// for all 20,000 (extrap-s/20k); measured-s is the time actually measured.
func BenchmarkGenkitLocalvecIndex(b *testing.B) {
	docs := benchLocalvecDocs(benchIndexDocs)[:*benchGenkitDocs]
	ctx := context.Background()
	var xs, ys []float64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		ds, _, err := localvec.DefineRetriever(genkit.Init(ctx), "bench", localvec.Config{Dir: dir, Embedder: newTestEmbedder(benchIndexDim)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for start := 0; start < len(docs); start += indexBatchSize {
			t0 := time.Now()
			if err := localvec.Index(ctx, docs[start:start+indexBatchSize], ds); err != nil {
				b.Fatal(err)
			}
			xs = append(xs, float64(start+indexBatchSize))
			ys = append(ys, time.Since(t0).Seconds())
		}
	}
	a, c := benchFitLine(xs, ys)
	var total float64
	for stored := indexBatchSize; stored <= benchIndexDocs; stored += indexBatchSize {
		total += a + c*float64(stored)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "measured-s")
	b.ReportMetric(a*1000, "fit-ms/batch")
	b.ReportMetric(c*1e6, "fit-us/stored-doc")
	b.ReportMetric(total, "extrap-s/20k")
}

// benchFitLine returns the least-squares a, c of y = a + c*x.
func benchFitLine(xs, ys []float64) (a, c float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	c = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return (sy - c*sx) / n, c
}

// benchQueryVectors returns n random unit-ish vectors of dim dimensions.
func benchQueryVectors(n, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(11, 12))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// BenchmarkLocalvecQuery50k runs top-10 queries over 50,000 x 768:
// LocalvecStore's Retriever (query embedding included), its scan alone,
// Genkit localvec's retriever on the same data, and a plain Go scan (dot
// products over per-row slices, top 10 kept by insertion).
func BenchmarkLocalvecQuery50k(b *testing.B) {
	ctx := context.Background()
	vecs := benchQueryVectors(benchQueryRows, benchQueryDim)
	emb := newTestEmbedder(benchQueryDim)
	query := ai.DocumentFromText("committee decision on the budget", nil)
	qv := testVector(DocText(query), benchQueryDim)

	s, err := NewLocalvecStore(genkit.Init(ctx), "bench", emb, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	add := make([]localvecNewRow, len(vecs))
	data := make(map[string]localvec.DbValue, len(vecs))
	for i, v := range vecs {
		id := strconv.Itoa(i)
		d := ai.DocumentFromText("row "+id, nil)
		add[i] = localvecNewRow{id: id, doc: d, vec: v}
		data[id] = localvec.DbValue{Doc: d, Embedding: v}
	}
	s.rows.append(add)
	req := &ai.RetrieverRequest{Query: query, Options: &localvec.RetrieverOptions{K: benchQueryTopK}}

	b.Run("ours-retriever", func(b *testing.B) {
		for b.Loop() {
			if resp, err := s.Retriever.Retrieve(ctx, req); err != nil || len(resp.Documents) != benchQueryTopK {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/query")
	})
	b.Run("ours-scan", func(b *testing.B) {
		for b.Loop() {
			s.rows.topK(qv, benchQueryTopK)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/query")
	})
	b.Run("genkit-localvec", func(b *testing.B) {
		ds, ret, err := localvec.DefineRetriever(genkit.Init(ctx), "bench", localvec.Config{Dir: b.TempDir(), Embedder: emb}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ds.Data = data
		for b.Loop() {
			if resp, err := ret.Retrieve(ctx, req); err != nil || len(resp.Documents) != benchQueryTopK {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/query")
	})
	b.Run("plain-scan", func(b *testing.B) {
		for b.Loop() {
			benchPlainTopK(vecs, qv, benchQueryTopK)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/query")
	})
}

// benchPlainTopK is the baseline: a straightforward dot-product scan that
// keeps the k best rows by insertion (vectors assumed normalised).
func benchPlainTopK(rows [][]float32, q []float32, k int) []int {
	type hit struct {
		s float32
		i int
	}
	top := make([]hit, 0, k+1)
	for i, r := range rows {
		var dot float32
		for j, x := range q {
			dot += x * r[j]
		}
		if len(top) == k && dot <= top[k-1].s {
			continue
		}
		pos, _ := slices.BinarySearchFunc(top, dot, func(h hit, t float32) int {
			if h.s > t {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, pos, hit{dot, i})
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make([]int, len(top))
	for i, h := range top {
		out[i] = h.i
	}
	return out
}

// BenchmarkEmbedderDefineOverhead embeds batches of 100 texts into 768
// dimensions with testEmbedder called directly and with the same function
// registered through genkit.DefineEmbedder, whose action layer validates the
// output against its JSON schema: the difference is the per-vector overhead
// a DefineEmbedder embedder adds to every indexing benchmark.
func BenchmarkEmbedderDefineOverhead(b *testing.B) {
	ctx := context.Background()
	docs := benchLocalvecDocs(100)
	direct := newTestEmbedder(benchIndexDim)
	defined := genkit.DefineEmbedder(genkit.Init(ctx), "bench/defined", nil, direct.Embed)
	for _, e := range []struct {
		name string
		emb  ai.Embedder
	}{{"direct", direct}, {"DefineEmbedder", defined}} {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.emb.Embed(ctx, &ai.EmbedRequest{Input: docs}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N*len(docs)), "ms/vector")
		})
	}
}

// BenchmarkLocalvecVsGenkit puts LocalvecStore and Genkit's localvec side
// by side on 6,000 of the chunks above (768 dimensions), in each iteration:
// ingest (open a new database, then IndexInBatches against one
// localvec.Index call per batch of 100) and 100 top-10 queries through each
// store's retriever (query embedding included). It reports each side's
// times and the ratios Genkit / ours (ingest_ratio, query_ratio), and the
// first KeywordSearch after the ingest (ours_first_keyword_ms, which
// builds the keyword index; localvec has no keyword search) and the same
// queries once more with that index in memory (ours_query_kw_ms). Each
// timed phase starts after a runtime.GC, untimed, so neither side pays
// for collecting the garbage the phase before it left (Genkit's ingest
// leaves hundreds of MB, which our queries used to pay for).
func BenchmarkLocalvecVsGenkit(b *testing.B) {
	const n, queries = 6000, 100
	docs := benchLocalvecDocs(n)
	rng := rand.New(rand.NewPCG(26, 6))
	words := []string{"contract", "invoice", "meeting", "protocol", "budget", "committee", "decision", "report"}
	reqs := make([]*ai.RetrieverRequest, queries)
	for i := range reqs {
		q := fmt.Sprintf("%s%d %s %s%d", words[rng.IntN(len(words))], rng.IntN(500), words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(500))
		reqs[i] = &ai.RetrieverRequest{Query: ai.DocumentFromText(q, nil), Options: &localvec.RetrieverOptions{K: benchQueryTopK}}
	}
	ctx := context.Background()
	emb := newTestEmbedder(benchIndexDim)
	var oursIngest, genkitIngest, oursQuery, genkitQuery, firstKeyword, oursQueryKW time.Duration
	for b.Loop() {
		runtime.GC()
		t0 := time.Now()
		s, err := NewLocalvecStore(genkit.Init(ctx), "bench", emb, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if err := IndexInBatches(ctx, s, docs, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		runtime.GC()
		t1g := time.Now()
		ds, ret, err := localvec.DefineRetriever(genkit.Init(ctx), "bench", localvec.Config{Dir: b.TempDir(), Embedder: emb}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for start := 0; start < len(docs); start += indexBatchSize {
			if err := localvec.Index(ctx, docs[start:min(start+indexBatchSize, len(docs))], ds); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		runtime.GC()
		t2g := time.Now()
		for _, req := range reqs {
			if resp, err := s.Retriever.Retrieve(ctx, req); err != nil || len(resp.Documents) != benchQueryTopK {
				b.Fatal(err)
			}
		}
		t3 := time.Now()
		runtime.GC()
		t3g := time.Now()
		for _, req := range reqs {
			if resp, err := ret.Retrieve(ctx, req); err != nil || len(resp.Documents) != benchQueryTopK {
				b.Fatal(err)
			}
		}
		t4 := time.Now()
		if got, err := s.KeywordSearch(ctx, DocText(reqs[0].Query), 10, nil, nil); err != nil || len(got) == 0 {
			b.Fatalf("keyword search: %d results, %v", len(got), err)
		}
		t5 := time.Now()
		for _, req := range reqs {
			if resp, err := s.Retriever.Retrieve(ctx, req); err != nil || len(resp.Documents) != benchQueryTopK {
				b.Fatal(err)
			}
		}
		t6 := time.Now()
		oursQueryKW += t6.Sub(t5)
		oursIngest += t1.Sub(t0)
		genkitIngest += t2.Sub(t1g)
		oursQuery += t3.Sub(t2g)
		genkitQuery += t4.Sub(t3g)
		firstKeyword += t5.Sub(t4)
		s.Close()
	}
	iters := float64(b.N)
	b.ReportMetric(oursIngest.Seconds()/iters, "ours_ingest_s")
	b.ReportMetric(genkitIngest.Seconds()/iters, "genkit_ingest_s")
	b.ReportMetric(float64(genkitIngest)/float64(oursIngest), "ingest_ratio")
	b.ReportMetric(float64(oursQuery.Microseconds())/1000/(iters*queries), "ours_query_ms")
	b.ReportMetric(float64(genkitQuery.Microseconds())/1000/(iters*queries), "genkit_query_ms")
	b.ReportMetric(float64(genkitQuery)/float64(oursQuery), "query_ratio")
	b.ReportMetric(float64(firstKeyword.Microseconds())/1000/iters, "ours_first_keyword_ms")
	b.ReportMetric(float64(oursQueryKW.Microseconds())/1000/(iters*queries), "ours_query_kw_ms")
}
