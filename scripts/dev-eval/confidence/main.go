// Command confidence calibrates the confidence levels of Search's hits on
// the dev sets (scripts/dev-eval) with a held-out split: for every
// question of a set it runs askyourdocs.Search on the set's index (the
// CLI's SQLite index, built-in embedder) and records the top hit's
// evidence (SearchHit's Confidence, ranks, RunnerUp, QuestionKeywords and
// HeadingKeywords) and whether the hit is relevant; questions of the
// next set, asked against this set's index, are the off-corpus questions.
// Each question falls in the calibration or the held-out half by the
// CRC-32 of its id (odd: held out).
//
// On the calibration half it searches a small grid of thresholds of the
// calibrated level's rule (SearchHit.Level) for the setting with the most
// right "high" answers (then right "medium" ones) whose "high" is right at least
// -high of the time on every set and which labels at least -off of every
// set's off-corpus questions low, and prints it beside the
// library's constants. It then prints, per set, the precision (top hit
// relevant) of high, medium and low and the off-corpus low share on the
// held-out half for the library's SearchHit.Level and for the spec's
// thresholds (ConfidenceLabel), the table of docs/serve.md.
//
//	scripts/dev-eval/run   # builds WORK/SET/index and WORK/SET/dataset.json
//	go run ./scripts/dev-eval/confidence -work WORK [-sets octave,cmake,...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

type dataset struct {
	Cases []struct {
		ID       string   `json:"id"`
		Question string   `json:"question"`
		Relevant []string `json:"relevant"`
	} `json:"cases"`
}

// outcome is one question's top hit.
type outcome struct {
	set      string
	off      bool // asked against another manual's index
	heldOut  bool
	ev       evidence
	score    int // SearchHit.Confidence
	level    askyourdocs.ConfidenceLevel
	relevant bool
	none     bool // no hit at all
}

func main() {
	work := flag.String("work", "", "the dev-eval work folder (scripts/dev-eval/run's WORK)")
	sets := flag.String("sets", "octave,cmake,gnucash,mkdocs,zsh,faqlinks,apache,git,snakemake,django,rtd,apachefaq", "comma-separated sets, in the order off-corpus questions rotate (neighbours share no manual: faqlinks has django's and rtd's Django and Scrapy)")
	dim := flag.Int("dim", 1024, "dimension of the built-in embedder (the CLI's default)")
	high := flag.Float64("high", 0.93, "the precision of high the grid demands on every set of the calibration half (above the 0.90 goal, for robustness)")
	offLow := flag.Float64("off", 0.92, "the off-corpus low share the grid demands on every set of the calibration half")
	flag.Parse()
	if err := run(*work, strings.Split(*sets, ","), *dim, *high, *offLow); err != nil {
		fmt.Fprintln(os.Stderr, "confidence:", err)
		os.Exit(1)
	}
}

func load(work, set string) (dataset, error) {
	var ds dataset
	raw, err := os.ReadFile(filepath.Join(work, set, "dataset.json"))
	if err != nil {
		return ds, err
	}
	return ds, json.Unmarshal(raw, &ds)
}

// relevant reports whether url is one of the case's relevant pages (as
// the CLI's eval matches them: equal, or ending in "/"+entry).
func relevant(url string, rel []string) bool {
	for _, r := range rel {
		if url == r || strings.HasSuffix(url, "/"+strings.TrimPrefix(r, "/")) {
			return true
		}
	}
	return false
}

func heldOut(id string) bool { return crc32.ChecksumIEEE([]byte(id))%2 == 1 }

