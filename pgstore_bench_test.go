package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// pgBenchEmbedder returns precomputed vectors by text, so that benchmarks
// measure the store, not the embedder.
type pgBenchEmbedder struct {
	dim  int
	vecs map[string][]float32
}

func (e *pgBenchEmbedder) Name() string            { return "bench/precomputed" }
func (e *pgBenchEmbedder) Register(r api.Registry) {}

func (e *pgBenchEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	resp := &ai.EmbedResponse{Embeddings: make([]*ai.Embedding, len(req.Input))}
	for i, d := range req.Input {
		v, ok := e.vecs[DocText(d)]
		if !ok {
			return nil, fmt.Errorf("bench embedder: no vector for %q", DocText(d))
		}
		resp.Embeddings[i] = &ai.Embedding{Embedding: v}
	}
	return resp, nil
}

// pgBenchVector returns a random unit vector.
func pgBenchVector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// pgBenchCorpus returns n documents with distinct texts and an embedder
// knowing their vectors (fixed seed).
func pgBenchCorpus(n, dim int) ([]*ai.Document, *pgBenchEmbedder) {
	r := rand.New(rand.NewPCG(42, 7))
	emb := &pgBenchEmbedder{dim: dim, vecs: make(map[string][]float32, n)}
	docs := make([]*ai.Document, n)
	for i := range docs {
		text := fmt.Sprintf("benchmark chunk %d: some words about topic %d and area %d", i, i%97, i%13)
		docs[i] = ai.DocumentFromText(text, map[string]any{MetaURL: fmt.Sprintf("doc%d.pdf", i/50), MetaSource: "bench"})
		emb.vecs[text] = pgBenchVector(r, dim)
	}
	return docs, emb
}

