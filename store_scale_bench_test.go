package engine

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	scaleSizes   = flag.String("scale-sizes", "10000,100000", "BenchmarkScale: index sizes in chunks (issue 37 runs 10000,100000,1000000)")
	scalePGSizes = flag.String("scale-pg-sizes", "10000,100000", "BenchmarkScale: PgvecStore sizes (with ASKYOURDOCS_TEST_DSN; empty: none)")
	scaleDir     = flag.String("scale-dir", "", "BenchmarkScale: where the SQLite indexes go (default: a temporary directory)")
)

// scaleDim is the dimension of BenchmarkScale's built-in embedder.
const scaleDim = 384

// scaleTexts returns n distinct chunks of real text: realTextChunks, and
// past what /usr/share/doc holds, the same chunks again with their
// sentences rotated and a revision line, so that every chunk differs.
func scaleTexts(n int) []string {
	base := realTextChunks(n)
	if len(base) == 0 {
		return nil
	}
	out := slices.Clone(base)
	for i := len(base); i < n; i++ {
		t := base[i%len(base)]
		round := i / len(base)
		s := SplitSentences(t)
		if len(s) > 1 {
			k := round % len(s)
			s = append(s[k:], s[:k]...)
		}
		out = append(out, fmt.Sprintf("Revision %d. %s", round, strings.Join(s, " ")))
	}
	return out
}

// scaleQuestions are 50 questions made of the words of chunks spread over
// the index (the first six of a chunk's words).
func scaleQuestions(texts []string) []string {
	q := make([]string, 50)
	for i := range q {
		w := strings.Fields(texts[(i*7919)%len(texts)])
		q[i] = strings.Join(w[:min(6, len(w))], " ")
	}
	return q
}

// scalePeakRSS is the process's peak resident set in MB (VmHWM).
func scalePeakRSS() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// scaleFusion runs every question through Search (fusion, k 10) and
// returns the p50 and p95 in ms.
func scaleFusion(b *testing.B, s Searcher, questions []string) (p50, p95 float64) {
	b.Helper()
	var lat []time.Duration
	for _, q := range questions {
		t0 := time.Now()
		if _, err := searchHits(Search(b.Context(), s, q, &SearchOptions{K: 10})); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[len(lat)/2]), ms(lat[len(lat)*95/100])
}

// BenchmarkScale builds an index of each -scale-sizes size (real text from
// /usr/share/doc, varied past what it holds; the built-in embedder at 384
// dimensions) into SQLiteStore and, with ASKYOURDOCS_TEST_DSN, of each
// -scale-pg-sizes size into PgvecStore (HNSW), and reports per size: index
// time, chunks/s, size on disk, the process's peak RSS so far, warm fusion
// p50/p95 over 50 questions, and for SQLite a cold `askyourdocs search` in
// a new process (wall time, max RSS). On demand, not in CI:
//
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x -timeout 6h \
//	    -scale-sizes 10000,100000,1000000 -scale-dir /tmp/scale .
func BenchmarkScale(b *testing.B) {
	sizes := scaleParse(b, *scaleSizes)
	pgSizes := scaleParse(b, *scalePGSizes)
	largest := slices.Max(append(slices.Clone(sizes), pgSizes...))
	texts := scaleTexts(largest)
	if len(texts) < largest {
		b.Skipf("only %d chunks of real text under /usr/share/doc", len(texts))
	}
	emb := NewLocalEmbedder(scaleDim)
	dir := *scaleDir
	if dir == "" {
		dir = b.TempDir()
	}
	cli := filepath.Join(dir, "askyourdocs")
	if out, err := exec.Command("go", "build", "-o", cli, "./cmd/askyourdocs").CombinedOutput(); err != nil {
		b.Fatalf("build the CLI: %v\n%s", err, out)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("sqlite/chunks=%d", n), func(b *testing.B) {
			data := filepath.Join(dir, fmt.Sprintf("sqlite-%d", n))
			for b.Loop() {
				os.RemoveAll(data)
				if err := os.MkdirAll(data, 0o755); err != nil {
					b.Fatal(err)
				}
				s, err := NewSQLiteStore(b.Context(), nil, emb, filepath.Join(data, "askyourdocs.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				f := FusionDefaults(emb.Name())
				if _, _, err := s.recordIndexInfo(b.Context(), IndexInfo{Embedder: emb.Name(), Dim: scaleDim, Fusion: &f}); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := IndexInBatches(b.Context(), s, sqliteBenchDocs(texts[:n]), nil); err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				b.ReportMetric(took.Seconds(), "index_s")
				b.ReportMetric(float64(n)/took.Seconds(), "chunks/s")
				p50, p95 := scaleFusion(b, s, scaleQuestions(texts[:n]))
				b.ReportMetric(p50, "warm_p50_ms")
				b.ReportMetric(p95, "warm_p95_ms")
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(scaleDirMB(data), "disk_MB")
				b.ReportMetric(scalePeakRSS(), "peak_RSS_MB")
				wall, rss := scaleColdSearch(b, cli, data, scaleQuestions(texts[:n])[7])
				b.ReportMetric(wall, "cold_search_ms")
				b.ReportMetric(rss, "cold_search_RSS_MB")
			}
		})
	}
	if len(pgSizes) == 0 || os.Getenv("ASKYOURDOCS_TEST_DSN") == "" {
		return
	}
	for _, n := range pgSizes {
		b.Run(fmt.Sprintf("pgvector/chunks=%d", n), func(b *testing.B) {
			for b.Loop() {
				s := pgTestStoreWith(b, emb, scaleDim, &PgvecOptions{TextSearchConfig: "english"})
				start := time.Now()
				err := s.Bulk(b.Context(), func(bt VectorStore) error { return IndexInBatches(b.Context(), bt, sqliteBenchDocs(texts[:n]), nil) })
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				b.ReportMetric(took.Seconds(), "index_s")
				b.ReportMetric(float64(n)/took.Seconds(), "chunks/s")
				var size int64
				if err := s.Pool.QueryRow(b.Context(), `SELECT pg_total_relation_size($1::regclass) + pg_total_relation_size($2::regclass) + pg_total_relation_size($3::regclass)`,
					pgvecIdent(s.names.table), pgvecIdent(s.names.kw), pgvecIdent(s.names.kwDF)).Scan(&size); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(size)/(1<<20), "disk_MB")
				scaleFusion(b, s, scaleQuestions(texts[:n])[:5]) // warm the caches
				p50, p95 := scaleFusion(b, s, scaleQuestions(texts[:n]))
				b.ReportMetric(p50, "warm_p50_ms")
				b.ReportMetric(p95, "warm_p95_ms")
			}
		})
	}
}