func collect(work string, sets []string, dim int) ([]outcome, error) {
	ctx := context.Background()
	var all []outcome
	for i, set := range sets {
		ds, err := load(work, set)
		if err != nil {
			return nil, err
		}
		off, err := load(work, sets[(i+1)%len(sets)])
		if err != nil {
			return nil, err
		}
		s, err := askyourdocs.NewSQLiteStore(ctx, nil, askyourdocs.NewLocalEmbedder(dim), filepath.Join(work, set, "index", "askyourdocs.db"), &askyourdocs.SQLiteOptions{Name: "askyourdocs"})
		if err != nil {
			return nil, err
		}
		top := func(id, q string, rel []string, isOff bool) error {
			o := outcome{set: set, off: isOff, heldOut: heldOut(id)}
			found, err := askyourdocs.Search(ctx, s, q, &askyourdocs.SearchOptions{K: 1})
			if err != nil {
				return fmt.Errorf("%s %s: %w", set, id, err)
			}
			hits := found.Hits
			if len(hits) == 0 {
				o.none = true
			} else {
				h := hits[0]
				o.ev, o.score, o.level, o.relevant = evidenceOf(h), h.Confidence, h.Level, relevant(h.URL, rel)
			}
			all = append(all, o)
			return nil
		}
		for _, c := range ds.Cases {
			if err := top(c.ID, c.Question, c.Relevant, false); err != nil {
				s.Close()
				return nil, err
			}
		}
		for _, c := range off.Cases {
			if err := top(c.ID, c.Question, nil, true); err != nil {
				s.Close()
				return nil, err
			}
		}
		s.Close()
		fmt.Fprintln(os.Stderr, set, "done")
	}
	return all, nil
}

// rule is the rule of SearchHit.Level (search_confidence_level.go) with
// its thresholds as parameters.
type rule struct {
	highEvidence, highKeywords, longQuestion int
	headingShare                             float64 // of the keywords in the heading
	// fullHeadingVectorRank is the vector rank a long question's hit may
	// have for high when its heading names every keyword (1: no more
	// than any other high).
	fullHeadingVectorRank            int
	mediumEvidence, mediumVectorRank int
}

// library is the rule with the constants of search_confidence_level.go.
var library = rule{highEvidence: 9, highKeywords: 1, longQuestion: 3, headingShare: 0.5, fullHeadingVectorRank: 3, mediumEvidence: 9, mediumVectorRank: 1}

// evidence is what the level of a hit is decided from: the fields of a
// SearchHit that Search's calibrated rule reads.
type evidence struct {
	Evidence, RunnerUp, VectorRank, TextRank, Keywords, HeadingKeywords int
}

// evidenceOf returns the evidence of hit h (zero for a reranked hit, whose
// level the rerank score decides).
func evidenceOf(h askyourdocs.SearchHit) evidence {
	if h.Rerank >= 0 {
		return evidence{}
	}
	return evidence{Evidence: h.Confidence, RunnerUp: h.RunnerUp, VectorRank: h.VectorRank, TextRank: h.TextRank,
		Keywords: h.QuestionKeywords, HeadingKeywords: h.HeadingKeywords}
}

func (r rule) level(e evidence) askyourdocs.ConfidenceLevel {
	if e.TextRank != 1 || e.VectorRank <= 0 {
		return askyourdocs.ConfidenceLow
	}
	heading := e.VectorRank == 1 && float64(e.HeadingKeywords) >= r.headingShare*float64(e.Keywords) ||
		e.VectorRank <= r.fullHeadingVectorRank && e.Keywords >= r.longQuestion && e.HeadingKeywords == e.Keywords
	if heading && e.Evidence >= r.highEvidence && e.Keywords >= r.highKeywords && (e.Keywords >= r.longQuestion || e.Evidence > e.RunnerUp) {
		return askyourdocs.ConfidenceHigh
	}
	maxRank := r.mediumVectorRank
	if e.Keywords < 2 {
		maxRank = 1
	}
	if e.Evidence >= r.mediumEvidence && e.Keywords > 0 && e.VectorRank <= maxRank {
		return askyourdocs.ConfidenceMedium
	}
	return askyourdocs.ConfidenceLow
}

// labelFunc labels an outcome: "high", "medium" or "low".
type labelFunc func(outcome) string

func (r rule) label(o outcome) string {
	if o.none {
		return "low"
	}
	return r.level(o.ev).String()
}

func spec(o outcome) string {
	if o.none {
		return "low"
	}
	return askyourdocs.ConfidenceLabelWithOptions(o.score, false, &askyourdocs.ConversationOptions{Labels: askyourdocs.EnglishLabels})
}

// setStats is one set's figures on one half.
type setStats struct {
	in           int
	n, right     map[string]int // per label
	off, offLow  int
	offFrom, set string
}

