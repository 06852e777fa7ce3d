// Command grid runs the fusion settings grid of docs/retrieval.md over the
// dev sets: for each question of each set it takes the vector and keyword
// lists (40 each) and the keyword statistics (SearchReport.Keywords) from
// the set's SQLite index built by scripts/dev-eval/run, fuses them with
// every setting of the grid as Search does (ReciprocalRankFusion with the
// setting's weights, the vector weight raised for a weak keyword query as
// FusionOptions says; checked against Search itself on every question
// when the lists are built), scores the first 40 fused chunks as
// `askyourdocs eval` does, and prints per set
// the vector and keyword lists alone and every setting, then the settings
// that keep fusion >= max(vector, keyword) on hit@1, hit@5 and MRR@10 on
// every set, best mean MRR@10 first.
//
//	go run ./scripts/dev-eval/grid -work WORK -sets octave,cmake,gnucash,mkdocs,zsh,apache,git
//
// The lists are cached in WORK/<set>/grid.jsonl (rebuilt when the index is
// newer); -dump writes nothing else but those lines; -extra adds the rules
// tried beside the grid (extra.go).
package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

type dataset struct {
	Cases []struct {
		ID       string   `json:"id"`
		Question string   `json:"question"`
		Relevant []string `json:"relevant"`
	} `json:"cases"`
}

// entry is a listed chunk: its URL and a key of its text (fusion
// deduplicates by text).
type entry [2]string

// line is one question with its lists and statistics.
type line struct {
	ID       string                        `json:"id"`
	Question string                        `json:"question"`
	Relevant []string                      `json:"relevant"`
	Vector   []entry                       `json:"vector"`
	Keyword  []entry                       `json:"keyword"`
	Stats    askyourdocs.KeywordQueryStats `json:"stats"`
	// Demoted are the text keys of the chunks whose score Search
	// multiplies by the release-notes weight for this question
	// (SearchHit.Demoted).
	Demoted []string `json:"demoted"`
	// Version is cacheVersion when the line was built.
	Version int `json:"v"`
}

// cacheVersion changes when line gains what an older cache lacks (2:
// Demoted; 3: Stats.Terms as strings beside Stats.DocFreqs).
const cacheVersion = 3

// releaseNotesWeight is SearchOptions.ReleaseNotesWeight's default, which
// Search applies on the dev indexes.
const releaseNotesWeight = 0.5

const depth = 40

func main() {
	work := flag.String("work", filepath.Join(os.TempDir(), "askyourdocs-dev-eval"), "work folder of scripts/dev-eval/run")
	sets := flag.String("sets", "octave,cmake,gnucash,mkdocs,zsh,apache,git,snakemake,apachefaq,django,rtd,faqlinks,dbindex", "comma-separated set names")
	dim := flag.Int("dim", 1024, "dimension of the built-in embedder (the CLI's default)")
	dump := flag.Bool("dump", false, "only build the cached lists")
	verbose := flag.Bool("v", false, "print every setting's metrics per set")
	extra := flag.Bool("extra", false, "also the rules tried beside the grid (page agreement, long questions; extra.go)")
	flag.Parse()
	ctx := context.Background()
	data := map[string][]line{}
	names := strings.Split(*sets, ",")
	for _, s := range names {
		lines, err := load(ctx, filepath.Join(*work, s), *dim)
		if err != nil {
			fmt.Fprintf(os.Stderr, "grid: %s: %v\n", s, err)
			os.Exit(1)
		}
		data[s] = lines
	}
	if *dump {
		return
	}
	report(names, data, *verbose)
	if *extra {
		extraReport(names, data)
	}
}

// load returns the lines of a set from the cache, building it when the
// index is newer.
func load(ctx context.Context, dir string, dim int) ([]line, error) {
	db := filepath.Join(dir, "index", "askyourdocs.db")
	cache := filepath.Join(dir, "grid.jsonl")
	di, err := os.Stat(db)
	if err != nil {
		return nil, err
	}
	if ci, err := os.Stat(cache); err == nil && ci.ModTime().After(di.ModTime()) {
		// A cache that no longer decodes (an older line format) is rebuilt.
		if lines, err := readCache(cache); err == nil && !stale(lines) {
			return lines, nil
		}
	}
	lines, err := build(ctx, db, filepath.Join(dir, "dataset.json"), dim)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(cache)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, err
	}
	return lines, f.Close()
}

// stale reports a cache of an older version, or one written before
// KeywordQueryStats had its Specificity field: a line with a term found in
// the index and no specificity (a found term always gives one above 0).
func stale(lines []line) bool {
	for _, l := range lines {
		if l.Version != cacheVersion {
			return true
		}
		for _, df := range l.Stats.DocFreqs {
			if df > 0 && l.Stats.Specificity == 0 {
				return true
			}
		}
	}
	return false
}