func scaleParse(b *testing.B, list string) []int {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1000 {
			b.Fatalf("size %q: want a number of chunks >= 1000", f)
		}
		out = append(out, n)
	}
	return out
}

// scaleDirMB is the size of the files in dir, in MB.
func scaleDirMB(dir string) float64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return float64(n) / (1 << 20)
}

// scaleColdSearch runs `askyourdocs search` on the index in data in a new
// process (the page cache warm from the build) and returns its wall time
// in ms and max RSS in MB. The RSS is read by /usr/bin/time (Debian's
// time package): a direct child of this process reports this process's
// peak as its own (Linux keeps the peak of the address space a vfork
// child shared until exec).
func scaleColdSearch(b *testing.B, cli, data, q string) (wall, rssMB float64) {
	b.Helper()
	cmd := exec.Command("/usr/bin/time", "-f", "%M", cli, "search", "--data", data, q)
	cmd.Env = append(os.Environ(), "EMBEDDING_DIM="+strconv.Itoa(scaleDim))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("/usr/bin/time askyourdocs search: %v\n%s", err, stderr.String())
	}
	wall = float64(time.Since(start).Microseconds()) / 1000
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	kb, err := strconv.Atoi(strings.TrimSpace(lines[len(lines)-1]))
	if err != nil {
		b.Fatalf("/usr/bin/time printed %q", stderr.String())
	}
	return wall, float64(kb) / 1024
}

// BenchmarkScaleSearch opens each SQLite index BenchmarkScale left in
// -scale-dir (sqlite-N) and times 50 questions per search mode, warm, so
// that the list that costs shows: fusion, vector only, keyword only (p50
// and p95 in ms). With -cpuprofile it is the profile of those searches.
//
//	go test -run '^$' -bench BenchmarkScaleSearch -benchtime 1x -scale-dir /tmp/scale -cpuprofile /tmp/scale.prof .
func BenchmarkScaleSearch(b *testing.B) {
	if *scaleDir == "" {
		b.Skip("-scale-dir names the directory BenchmarkScale built its indexes in")
	}
	emb := NewLocalEmbedder(scaleDim)
	for _, n := range scaleParse(b, *scaleSizes) {
		path := filepath.Join(*scaleDir, fmt.Sprintf("sqlite-%d", n), "askyourdocs.db")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		questions := scaleQuestions(realTextChunks(min(n, 50*7919)))
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			s, err := NewSQLiteStore(b.Context(), nil, emb, path, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				for _, mode := range []SearchMode{SearchModeFusion, SearchModeVector, SearchModeKeyword} {
					var lat []time.Duration
					for _, q := range questions {
						t0 := time.Now()
						if _, err := searchHits(Search(b.Context(), s, q, &SearchOptions{K: 10, Mode: mode})); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
					}
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, string(mode)+"_p50_ms")
					b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, string(mode)+"_p95_ms")
				}
			}
		})
	}
}