func stats(all []outcome, sets []string, half bool, label labelFunc) []setStats {
	var out []setStats
	for i, set := range sets {
		st := setStats{n: map[string]int{}, right: map[string]int{}, set: set, offFrom: sets[(i+1)%len(sets)]}
		for _, o := range all {
			if o.set != set || o.heldOut != half {
				continue
			}
			l := label(o)
			if o.off {
				st.off++
				if l == "low" {
					st.offLow++
				}
				continue
			}
			st.in++
			st.n[l]++
			if o.relevant {
				st.right[l]++
			}
		}
		out = append(out, st)
	}
	return out
}

func (st setStats) precision(l string) float64 {
	if st.n[l] == 0 {
		return 1
	}
	return float64(st.right[l]) / float64(st.n[l])
}

// choose returns the grid's rule with the most right high answers (then
// right medium ones) that meets target on every set of the calibration
// half, and whether one did.
func choose(all []outcome, sets []string, high, offLow float64) (rule, bool) {
	var best rule
	bestHigh, bestMed, found := -1, -1, false
	for _, he := range []int{8, 9, 10} {
		for _, hk := range []int{1, 2, 3} {
			for _, lq := range []int{2, 3, 4} {
				for _, hs := range []float64{0, 0.5, 1} {
					for _, me := range []int{9, 10} {
						for _, mv := range []int{1, 2, 3, 5} {
							for _, fv := range []int{1, 2, 3} {
								r := rule{highEvidence: he, highKeywords: hk, longQuestion: lq, headingShare: hs, fullHeadingVectorRank: fv, mediumEvidence: me, mediumVectorRank: mv}
								ok, nHigh, nMed := true, 0, 0
								for _, st := range stats(all, sets, false, r.label) {
									if st.precision("high") < high || float64(st.offLow) < offLow*float64(st.off) {
										ok = false
										break
									}
									nHigh += st.right["high"]
									nMed += st.right["medium"]
								}
								if ok && (nHigh > bestHigh || nHigh == bestHigh && nMed > bestMed) {
									best, bestHigh, bestMed, found = r, nHigh, nMed, true
								}
							}
						}
					}
				}
			}
		}
	}
	return best, found
}

func cell(st setStats, l string) string {
	if st.n[l] == 0 {
		return "0, –"
	}
	return fmt.Sprintf("%d, %.2f", st.n[l], st.precision(l))
}

func table(title string, all []outcome, sets []string, half bool, label labelFunc) {
	fmt.Println(title)
	fmt.Println()
	fmt.Println("| set | questions | high: n, precision | medium | low | off-corpus low or no hit |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, st := range stats(all, sets, half, label) {
		fmt.Printf("| %s | %d | %s | %s | %s | %.2f (%d q from %s) |\n", st.set, st.in,
			cell(st, "high"), cell(st, "medium"), cell(st, "low"), float64(st.offLow)/float64(max(st.off, 1)), st.off, st.offFrom)
	}
	fmt.Println()
}

func run(work string, sets []string, dim int, high, offLow float64) error {
	all, err := collect(work, sets, dim)
	if err != nil {
		return err
	}
	// The rule here must be the library's: every hit's level agrees.
	for _, o := range all {
		if !o.none && library.level(o.ev) != o.level {
			return fmt.Errorf("the rule of this command differs from SearchHit.Level on %+v: %v vs %v", o.ev, library.level(o.ev), o.level)
		}
	}
	chosen, ok := choose(all, sets, high, offLow)
	if !ok {
		fmt.Printf("no grid setting meets high %.2f / off-corpus %.2f on the calibration half\n\n", high, offLow)
	} else {
		fmt.Printf("chosen on the calibration half (high %.2f, off-corpus %.2f): %+v\nlibrary constants: %+v (same: %v)\n\n", high, offLow, chosen, library, chosen == library)
		if chosen != library {
			table("The grid's choice, held-out half:", all, sets, true, chosen.label)
		}
	}
	table("SearchHit.Level (calibrated), held-out half:", all, sets, true, library.label)
	table("SearchHit.Level (calibrated), calibration half:", all, sets, false, library.label)
	table("The spec's thresholds (ConfidenceLabel: evidence >= 8 high, >= 5 medium), held-out half:", all, sets, true, spec)
	return nil
}
