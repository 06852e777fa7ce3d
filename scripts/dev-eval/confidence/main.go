// Command confidence calibrates the confidence levels of Search's hits on
// the dev sets (scripts/dev-eval): for every question of a set it runs
// askyourdocs.Search on the set's index (the CLI's SQLite index, built-in
// embedder) and records the top hit's evidence score and whether the hit
// is relevant; questions of the next set, asked against this set's index,
// are the off-corpus questions. It prints, per set, the precision (top hit
// relevant) of each level under the spec's thresholds (ConfidenceLabel)
// and under CalibratedConfidence, the share of off-corpus questions below
// medium, and the precision of every score, the table of docs/serve.md.
//
//	scripts/dev-eval/run   # builds WORK/SET/index and WORK/SET/dataset.json
//	go run ./scripts/dev-eval/confidence -work WORK [-sets octave,cmake,gnucash,mkdocs]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
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
	score    int
	level    askyourdocs.ConfidenceLevel
	relevant bool
	none     bool // no hit at all
}

func main() {
	work := flag.String("work", "", "the dev-eval work folder (scripts/dev-eval/run's WORK)")
	sets := flag.String("sets", "octave,cmake,gnucash,mkdocs", "comma-separated sets, in the order off-corpus questions rotate")
	dim := flag.Int("dim", 1024, "dimension of the built-in embedder (the CLI's default)")
	flag.Parse()
	if err := run(*work, strings.Split(*sets, ","), *dim); err != nil {
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

func run(work string, sets []string, dim int) error {
	ctx := context.Background()
	fmt.Println("| set | questions | spec high: n, precision | spec medium | spec low | calibrated high: n, precision | calibrated medium | calibrated low | off-corpus low or no hit (spec / calibrated) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	perScore := map[int][2]int{} // score -> relevant, all (in-corpus, all sets)
	for i, set := range sets {
		ds, err := load(work, set)
		if err != nil {
			return err
		}
		off, err := load(work, sets[(i+1)%len(sets)])
		if err != nil {
			return err
		}
		s, err := askyourdocs.NewSQLiteStore(ctx, nil, askyourdocs.NewLocalEmbedder(dim), filepath.Join(work, set, "index", "askyourdocs.db"), &askyourdocs.SQLiteOptions{Name: "askyourdocs"})
		if err != nil {
			return err
		}
		top := func(q string, rel []string) (outcome, error) {
			hits, err := askyourdocs.Search(ctx, s, q, &askyourdocs.SearchOptions{K: 1})
			if err != nil || len(hits) == 0 {
				return outcome{none: true}, err
			}
			h := hits[0]
			return outcome{score: h.Confidence, level: h.Level, relevant: relevant(h.URL, rel)}, nil
		}
		var in []outcome
		for _, c := range ds.Cases {
			o, err := top(c.Question, c.Relevant)
			if err != nil {
				s.Close()
				return fmt.Errorf("%s %s: %w", set, c.ID, err)
			}
			in = append(in, o)
			ps := perScore[o.score]
			ps[1]++
			if o.relevant {
				ps[0]++
			}
			perScore[o.score] = ps
		}
		var offc []outcome
		for _, c := range off.Cases {
			o, err := top(c.Question, nil)
			if err != nil {
				s.Close()
				return fmt.Errorf("%s off-corpus %s: %w", set, c.ID, err)
			}
			offc = append(offc, o)
		}
		s.Close()
		spec := func(o outcome) string {
			if o.none {
				return "low"
			}
			return askyourdocs.LabelConfidence(o.score, false, &askyourdocs.ConversationOptions{Labels: askyourdocs.EnglishLabels})
		}
		cal := func(o outcome) string {
			if o.none {
				return "low"
			}
			return o.level.String()
		}
		cell := func(os []outcome, label func(outcome) string, want string) string {
			n, r := 0, 0
			for _, o := range os {
				if label(o) == want {
					n++
					if o.relevant {
						r++
					}
				}
			}
			if n == 0 {
				return "0, –"
			}
			return fmt.Sprintf("%d, %.2f", n, float64(r)/float64(n))
		}
		lowShare := func(label func(outcome) string) string {
			n := 0
			for _, o := range offc {
				if label(o) == "low" {
					n++
				}
			}
			return fmt.Sprintf("%.2f", float64(n)/float64(len(offc)))
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s / %s (%d q from %s) |\n", set, len(in),
			cell(in, spec, "high"), cell(in, spec, "medium"), cell(in, spec, "low"),
			cell(in, cal, "high"), cell(in, cal, "medium"), cell(in, cal, "low"),
			lowShare(spec), lowShare(cal), len(offc), sets[(i+1)%len(sets)])
	}
	fmt.Println()
	fmt.Println("| evidence score | questions (all sets) | top hit relevant |")
	fmt.Println("|---|---|---|")
	for sc := 10; sc >= 0; sc-- {
		if ps := perScore[sc]; ps[1] > 0 {
			fmt.Printf("| %d | %d | %.2f |\n", sc, ps[1], float64(ps[0])/float64(ps[1]))
		}
	}
	return nil
}
