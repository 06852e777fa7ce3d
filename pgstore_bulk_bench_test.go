package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// pgBulkBenchSources returns n chunks of about 1,200 characters of prose
// (words of a Zipf-distributed vocabulary of 8,000, as a manual's text has)
// with the metadata FileSource gives them (url, source, breadcrumb,
// headings, parent text), in sources of 23 chunks (a 530-page manual has
// 12,254), and an embedder knowing their dim-dimensional vectors.
func pgBulkBenchSources(n, dim int) ([][]*ai.Document, *pgBenchEmbedder) {
	r := rand.New(rand.NewPCG(26, 1))
	vocab := make([]string, 8000)
	for i := range vocab {
		vocab[i] = pgBenchWord(r, 2+r.IntN(9))
	}
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	sentence := func(words int) string {
		w := make([]string, words)
		for j := range w {
			w[j] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ") + "."
	}
	emb := &pgBenchEmbedder{dim: dim, vecs: make(map[string][]float32, n)}
	var sources [][]*ai.Document
	for i := 0; i < n; {
		page := len(sources)
		url := fmt.Sprintf("manual/chapter%02d/page%03d.html", page/40, page)
		crumb := fmt.Sprintf("Manual > %s %s > %s", vocab[page%50], vocab[50+page%70], sentence(3))
		var docs []*ai.Document
		parent := ""
		for c := 0; c < 23 && i < n; c, i = c+1, i+1 {
			var b strings.Builder
			for b.Len() < 1150 {
				b.WriteString(sentence(6 + r.IntN(14)))
				b.WriteByte(' ')
			}
			text := fmt.Sprintf("%d %s", i, b.String())
			if c%4 == 0 {
				parent = text + " " + sentence(60)
			}
			docs = append(docs, ai.DocumentFromText(text, map[string]any{
				MetaURL: url, MetaSource: "manual", MetaBreadcrumb: crumb,
				MetaHeadings: sentence(2 + c%3), MetaParentText: parent,
			}))
			emb.vecs[text] = pgBenchVector(r, dim)
		}
		sources = append(sources, docs)
	}
	return sources, emb
}

// BenchmarkPgvecBulkIngest measures a first index into an empty PgvecStore
// side by side with a hand-written COPY of the same rows into a bare table
// without any index, in the same run: ASKYOURDOCS_BENCH_BULK_ROWS chunks
// (default 10,000) of 1,024 dimensions, embeddings precomputed, written as
// the CLI's index --pg writes them (IndexSource per page of 23 chunks,
// inside one PgvecStore.Bulk run). Each operation loads both from scratch.
// Metrics: ours_rows/s (chunks over the run's time without the HNSW
// build: the load and the build of the other indexes it dropped),
// copy_rows/s, ratio (ours/copy), hnsw_build_s (the HNSW build after the
// load), other_index_build_s (the other indexes' builds, within
// ours_rows/s), ours_total_rows/s and ratio_total (with the HNSW build).
func BenchmarkPgvecBulkIngest(b *testing.B) {
	n := pgBenchSize(b, "ASKYOURDOCS_BENCH_BULK_ROWS", 10000)
	const dim = 1024
	ctx := context.Background()
	sources, emb := pgBulkBenchSources(n, dim)
	dsn := pgTestDSN(b)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// A fresh database has no vector type until a store creates the
	// extension, and the bare table of the anchor needs it first.
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
		b.Fatal(err)
	}
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		b.Fatal(err)
	}
	var all []*ai.Document
	for _, src := range sources {
		all = append(all, src...)
	}
	prepared, err := pgvecPrepare(all)
	if err != nil {
		b.Fatal(err)
	}
	bare := pgvecIdent("askyourdocs_bench_bare_copy")
	var ours, load, build, others, anchor time.Duration
	for b.Loop() {
		b.StopTimer()
		name := pgTestStoreName(b)
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, dim, &PgvecOptions{TextSearchConfig: "english"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+bare); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE `+bare+` (id text, content text, metadata jsonb, embedding vector(1024))`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		start := time.Now()
		stats, err := pgBulkBenchLoad(ctx, s, sources)
		if err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
		build += stats.HNSWBuild
		others += stats.IndexBuild - stats.HNSWBuild
		load += time.Since(start) - stats.HNSWBuild
		if !stats.Bulk {
			b.Fatalf("a first index of %d chunks did not take the bulk path: %+v", n, stats)
		}

		start = time.Now()
		src := pgx.CopyFromSlice(len(prepared), func(i int) ([]any, error) {
			r := &prepared[i]
			return []any{r.id, r.content, r.meta, pgvector.NewVector(emb.vecs[r.content])}, nil
		})
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"askyourdocs_bench_bare_copy"}, []string{"id", "content", "metadata", "embedding"}, src); err != nil {
			b.Fatal(err)
		}
		anchor += time.Since(start)

		b.StopTimer()
		var rows int
		if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.Table())).Scan(&rows); err != nil || rows != n {
			b.Fatalf("store holds %d chunks (%v), want %d", rows, err, n)
		}
		s.Close()
		pgBulkBenchDrop(b, conn, name)
		b.StartTimer()
	}
	b.StopTimer()
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+bare); err != nil {
		b.Fatal(err)
	}
	per := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(per(load), "ours_rows/s")
	b.ReportMetric(per(anchor), "copy_rows/s")
	b.ReportMetric(per(load)/per(anchor), "ratio")
	b.ReportMetric(build.Seconds()/float64(b.N), "hnsw_build_s")
	b.ReportMetric(others.Seconds()/float64(b.N), "other_index_build_s")
	b.ReportMetric(per(ours), "ours_total_rows/s")
	b.ReportMetric(per(ours)/per(anchor), "ratio_total")
	b.ReportMetric(float64(n), "rows")
}

// pgBulkBenchDrop removes the store called name.
func pgBulkBenchDrop(b *testing.B, conn *pgx.Conn, name string) {
	ctx := context.Background()
	nm := pgvecTableNames(name)
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+pgvecIdent(nm.table)+`, `+pgvecIdent(nm.kw)+`, `+pgvecIdent(nm.kwDF)); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name); err != nil {
		b.Fatal(err)
	}
}

// pgBulkBenchSource is one page of the benchmark as an IngestSource.
type pgBulkBenchSource struct{ docs []*ai.Document }

func (p *pgBulkBenchSource) Fetch(context.Context) ([]Paragraph, error) {
	return []Paragraph{{Text: "x"}}, nil
}
func (p *pgBulkBenchSource) Documents([]Chunk) []*ai.Document { return p.docs }
func (p *pgBulkBenchSource) Name() string                     { return metaString(p.docs[0].Metadata, MetaURL) }
func (p *pgBulkBenchSource) DeleteStale(ctx context.Context, store VectorStore) (int, error) {
	return store.DeleteByURL(ctx, p.Name())
}

// pgBulkBenchLoad writes sources as the CLI's index --pg does: IndexSource
// per source inside one Bulk run.
func pgBulkBenchLoad(ctx context.Context, s *PgvecStore, sources [][]*ai.Document) (pgvecBulkStats, error) {
	return s.bulkWithStats(ctx, func(bt VectorStore) error {
		for _, docs := range sources {
			if _, _, err := IndexSource(ctx, bt, &pgBulkBenchSource{docs: docs}, 1200, 0, nil); err != nil {
				return err
			}
		}
		return nil
	})
}