// pgBenchSize reads a benchmark size from the environment variable name,
// defaulting to def: the defaults suit a shared 2-core machine, and
// docs/postgres.md gives the commands for the 100k x 768.
func pgBenchSize(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// BenchmarkPgvecIndex measures IndexInBatches rows/s into a PgvecStore
// emptied before each operation, embedding precomputed, writing with COPY
// and with multi-row INSERT, with the HNSW index and without it (dropped):
// ASKYOURDOCS_BENCH_WRITE_ROWS chunks (default 2,000) of 768 dimensions per
// operation; IndexInBatches calls Index per 100 documents, the "onecall"
// cases write all rows with one Index call.
func BenchmarkPgvecIndex(b *testing.B) {
	n := pgBenchSize(b, "ASKYOURDOCS_BENCH_WRITE_ROWS", 2000)
	const dim = 768
	docs, emb := pgBenchCorpus(n, dim)
	for _, hnsw := range []bool{true, false} {
		for _, m := range []pgvecWriteMethod{pgvecWriteCopy, pgvecWriteInsert} {
			name := m.String() + "/hnsw"
			if !hnsw {
				name = m.String() + "/noindex"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				s := pgTestStoreWith(b, emb, dim, &PgvecOptions{writeMethod: m})
				if !hnsw {
					if _, err := s.Pool.Exec(ctx, `DROP INDEX `+pgvecIdent(s.names.hnsw)); err != nil {
						b.Fatal(err)
					}
				}
				for b.Loop() {
					b.StopTimer()
					if _, err := s.Pool.Exec(ctx, `TRUNCATE `+pgvecIdent(s.Table())); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if err := IndexInBatches(ctx, s, docs, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
	// One Index call for all rows (one transaction, as a source
	// replacement writes), without the HNSW index; "nopostings" with a
	// custom text search configuration (a copy of simple), for which the
	// store writes no keyword postings: what the postings cost.
	for _, c := range []struct {
		m      pgvecWriteMethod
		config string
	}{{pgvecWriteCopy, ""}, {pgvecWriteInsert, ""}, {pgvecWriteCopy, "ayd_bench_simple"}} {
		name := c.m.String() + "/noindex/onecall"
		if c.config != "" {
			name += "/nopostings"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			if c.config != "" {
				pgTestTextConfig(b, c.config, "simple")
			}
			s := pgTestStoreWith(b, emb, dim, &PgvecOptions{writeMethod: c.m, TextSearchConfig: c.config})
			if _, err := s.Pool.Exec(ctx, `DROP INDEX `+pgvecIdent(s.names.hnsw)); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				if _, err := s.Pool.Exec(ctx, `TRUNCATE `+pgvecIdent(s.Table())); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := s.Index(ctx, docs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// pgBenchClustered returns n documents whose vectors lie in 100 clusters
// (a random centre plus noise, normalised), as embeddings of a real corpus
// do, and queries near random documents; the embedder knows them all.
func pgBenchClustered(n, dim, queries int) ([]*ai.Document, []*ai.Document, *pgBenchEmbedder) {
	r := rand.New(rand.NewPCG(42, 7))
	centres := make([][]float32, 100)
	for i := range centres {
		centres[i] = pgBenchVector(r, dim)
	}
	near := func(c []float32, spread float64) []float32 {
		noise := pgBenchVector(r, dim)
		v := make([]float32, dim)
		var norm float64
		for j := range v {
			v[j] = c[j] + float32(spread)*noise[j]
			norm += float64(v[j]) * float64(v[j])
		}
		inv := float32(1 / math.Sqrt(norm))
		for j := range v {
			v[j] *= inv
		}
		return v
	}
	emb := &pgBenchEmbedder{dim: dim, vecs: make(map[string][]float32, n+queries)}
	docs := make([]*ai.Document, n)
	for i := range docs {
		text := fmt.Sprintf("benchmark chunk %d: some words about topic %d and area %d", i, i%97, i%13)
		docs[i] = ai.DocumentFromText(text, map[string]any{MetaURL: fmt.Sprintf("doc%d.pdf", i/50), MetaSource: "bench"})
		emb.vecs[text] = near(centres[r.IntN(len(centres))], 0.8)
	}
	qdocs := make([]*ai.Document, queries)
	for i := range qdocs {
		text := fmt.Sprintf("query %d", i)
		emb.vecs[text] = near(emb.vecs[DocText(docs[r.IntN(n)])], 0.5)
		qdocs[i] = ai.DocumentFromText(text, nil)
	}
	return docs, qdocs, emb
}

// BenchmarkPgvecScale measures a PgvecStore at scale on one data set built
// once per run: ASKYOURDOCS_BENCH_ROWS chunks (default 20,000; the figures
// in docs/postgres.md use 100,000) of ASKYOURDOCS_BENCH_DIM dimensions
// (default 768) in 100 clusters, of which every 10th has a URL under
// "rare/". The corpus is loaded with COPY (5,000 rows per Index call) into
// the table without its HNSW index, which is then built once (load rows/s
// and build time reported by every sub-benchmark). Then, in this order:
//
//   - retrieve/efN: Retrieve top-10 at hnsw.ef_search N = 40, 100, 200,
//     one operation being 64 queries in turn: p50 and p95 latency and recall@10 against the exact top 10 (computed
//     in Go);
//   - filtered/efN: the same restricted to URLs under "rare/" (10% of the
//     rows) with the store's iterative scan, recall against the exact
//     filtered top 10 and the fewest rows returned (10 when every query got
//     k); filtered-noiter/ef40 without the iterative scan, for comparison;
//   - write/METHOD/hnsw and write/METHOD/noindex: IndexInBatches of
//     ASKYOURDOCS_BENCH_WRITE_ROWS new chunks (default 2,000) into the
//     loaded store with COPY and with multi-row INSERT, with the HNSW index
//     and, after dropping it, without; the new chunks are deleted after each
//     operation, untimed.
func BenchmarkPgvecScale(b *testing.B) {
	n := pgBenchSize(b, "ASKYOURDOCS_BENCH_ROWS", 20000)
	dim := pgBenchSize(b, "ASKYOURDOCS_BENCH_DIM", 768)
	w := pgBenchSize(b, "ASKYOURDOCS_BENCH_WRITE_ROWS", 2000)
	const k, queries = 10, 64
	ctx := context.Background()
	all, qdocs, emb := pgBenchClustered(n+w, dim, queries)
	docs, writes := all[:n], all[n:]
	var rare []*ai.Document
	for i := 0; i < n; i += 10 {
		docs[i].Metadata[MetaURL] = fmt.Sprintf("rare/%d.pdf", i)
		rare = append(rare, docs[i])
	}
	for _, d := range writes {
		d.Metadata[MetaSource] = "bench-write"
	}
	dsn := pgTestDSN(b)
	name := pgTestStoreName(b)
	pgTestDropStore(b, dsn, name)
	open := func(opts *PgvecOptions) *PgvecStore {
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, dim, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	s := open(&PgvecOptions{writeMethod: pgvecWriteCopy})
	if _, err := s.Pool.Exec(ctx, `DROP INDEX `+pgvecIdent(s.names.hnsw)); err != nil {
		b.Fatal(err)
	}
	load := time.Now()
	for start := 0; start < n; start += 5000 {
		if err := s.Index(ctx, docs[start:min(start+5000, n)]); err != nil {
			b.Fatal(err)
		}
	}
	loadRate := float64(n) / time.Since(load).Seconds()
	build := time.Now()
	if _, err := s.Pool.Exec(ctx, pgvecHNSWIndexSQL(s.names, dim)); err != nil {
		b.Fatal(err)
	}
	buildTime := time.Since(build)
	if _, err := s.Pool.Exec(ctx, `VACUUM ANALYZE `+pgvecIdent(s.Table())); err != nil {
		b.Fatal(err)
	}
	exact := make([][]string, queries)
	exactRare := make([][]string, queries)
	for i, q := range qdocs {
		exact[i] = pgBenchExactTop(emb, docs, emb.vecs[DocText(q)], k)
		exactRare[i] = pgBenchExactTop(emb, rare, emb.vecs[DocText(q)], k)
	}
	report := func(b *testing.B, lat []time.Duration) {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		b.ReportMetric(loadRate, "load-rows/s")
		b.ReportMetric(buildTime.Seconds(), "hnsw-build-s")
		b.ReportMetric(float64(n), "rows")
	}
	// search runs the queries in turn through st with ef_search ef, the
	// filter when rareOnly, and reports latency, recall@10 against want and
	// the fewest rows a query returned.
	search := func(b *testing.B, st *PgvecStore, ef int, rareOnly bool, want [][]string) {
		where, args := "", []any(nil)
		if rareOnly {
			where, args = `starts_with(url, $3)`, []any{"rare/"}
		}
		var hits, total int
		fewest := k
		var lat []time.Duration
		first := true
		for b.Loop() {
			for i, q := range qdocs {
				start := time.Now()
				got, err := st.retrieveWhere(ctx, q, k, ef, where, args)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				fewest = min(fewest, len(got))
				if first {
					for _, d := range got {
						if slices.Contains(want[i], DocText(d)) {
							hits++
						}
					}
					total += k
				}
			}
			first = false
		}
		report(b, lat)
		b.ReportMetric(float64(hits)/float64(total), "recall@10")
		b.ReportMetric(float64(fewest), "min-rows")
	}
	for _, ef := range []int{40, 100, 200} {
		b.Run(fmt.Sprintf("retrieve/ef%d", ef), func(b *testing.B) { search(b, s, ef, false, exact) })
	}
	for _, ef := range []int{40, 100, 200} {
		b.Run(fmt.Sprintf("filtered/ef%d", ef), func(b *testing.B) { search(b, s, ef, true, exactRare) })
	}
	noIter := open(&PgvecOptions{IterativeScan: "off"})
	b.Run("filtered-noiter/ef40", func(b *testing.B) { search(b, noIter, 40, true, exactRare) })

	write := func(b *testing.B, st *PgvecStore) {
		for b.Loop() {
			if err := IndexInBatches(ctx, st, writes, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if _, err := st.Pool.Exec(ctx, `DELETE FROM `+pgvecIdent(st.Table())+` WHERE source = 'bench-write'`); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(w)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(n), "rows")
	}
	writers := map[pgvecWriteMethod]*PgvecStore{pgvecWriteCopy: s, pgvecWriteInsert: open(&PgvecOptions{writeMethod: pgvecWriteInsert})}
	for _, index := range []string{"hnsw", "noindex"} {
		if index == "noindex" {
			if _, err := s.Pool.Exec(ctx, `DROP INDEX `+pgvecIdent(s.names.hnsw)); err != nil {
				b.Fatal(err)
			}
		}
		for _, m := range []pgvecWriteMethod{pgvecWriteCopy, pgvecWriteInsert} {
			b.Run("write/"+m.String()+"/"+index, func(b *testing.B) { write(b, writers[m]) })
		}
	}
}

// pgBenchExactTop returns the texts of the k documents most similar to q by
// cosine similarity, computed exactly.
func pgBenchExactTop(emb *pgBenchEmbedder, docs []*ai.Document, q []float32, k int) []string {
	type scored struct {
		text  string
		score float64
	}
	all := make([]scored, len(docs))
	for i, d := range docs {
		v := emb.vecs[DocText(d)]
		var dot, nq, nv float64
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
			nq += float64(q[j]) * float64(q[j])
			nv += float64(v[j]) * float64(v[j])
		}
		all[i] = scored{DocText(d), dot / math.Sqrt(nq*nv)}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	out := make([]string, k)
	for i := range out {
		out[i] = all[i].text
	}
	return out
}
