package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// evalDataset is the file eval reads: questions with the documents (file
// paths or URLs) that answer them. A bare JSON array of cases is accepted
// too.
type evalDataset struct {
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	Cases       []evalCase `json:"cases"`
}

// evalCase is one question. A relevant entry matches an indexed document
// whose url equals it or ends with "/" + it, so a dataset can name files
// relative to the indexed folder.
type evalCase struct {
	ID       string   `json:"id,omitempty"`
	Question string   `json:"question"`
	Relevant []string `json:"relevant"`
}

// loadEvalDataset reads and checks a dataset file.
func loadEvalDataset(path string) (*evalDataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	ds := &evalDataset{}
	trimmed := strings.TrimSpace(string(b))
	if strings.HasPrefix(trimmed, "[") {
		err = json.Unmarshal(b, &ds.Cases)
	} else {
		err = json.Unmarshal(b, ds)
	}
	if err != nil {
		return nil, fmt.Errorf("parse dataset %s: %w", path, err)
	}
	if len(ds.Cases) == 0 {
		return nil, fmt.Errorf("dataset %s has no cases", path)
	}
	for i, c := range ds.Cases {
		if strings.TrimSpace(c.Question) == "" || len(c.Relevant) == 0 {
			return nil, fmt.Errorf("dataset %s: case %d needs a question and at least one relevant document", path, i+1)
		}
	}
	return ds, nil
}

// relevantKey maps a retrieved document's url to the relevant entry it
// matches, or returns it unchanged.
func relevantKey(url string, relevant []string) string {
	for _, r := range relevant {
		if url == r || strings.HasSuffix(url, "/"+strings.TrimPrefix(r, "/")) {
			return r
		}
	}
	return url
}

// evalModeResult is the metrics of one retriever.
type evalModeResult struct {
	Mode    string                       `json:"mode"`
	Metrics askyourdocs.RetrievalMetrics `json:"metrics"`
	Misses  []string                     `json:"misses,omitempty"`
	// fusion is the fusion setting Search reported (the index's unless a
	// flag set it).
	fusion askyourdocs.FusionOptions
}

// evaluate runs every case of ds through the retriever o and computes the
// metrics. Each case ranks the distinct documents of the top o.top chunks.
func (b *backend) evaluate(ctx context.Context, ds *evalDataset, o retrieveOptions) (evalModeResult, error) {
	cases := make([]askyourdocs.RetrievalCase, len(ds.Cases))
	var misses []string
	var fusion askyourdocs.FusionOptions
	for i, c := range ds.Cases {
		start := time.Now()
		res, err := b.retrieve(ctx, c.Question, o)
		if err != nil {
			return evalModeResult{}, fmt.Errorf("case %d (%q): %w", i+1, c.Question, err)
		}
		lat := time.Since(start)
		fusion = res.fusion
		ranked := make([]string, len(res.hits))
		for j, h := range res.hits {
			ranked[j] = relevantKey(h.meta(askyourdocs.MetaURL), c.Relevant)
		}
		cases[i] = askyourdocs.RetrievalCase{Ranked: ranked, Relevant: c.Relevant, Latency: lat}
		if askyourdocs.EvaluateRetrieval(cases[i:i+1]).HitAt5 == 0 {
			misses = append(misses, c.Question)
		}
	}
	return evalModeResult{Mode: o.mode, Metrics: askyourdocs.EvaluateRetrieval(cases), Misses: misses, fusion: fusion}, nil
}

func (a *cliApp) cmdEval(ctx context.Context, args []string) error {
	fset, cf := a.flags("eval")
	o := defaultRetrieveOptions()
	dataset := fset.String("dataset", "", "dataset file (JSON: {\"cases\": [{\"question\", \"relevant\": [...]}]})")
	mode := fset.String("mode", "all", "retriever: vector, keyword, fusion or all (the three side by side)")
	fset.IntVar(&o.depth, "depth", o.depth, "candidates taken from each retriever")
	fset.IntVar(&o.rrfK, "rrf-k", o.rrfK, "k of reciprocal rank fusion")
	fset.Float64Var(&o.vectorWeight, "vector-weight", o.vectorWeight, "weight of the vector list in the fusion")
	fset.Float64Var(&o.keywordWeight, "keyword-weight", o.keywordWeight, "weight of the keyword list in the fusion")
	hyde := fset.Bool("hyde", false, "add HyDE passages (needs LLM_MODEL)")
	rerank := fset.Bool("rerank", false, "rerank with RERANK_MODEL")
	verbose := fset.Bool("misses", false, "list the questions without a relevant document in the top 5")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	fset.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "rrf-k", "vector-weight", "keyword-weight":
			o.embedderFusion = false // the user's fusion settings, as given
		}
	})
	if *dataset == "" && len(pos) == 1 {
		*dataset = pos[0]
	} else if len(pos) > 0 {
		return usageError("eval", "unexpected arguments %q", pos)
	}
	if *dataset == "" {
		return usageError("eval", "eval needs --dataset FILE")
	}
	var modes []string
	switch *mode {
	case "all":
		modes = []string{modeVector, modeKeyword, modeFusion}
	case modeVector, modeKeyword, modeFusion:
		modes = []string{*mode}
	default:
		return usageError("eval", "--mode must be vector, keyword, fusion or all")
	}
	ds, err := loadEvalDataset(*dataset)
	if err != nil {
		return err
	}
	o.hyde, o.rerank = *hyde, *rerank
	o.top = 10 // the metrics look at 10 documents at most
	b, err := a.openIndexed(ctx, cf, openOptions{models: *hyde || *rerank})
	if err != nil {
		return err
	}
	defer b.Close()
	// Rank enough chunks to fill 10 distinct documents in most cases.
	o.top = max(o.depth, 10)
	var results []evalModeResult
	for _, m := range modes {
		o.mode = m
		r, err := b.evaluate(ctx, ds, o)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	// Every mode reports the same setting: the index's, or the flags'.
	fusion := results[0].fusion
	if cf.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"dataset": *dataset, "cases": len(ds.Cases), "embedder": b.manifest.Embedder,
			"rrfK": fusion.RRFK, "vectorWeight": fusion.VectorWeight, "keywordWeight": fusion.TextWeight, "depth": o.depth, "results": results})
	}
	fmt.Fprintf(a.stdout, "%s: %d questions, embedder %s, fusion k=%d weights vector %.2g keyword %.2g, depth %d\n\n",
		*dataset, len(ds.Cases), b.manifest.Embedder, fusion.RRFK, fusion.VectorWeight, fusion.TextWeight, o.depth)
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\thit@1\thit@5\tMRR@10\tnDCG@10\tmean ms\tp50 ms\tp95 ms\t")
	for _, r := range results {
		m := r.Metrics
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\t\n", r.Mode, m.HitAt1, m.HitAt5, m.MRRAt10, m.NDCGAt10,
			ms(m.MeanLatency), ms(m.P50Latency), ms(m.P95Latency))
	}
	tw.Flush()
	if *verbose {
		for _, r := range results {
			fmt.Fprintf(a.stdout, "\n%s misses (%d):\n", r.Mode, len(r.Misses))
			for _, q := range r.Misses {
				fmt.Fprintf(a.stdout, "  %s\n", q)
			}
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
