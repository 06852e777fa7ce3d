package engine

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

var (
	sqliteBenchDir    = flag.String("sqlite-bench-dir", "", "directory of the BenchmarkSQLiteScale index (kept and reused; default: a temporary one)")
	sqliteBenchChunks = flag.Int("sqlite-bench-chunks", 100000, "chunks in the BenchmarkSQLiteScale index")
)

// sqliteBenchDim is the dimension of the scale benchmark: the CLI's.
const sqliteBenchDim = 1024

// realTextChunks returns n distinct chunks of about 800 characters of real
// English text: the plain and gzipped text files under /usr/share/doc
// (change logs, READMEs, copyright files), split at white space, with
// duplicate chunks dropped. It returns fewer when there is not enough text.
func realTextChunks(n int) []string {
	var out []string
	seen := make(map[[32]byte]bool)
	var cur strings.Builder
	emit := func() {
		t := strings.TrimSpace(cur.String())
		cur.Reset()
		if len(t) < 200 {
			return
		}
		h := sha256.Sum256([]byte(t))
		if !seen[h] {
			seen[h] = true
			out = append(out, t)
		}
	}
	filepath.WalkDir("/usr/share/doc", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || len(out) >= n {
			if len(out) >= n {
				return fs.SkipAll
			}
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(p, ".gz") {
			gz, err := gzip.NewReader(f)
			if err != nil {
				return nil
			}
			r = gz
		} else if strings.Contains(filepath.Base(p), ".") && !strings.HasSuffix(p, ".txt") {
			return nil
		}
		sc := bufio.NewScanner(io.LimitReader(r, 4<<20))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() && len(out) < n {
			line := sc.Text()
			if !isPrintableText(line) {
				return nil
			}
			for _, w := range strings.Fields(line) {
				cur.WriteString(w)
				cur.WriteByte(' ')
			}
			if cur.Len() >= 800 {
				emit()
			}
		}
		return nil
	})
	return out
}

// isPrintableText reports whether line looks like text (no NUL bytes).
func isPrintableText(line string) bool { return !strings.ContainsRune(line, 0) }

// sqliteBenchDocs returns the benchmark's documents: 20 chunks per "file".
func sqliteBenchDocs(texts []string) []*ai.Document {
	docs := make([]*ai.Document, len(texts))
	for i, t := range texts {
		docs[i] = ai.DocumentFromText(t, map[string]any{
			MetaURL:    fmt.Sprintf("/bench/doc%05d.html", i/20),
			MetaSource: fmt.Sprintf("/bench/doc%05d.html", i/20),
		})
	}
	return docs
}

