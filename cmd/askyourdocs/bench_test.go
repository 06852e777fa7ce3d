package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

var (
	benchPG50k = flag.Bool("cli-pg-50k", false, "also run the 50k-chunk PgvecStore latency benchmarks (slow on PGlite)")
	benchSizes = flag.String("cli-sizes", "10000,50000", "store sizes (chunks) of the latency benchmarks")
)

// debianCorpusPages returns the content pages of the installed Debian
// Reference and Debian FAQ (the evaluation corpus, see
// scripts/build-evalset), nil when they are not installed.
func debianCorpusPages() []string {
	var pages []string
	for _, dir := range []string{"/usr/share/debian-reference", "/usr/share/doc/debian/FAQ"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.en.html"))
		for _, p := range m {
			if filepath.Base(p) != "index.en.html" {
				pages = append(pages, p)
			}
		}
	}
	return pages
}

// benchApp is a cliApp with an empty environment (built-in embedder, no
// LLM) that prints nothing.
func benchApp() *cliApp {
	return &cliApp{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
}

// BenchmarkIndexCorpus indexes the Debian manuals (30 HTML pages, 3.4 MB)
// into a fresh LocalvecStore with the built-in embedder, as 'askyourdocs
// index' does: extraction, chunking, embedding, one write per source.
func BenchmarkIndexCorpus(b *testing.B) {
	pages := debianCorpusPages()
	if len(pages) == 0 {
		b.Skip("Debian manuals not installed: apt-get install -y debian-reference-en debian-faq")
	}
	var size int64
	for _, p := range pages {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	ctx := context.Background()
	// per-source: one file write per IndexSource; bulk: the whole run in
	// one store.bulk, as `askyourdocs index` does.
	for _, mode := range []string{"per-source", "bulk"} {
		b.Run("write="+mode, func(b *testing.B) {
			b.SetBytes(size)
			chunks := 0
			runs := 0
			for b.Loop() {
				dir := b.TempDir()
				be, err := benchApp().open(ctx, &commonFlags{data: dir, name: storeName}, openOptions{write: true})
				if err != nil {
					b.Fatal(err)
				}
				chunks = 0
				indexAll := func(w askyourdocs.VectorStore) error {
					for _, p := range pages {
						n, _, err := askyourdocs.IndexSource(ctx, w, newFileSource(p, filepath.Dir(p), "html"), defaultChunkSize, defaultChunkOverlap, nil)
						if err != nil {
							return err
						}
						chunks += n
					}
					return nil
				}
				if mode == "bulk" {
					err = be.store.bulk(indexAll)
				} else {
					err = indexAll(be.store)
				}
				if err != nil {
					b.Fatal(err)
				}
				be.Close()
				runs++
			}
			sec := b.Elapsed().Seconds() / float64(runs)
			b.ReportMetric(float64(len(pages))/sec, "pages/s")
			b.ReportMetric(float64(chunks)/sec, "chunks/s")
			b.ReportMetric(float64(chunks), "chunks")
		})
	}
}

// benchVocabulary is the synthetic corpus' word list: pseudo-words drawn
// with a Zipf-like distribution, so keyword queries have rare and common
// terms like real text.
func benchVocabulary(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	words := make([]string, n)
	for i := range words {
		l := 3 + r.IntN(8)
		var sb strings.Builder
		for range l {
			sb.WriteByte(letters[r.IntN(len(letters))])
		}
		words[i] = sb.String()
	}
	return words
}

// benchChunks returns n synthetic chunks of about 800 characters.
func benchChunks(n int) []*ai.Document {
	vocab := benchVocabulary(20000)
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	docs := make([]*ai.Document, n)
	for i := range docs {
		var sb strings.Builder
		for sb.Len() < 800 {
			sb.WriteString(vocab[z.Uint64()])
			sb.WriteByte(' ')
		}
		text := sb.String()
		docs[i] = ai.DocumentFromText(text, map[string]any{
			askyourdocs.MetaURL:    fmt.Sprintf("file:///bench/doc%05d.pdf", i/20),
			askyourdocs.MetaSource: "bench",
			metaParentText:         text,
			metaPages:              fmt.Sprint(i%20 + 1),
		})
	}
	return docs
}

// benchQueries returns queries of 3-5 words taken from chunks of the corpus.
func benchQueries(docs []*ai.Document, n int) []string {
	r := rand.New(rand.NewPCG(5, 6))
	qs := make([]string, n)
	for i := range qs {
		words := strings.Fields(askyourdocs.DocText(docs[r.IntN(len(docs))]))
		k := 3 + r.IntN(3)
		start := r.IntN(len(words) - k)
		qs[i] = strings.Join(words[start:start+k], " ")
	}
	return qs
}

// benchStores caches the backends built for the latency benchmarks.
var benchStores sync.Map // "local-10000" -> *backend

// benchBackend returns a backend whose store holds n synthetic chunks.
func benchBackend(b *testing.B, kind string, n int) *backend {
	key := fmt.Sprintf("%s-%d", kind, n)
	if v, ok := benchStores.Load(key); ok {
		return v.(*backend)
	}
	ctx := context.Background()
	cf := &commonFlags{name: fmt.Sprintf("cli_bench_%d_%d", n, cliLocalEmbedderDim)}
	switch kind {
	case "local":
		dir, err := os.MkdirTemp("", "askyourdocs-bench-")
		if err != nil {
			b.Fatal(err)
		}
		cf.data = dir
	case "pg":
		dsn := os.Getenv("ASKYOURDOCS_TEST_DSN")
		if dsn == "" {
			b.Skip("no ASKYOURDOCS_TEST_DSN: PgvecStore benchmarks skipped")
		}
		if n > 10000 && !*benchPG50k {
			b.Skip("50k PgvecStore benchmark needs -cli-pg-50k (slow on PGlite)")
		}
		cf.pg = dsn
	}
	be, err := benchApp().open(ctx, cf, openOptions{write: true})
	if err != nil {
		b.Fatal(err)
	}
	have, err := be.store.chunkCount(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if have != n {
		if have > 0 {
			if _, err := be.store.DeleteBySource(ctx, "bench"); err != nil {
				b.Fatal(err)
			}
		}
		if err := askyourdocs.IndexInBatches(ctx, be.store, benchChunks(n), nil); err != nil {
			b.Fatal(err)
		}
	}
	benchStores.Store(key, be)
	return be
}

// BenchmarkQueryLatency measures search (fusion, vector only, keyword only)
// and an extractive ask (retrieval + BestExcerpt; an LLM adds its own time)
// at 10k and 50k chunks, for LocalvecStore and PgvecStore.
func BenchmarkQueryLatency(b *testing.B) {
	ctx := context.Background()
	for _, kind := range []string{"local", "pg"} {
		for _, s := range strings.Split(*benchSizes, ",") {
			var n int
			fmt.Sscan(s, &n)
			b.Run(fmt.Sprintf("%s/%dk", kind, n/1000), func(b *testing.B) {
				be := benchBackend(b, kind, n)
				queries := benchQueries(benchChunks(min(n, 2000)), 64)
				for _, mode := range []string{modeFusion, modeVector, modeKeyword, "ask"} {
					b.Run(mode, func(b *testing.B) {
						o := defaultRetrieveOptions()
						o.hyde, o.rerank = false, false
						if mode != "ask" {
							o.mode = mode
						}
						i := 0
						for b.Loop() {
							q := queries[i%len(queries)]
							i++
							var err error
							if mode == "ask" {
								_, err = be.answer(ctx, q, o, 5, nil)
							} else {
								_, err = be.retrieve(ctx, q, o)
							}
							if err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/query")
					})
				}
			})
		}
	}
}
