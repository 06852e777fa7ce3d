package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
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

// BenchmarkPgvecIndex compares IndexInBatches into a PgvecStore with the
// fastest hand-written batched inserts of the same rows into the same table,
// emptied before each operation; embedding is precomputed. "hnsw" keeps the
// store's HNSW index (300 chunks of 768 dimensions per operation: on PGlite
// the index insert dominates); "noindex" drops it (2,000 chunks per
// operation), which shows the store's own overhead over a raw insert.
func BenchmarkPgvecIndex(b *testing.B) {
	for _, tc := range []struct {
		name string
		n    int
		hnsw bool
	}{{"hnsw", 300, true}, {"noindex", 2000, false}} {
		b.Run(tc.name, func(b *testing.B) { pgBenchIndex(b, tc.n, tc.hnsw) })
	}
}

func pgBenchIndex(b *testing.B, n int, hnsw bool) {
	const dim = 768
	ctx := context.Background()
	docs, emb := pgBenchCorpus(n, dim)
	s := pgTestStore(b, emb, dim)
	table := pgvecIdent(s.Table())
	if !hnsw {
		if _, err := s.Pool.Exec(ctx, `DROP INDEX `+pgvecIdent(s.names.hnsw)); err != nil {
			b.Fatal(err)
		}
	}
	rows, err := pgvecPrepare(docs)
	if err != nil {
		b.Fatal(err)
	}
	for i := range rows {
		rows[i].vec = emb.vecs[rows[i].content]
	}
	empty := func() {
		b.StopTimer()
		if _, err := s.Pool.Exec(ctx, `TRUNCATE `+table); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}

	b.Run("IndexInBatches", func(b *testing.B) {
		for b.Loop() {
			empty()
			if err := IndexInBatches(ctx, s, docs, nil); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	// Raw: the same multi-row INSERT ... unnest statement, 100 rows per
	// statement, no lookups.
	b.Run("RawUnnest100", func(b *testing.B) {
		for b.Loop() {
			empty()
			for start := 0; start < n; start += 100 {
				ids, contents, metas, hashes, ths := []string{}, []string{}, []string{}, []string{}, []string{}
				var vecs []pgvector.Vector
				for _, r := range rows[start:min(start+100, n)] {
					ids, contents, metas = append(ids, r.id), append(contents, r.content), append(metas, r.meta)
					hashes, ths = append(hashes, r.hash), append(ths, r.textHash)
					vecs = append(vecs, pgvector.NewVector(r.vec))
				}
				if _, err := s.Pool.Exec(ctx, `INSERT INTO `+table+` (id, content, metadata, content_hash, text_hash, embedder, embedding)
					SELECT a, b, c::jsonb, d, e, 'raw', f FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::vector[]) AS u(a, b, c, d, e, f)`,
					ids, contents, metas, hashes, ths, vecs); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
	// Raw: pgx.Batch of 1,000 single-row INSERTs per round trip.
	b.Run("RawPgxBatch1000", func(b *testing.B) {
		for b.Loop() {
			empty()
			for start := 0; start < n; start += 1000 {
				batch := &pgx.Batch{}
				for _, r := range rows[start:min(start+1000, n)] {
					batch.Queue(`INSERT INTO `+table+` (id, content, metadata, content_hash, text_hash, embedder, embedding)
						VALUES ($1, $2, $3::jsonb, $4, $5, 'raw', $6)`, r.id, r.content, r.meta, r.hash, r.textHash, pgvector.NewVector(r.vec))
				}
				if err := s.Pool.SendBatch(ctx, batch).Close(); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
}

// BenchmarkPgvecRetrieve measures Retrieve top-10 with the HNSW index over
// 20,000 chunks of 768 dimensions (query embedding precomputed) and reports
// recall@10 against an exact scan.
func BenchmarkPgvecRetrieve(b *testing.B) {
	const n, dim, k, queries = 20000, 768, 10, 32
	ctx := context.Background()
	docs, emb := pgBenchCorpus(n, dim)
	r := rand.New(rand.NewPCG(9, 9))
	qdocs := make([]*ai.Document, queries)
	for i := range qdocs {
		text := fmt.Sprintf("query %d", i)
		// Queries near a stored vector, as real questions are near chunks.
		base := emb.vecs[DocText(docs[r.IntN(n)])]
		noise := pgBenchVector(r, dim)
		v := make([]float32, dim)
		for j := range v {
			v[j] = base[j] + 0.5*noise[j]
		}
		emb.vecs[text] = v
		qdocs[i] = ai.DocumentFromText(text, nil)
	}
	s := pgTestStore(b, emb, dim)
	// Load without the index, then build it once: much faster than 20,000
	// incremental HNSW inserts on PGlite.
	if _, err := s.Pool.Exec(ctx, `DROP INDEX `+pgvecIdent(s.names.hnsw)); err != nil {
		b.Fatal(err)
	}
	for start := 0; start < n; start += 1000 {
		if err := s.Index(ctx, docs[start:min(start+1000, n)]); err != nil {
			b.Fatal(err)
		}
	}
	build := time.Now()
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgvecHNSWIndexSQL(s.names, dim))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	buildTime := time.Since(build)

	var hits, total int
	i := 0
	b.ResetTimer()
	for b.Loop() {
		q := qdocs[i%queries]
		got, err := s.Retrieve(ctx, q, k)
		if err != nil {
			b.Fatal(err)
		}
		if i < queries {
			b.StopTimer()
			exact := pgBenchExactTop(emb, docs, emb.vecs[DocText(q)], k)
			for _, d := range got {
				if slices.Contains(exact, DocText(d)) {
					hits++
				}
			}
			total += k
			b.StartTimer()
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
	b.ReportMetric(buildTime.Seconds(), "hnsw-build-s")
	if total > 0 {
		b.ReportMetric(float64(hits)/float64(total), "recall@10")
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