// writeBenchPages writes 500 HTML pages of real text (6 paragraphs each)
// into dir, for the CLI's folder benchmarks (scripts/bench-stores).
func writeBenchPages(dir string, texts []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for p := range 500 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "<html><head><title>Page %d</title></head><body><h1>Page %d</h1>\n", p, p)
		for j := range 6 {
			fmt.Fprintf(&sb, "<p>%s</p>\n", html.EscapeString(texts[(p*6+j)%len(texts)]))
		}
		sb.WriteString("</body></html>\n")
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("page%03d.html", p)), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkSQLiteScale measures SQLiteStore at 100k chunks x 1024
// dimensions of real text with the built-in embedder (the CLI's setup; see
// docs/stores.md and scripts/bench-stores): building the index, a warm
// query against a plain multi-goroutine float32 dot-product scan of the
// same matrix, the first query of a newly opened store, Sources, keyword
// search and replacing one changed 20-chunk file. The index is written as
// <dir>/askyourdocs.db with the CLI's manifest, so the CLI can be timed on
// it, and 500 HTML pages of the same text go to <dir>/pages.
func BenchmarkSQLiteScale(b *testing.B) {
	ctx := context.Background()
	dir := *sqliteBenchDir
	if dir == "" {
		dir = b.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	texts := realTextChunks(*sqliteBenchChunks)
	if len(texts) < *sqliteBenchChunks {
		b.Logf("only %d chunks of real text under /usr/share/doc", len(texts))
	}
	if err := writeBenchPages(filepath.Join(dir, "pages"), texts); err != nil {
		b.Fatal(err)
	}
	emb := NewLocalEmbedder(sqliteBenchDim)
	path := filepath.Join(dir, "askyourdocs.db")
	docs := sqliteBenchDocs(texts)

	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			os.Remove(path)
			os.Remove(path + ".vectors")
			s, err := NewSQLiteStore(ctx, nil, emb, path, nil)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := IndexInBatches(ctx, s, docs, nil); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(docs))/time.Since(start).Seconds(), "chunks/s")
		}
		m, _ := json.Marshal(map[string]any{"embedder": localEmbedderName(sqliteBenchDim), "dim": sqliteBenchDim, "created": time.Now().UTC().Truncate(time.Second)})
		if err := os.WriteFile(filepath.Join(dir, "askyourdocs-index.json"), m, 0o644); err != nil {
			b.Fatal(err)
		}
		fi, _ := os.Stat(path)
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB-db")
	})

	queries := make([]*ai.Document, 32)
	for i := range queries {
		w := strings.Fields(texts[(i*7919)%len(texts)])
		queries[i] = ai.DocumentFromText(strings.Join(w[:min(6, len(w))], " "), nil)
	}
	b.Run("open+first-query", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s, err := NewSQLiteStore(ctx, nil, emb, path, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.retrieveDoc(ctx, queries[i%len(queries)], 10); err != nil {
				b.Fatal(err)
			}
			s.Close()
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/op")
	})

	s, err := NewSQLiteStore(ctx, nil, emb, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("query-warm", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.retrieveDoc(ctx, queries[i%len(queries)], 10); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/query")
	})

	// The baseline: a plain float32 scan of the same vectors, one part of
	// the rows per CPU, query embedding included as in Retrieve.
	b.Run("scan-float32-baseline", func(b *testing.B) {
		var mat []float32
		rows, err := s.DB().QueryContext(ctx, `SELECT vec FROM chunks`)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var v []byte
			rows.Scan(&v)
			mat = append(mat, sqliteDecodeVec(v)...)
		}
		rows.Close()
		n := len(mat) / sqliteBenchDim
		i := 0
		for b.Loop() {
			vecs, err := embedChecked(ctx, emb, []*ai.Document{queries[i%len(queries)]}, 0)
			if err != nil {
				b.Fatal(err)
			}
			q := vecs[0]
			parts := runtime.GOMAXPROCS(0)
			best := make([]float32, parts)
			var wg sync.WaitGroup
			for p := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := p * n / parts; r < (p+1)*n/parts; r++ {
						best[p] = max(best[p], localvecDot(q, mat[r*sqliteBenchDim:(r+1)*sqliteBenchDim]))
					}
				}()
			}
			wg.Wait()
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/query")
	})

	b.Run("sources", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.Sources(ctx); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/op")
	})

	b.Run("keyword", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.keywordSearch(ctx, DocText(queries[i%len(queries)]), 10, nil, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/query")
	})

	// One file (20 chunks) changes one chunk: the source diff embeds one
	// chunk and rewrites two rows in one transaction.
	b.Run("replace-one-changed-file", func(b *testing.B) {
		base := docs[len(docs)-20:]
		i := 0
		for b.Loop() {
			changed := make([]*ai.Document, len(base))
			copy(changed, base)
			changed[3] = ai.DocumentFromText(DocText(base[3])+fmt.Sprintf(" (edit %d)", i), base[3].Metadata)
			url := metaString(base[0].Metadata, MetaURL)
			if _, _, err := s.replaceSource(ctx, replaceScope{urls: []string{url}}, changed, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(i)/1000, "ms/op")
	})
}