func readCache(path string) ([]line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []line
	dec := json.NewDecoder(f)
	for dec.More() {
		var l line
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// build computes the lists and statistics of every case on the index.
func build(ctx context.Context, db, dsPath string, dim int) ([]line, error) {
	raw, err := os.ReadFile(dsPath)
	if err != nil {
		return nil, err
	}
	var ds dataset
	if err := json.Unmarshal(raw, &ds); err != nil {
		return nil, fmt.Errorf("%s: %w", dsPath, err)
	}
	s, err := askyourdocs.NewSQLiteStore(ctx, nil, askyourdocs.NewLocalEmbedder(dim), db, &askyourdocs.SQLiteOptions{Name: "askyourdocs"})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	conv := func(docs []*ai.Document) []entry {
		es := make([]entry, len(docs))
		for i, d := range docs {
			url, _ := d.Metadata[askyourdocs.MetaURL].(string)
			h := sha256.Sum256([]byte(askyourdocs.DocText(d)))
			es[i] = entry{url, hex.EncodeToString(h[:8])}
		}
		return es
	}
	var out []line
	for _, c := range ds.Cases {
		vec, err := s.SearchVector(ctx, c.Question, depth, nil)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		kw, err := s.SearchText(ctx, c.Question, depth, nil)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		// Search looks at the keyword statistics of every question the
		// probe setting could count as weak, which every setting of the
		// grid needs (at least one stop word, no quoted phrase), and its
		// ranking must be the grid's fusion of the same lists.
		found, err := askyourdocs.Search(ctx, s, c.Question, &askyourdocs.SearchOptions{K: depth, Depth: depth, Fusion: &probe})
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		hits, rep := found.Hits, found.Report
		l := line{ID: c.ID, Question: c.Question, Relevant: c.Relevant, Vector: conv(vec), Keyword: conv(kw), Stats: rep.Keywords, Version: cacheVersion}
		// Whether Search demotes a chunk depends on the chunk and the
		// question alone: a search in each list's mode returns every chunk
		// of that list with its Demoted.
		for _, mode := range []askyourdocs.SearchMode{askyourdocs.SearchModeVector, askyourdocs.SearchModeKeyword} {
			one, err := askyourdocs.Search(ctx, s, c.Question, &askyourdocs.SearchOptions{K: depth, Depth: depth, Mode: mode, Fusion: &probe})
			if err != nil {
				return nil, fmt.Errorf("case %s: %w", c.ID, err)
			}
			for _, h := range one.Hits {
				k := sha256.Sum256([]byte(h.Text))
				if key := hex.EncodeToString(k[:8]); h.Demoted && !slices.Contains(l.Demoted, key) {
					l.Demoted = append(l.Demoted, key)
				}
			}
		}
		if got, want := searchURLs(hits), fuse(l, probe); !slices.Equal(got, want) {
			return nil, fmt.Errorf("case %s: the grid's fusion differs from Search's:\n%q\n%q", c.ID, want, got)
		}
		out = append(out, l)
	}
	return out, nil
}

// probe is the setting build searches with: the chosen one, counting a
// question with a single stop word as weak when its keywords are common.
var probe = func() askyourdocs.FusionOptions {
	f := chosen
	f.WeakStopWords = 1
	return f
}()

// searchURLs returns the URLs of Search's hits.
func searchURLs(hits []askyourdocs.SearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.URL
	}
	return out
}

// docs turns entries back into documents whose text is the key.
func docs(es []entry) []*ai.Document {
	out := make([]*ai.Document, len(es))
	for i, e := range es {
		out[i] = ai.DocumentFromText(e[1], map[string]any{askyourdocs.MetaURL: e[0]})
	}
	return out
}

// relevantKey maps a URL to the relevant entry it matches (as the CLI's
// eval does).
func relevantKey(url string, relevant []string) string {
	for _, r := range relevant {
		if url == r || strings.HasSuffix(url, "/"+strings.TrimPrefix(r, "/")) {
			return r
		}
	}
	return url
}

func metrics(lines []line, rank func(l line) []string) askyourdocs.RetrievalMetrics {
	cases := make([]askyourdocs.RetrievalCase, len(lines))
	for i, l := range lines {
		urls := rank(l)
		ranked := make([]string, len(urls))
		for j, u := range urls {
			ranked[j] = relevantKey(u, l.Relevant)
		}
		cases[i] = askyourdocs.RetrievalCase{Ranked: ranked, Relevant: l.Relevant}
	}
	return askyourdocs.EvaluateRetrieval(cases)
}

// single ranks one list of a line as Search does in that list's mode:
// its order, with the chunks Search demoted (release notes) scored by
// releaseNotesWeight times their reciprocal rank share.
func single(l line, es []entry) []string {
	return rankFused(l, []askyourdocs.RankedList{{Docs: docs(es), Weight: 1}}, chosen.RRFK)
}

// rankFused fuses lists with reciprocal rank fusion (k), multiplies the
// score of every chunk of l.Demoted by releaseNotesWeight, and returns
// the URLs of the first depth in score order (stable) as Search does.
func rankFused(l line, lists []askyourdocs.RankedList, k int) []string {
	hits := askyourdocs.ReciprocalRankFusion(lists, k, 0)
	for i := range hits {
		if slices.Contains(l.Demoted, hits[i].Text) {
			hits[i].Score *= releaseNotesWeight
		}
	}
	slices.SortStableFunc(hits, func(a, b askyourdocs.FusedDoc) int { return cmp.Compare(b.Score, a.Score) })
	out := make([]string, 0, depth)
	for _, h := range hits[:min(depth, len(hits))] {
		u, _ := h.Doc.Metadata[askyourdocs.MetaURL].(string)
		out = append(out, u)
	}
	return out
}

// fuse ranks a line with setting f as Search does: weighted reciprocal
// rank fusion of the vector and the keyword list (in that order for
// ties), the vector list weighted by WeakVectorWeight for a weak keyword
// query, demoted chunks' scores multiplied by releaseNotesWeight.
func fuse(l line, f askyourdocs.FusionOptions) []string {
	wv := f.VectorWeight
	if isWeak(f, l.Stats) {
		wv = f.WeakVectorWeight
	}
	var lists []askyourdocs.RankedList
	if len(l.Vector) > 0 {
		lists = append(lists, askyourdocs.RankedList{Docs: docs(l.Vector), Weight: wv})
	}
	if len(l.Keyword) > 0 {
		lists = append(lists, askyourdocs.RankedList{Docs: docs(l.Keyword), Weight: f.TextWeight})
	}
	return rankFused(l, lists, f.RRFK)
}

// isWeak is FusionOptions' weak keyword query: an adaptive setting, no
// quoted phrase, at least WeakStopWords stop words and a Specificity
// below WeakSpecificity. The grid's settings set every field, so no
// defaults apply.
func isWeak(f askyourdocs.FusionOptions, st askyourdocs.KeywordQueryStats) bool {
	return f.WeakVectorWeight > 0 && st.Chunks > 0 && st.Phrases == 0 && st.StopWords >= f.WeakStopWords && st.Specificity < f.WeakSpecificity
}

func triple(m askyourdocs.RetrievalMetrics) [3]float64 {
	return [3]float64{m.HitAt1, m.HitAt5, m.MRRAt10}
}

func row(m askyourdocs.RetrievalMetrics) string {
	return fmt.Sprintf("%.3f %.3f %.3f %.3f", m.HitAt1, m.HitAt5, m.MRRAt10, m.NDCGAt10)
}

func report(names []string, data map[string][]line, verbose bool) {
	grid := settings()
	type res struct{ vec, kw [3]float64 }
	base := map[string]res{}
	all := map[string][]askyourdocs.RetrievalMetrics{}
	for _, s := range names {
		lines := data[s]
		v := metrics(lines, func(l line) []string { return single(l, l.Vector) })
		k := metrics(lines, func(l line) []string { return single(l, l.Keyword) })
		base[s] = res{triple(v), triple(k)}
		for _, g := range grid {
			all[s] = append(all[s], metrics(lines, func(l line) []string { return fuse(l, g) }))
		}
		if !verbose {
			continue
		}
		fmt.Printf("%s (%d questions)%*s hit@1 hit@5 MRR@10 nDCG@10\n", s, len(lines), 44-len(s), "")
		fmt.Printf("  %-58s %s\n", "vector", row(v))
		fmt.Printf("  %-58s %s\n", "keyword", row(k))
		for i, g := range grid {
			fmt.Printf("  %-58s %s\n", label(g), row(all[s][i]))
		}
	}
	type scored struct {
		mean float64
		fail string // the first set and metric below the better list, "" when none
		i    int
	}
	var out []scored
	for i := range grid {
		sc := scored{i: i}
		for _, s := range names {
			m := triple(all[s][i])
			for j, name := range []string{"hit@1", "hit@5", "MRR@10"} {
				if m[j] < max(base[s].vec[j], base[s].kw[j])-1e-9 && sc.fail == "" {
					sc.fail = fmt.Sprintf("%s %s %.3f < %.3f", s, name, m[j], max(base[s].vec[j], base[s].kw[j]))
				}
			}
			sc.mean += m[2] / float64(len(names))
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if (a.fail == "") != (b.fail == "") {
			if a.fail == "" {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.mean, a.mean)
	})
	fmt.Printf("%d settings; vector / keyword alone, hit@1 hit@5 MRR@10:\n", len(grid))
	for _, s := range names {
		fmt.Printf("  %-10s vector %.3f %.3f %.3f  keyword %.3f %.3f %.3f\n", s, base[s].vec[0], base[s].vec[1], base[s].vec[2], base[s].kw[0], base[s].kw[1], base[s].kw[2])
	}
	passing := 0
	for _, sc := range out {
		if sc.fail == "" {
			passing++
		}
	}
	fmt.Printf("%d of %d settings with fusion >= max(vector, keyword) on hit@1, hit@5 and MRR@10 on every set, best mean MRR@10 first (fusion MRR@10 per set):\n", passing, len(grid))
	shown := 0
	for _, sc := range out {
		if sc.fail != "" || shown == 15 {
			continue
		}
		shown++
		fmt.Printf("  %-58s mean %.4f |", label(grid[sc.i]), sc.mean)
		for _, s := range names {
			fmt.Printf(" %s %.3f", s, all[s][sc.i].MRRAt10)
		}
		fmt.Println()
	}
	if shown == 0 {
		fmt.Println("  none")
	}
	fmt.Println("best settings that fail, and where:")
	shown = 0
	for _, sc := range out {
		if sc.fail == "" || shown == 10 {
			continue
		}
		shown++
		fmt.Printf("  %-58s mean %.4f: %s\n", label(grid[sc.i]), sc.mean, sc.fail)
	}
	weakReport(names, data)
}

// chosen is the setting Search uses on the dev indexes: the built-in
// embedder's defaults.
var chosen = askyourdocs.FusionDefaults(askyourdocs.NewLocalEmbedder(1024).Name())

// weakReport prints, per set, the questions the chosen setting counts as
// weak keyword queries and the metrics of the lists and of fusion on them.
func weakReport(names []string, data map[string][]line) {
	fmt.Printf("weak keyword queries under the defaults (%s), hit@1 hit@5 MRR@10 nDCG@10:\n", label(chosen))
	for _, s := range names {
		var weak []line
		for _, l := range data[s] {
			if isWeak(chosen, l.Stats) {
				weak = append(weak, l)
			}
		}
		fmt.Printf("  %-10s %4d of %4d", s, len(weak), len(data[s]))
		if len(weak) == 0 {
			fmt.Println()
			continue
		}
		v := metrics(weak, func(l line) []string { return single(l, l.Vector) })
		k := metrics(weak, func(l line) []string { return single(l, l.Keyword) })
		base := metrics(weak, func(l line) []string { return fuse(l, nonAdaptive(chosen)) })
		f := metrics(weak, func(l line) []string { return fuse(l, chosen) })
		fmt.Printf("  vector %s | keyword %s | fusion without weak weighting %s | fusion %s\n", row(v), row(k), row(base), row(f))
	}
}

func nonAdaptive(f askyourdocs.FusionOptions) askyourdocs.FusionOptions {
	f.WeakVectorWeight, f.WeakSpecificity, f.WeakStopWords = 0, 0, 0
	return f
}

// settings is the grid: textbook-shaped fusion over k and the vector
// weight (keyword weight 1), then the same with a weak-query vector
// weight for the question shapes of FusionOptions.Weak.
func settings() []askyourdocs.FusionOptions {
	var out []askyourdocs.FusionOptions
	for _, k := range []int{2, 5, 10, 20, 60} {
		for _, wv := range []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1} {
			out = append(out, askyourdocs.FusionOptions{RRFK: k, VectorWeight: wv, TextWeight: 1})
		}
	}
	for _, k := range []int{2, 5, 10} {
		for _, wv := range []float64{0.005, 0.01, 0.02, 0.05, 0.1} {
			for _, ww := range []float64{0.5, 1, 2, 3} {
				for _, stops := range []int{1, 2, 3} {
					for _, spec := range []float64{0.3, 0.4, 0.5, 0.6} {
						out = append(out, askyourdocs.FusionOptions{RRFK: k, VectorWeight: wv, TextWeight: 1,
							WeakVectorWeight: ww, WeakStopWords: stops, WeakSpecificity: spec})
					}
				}
			}
		}
	}
	return out
}

func label(f askyourdocs.FusionOptions) string {
	s := fmt.Sprintf("k=%d wv=%g", f.RRFK, f.VectorWeight)
	if f.WeakVectorWeight > 0 {
		s += fmt.Sprintf(" weak: wv=%g if stops>=%d, specificity<%g", f.WeakVectorWeight, f.WeakStopWords, f.WeakSpecificity)
	}
	return s
}
