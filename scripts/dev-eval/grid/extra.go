package main

import (
	"fmt"
	"slices"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// The -extra families of docs/retrieval.md ("Fusion on faqlinks"): fusion
// rules tried beside the settings grid and not adopted, each on top of the
// defaults' fusion (chosen).

// extraSetting is one rule of the -extra families.
type extraSetting struct {
	label string
	rank  func(l line) []string
}

// extraSettings returns the two families: page agreement (a chunk also
// gains beta * weight / (k + r + 1) from each list that lacks its text but
// holds another chunk of its page at r), and a heavier vector list for
// long questions (vector weight w for a question that is not weak, has no
// quoted phrase, at least s stop words and a specificity below c).
func extraSettings() []extraSetting {
	var out []extraSetting
	for _, wv := range []float64{0.1, 0.2, 0.3} {
		for _, beta := range []float64{0, 0.1, 0.25, 0.5, 1} {
			f := chosen
			f.VectorWeight = wv
			out = append(out, extraSetting{
				label: fmt.Sprintf("page agreement: k=%d wv=%g beta=%g", f.RRFK, wv, beta),
				rank:  func(l line) []string { return fusePages(l, f, beta) },
			})
		}
	}
	for _, s := range []int{3, 4, 5} {
		for _, c := range []float64{0.4, 1, 1.5, 2, 3, 99} {
			for _, w := range []float64{0.2, 0.3, 0.5, 1} {
				out = append(out, extraSetting{
					label: fmt.Sprintf("long questions: wv=%g if stops>=%d, specificity<%g", w, s, c),
					rank: func(l line) []string {
						f := chosen
						st := l.Stats
						if !isWeak(f, st) && st.Chunks > 0 && st.Phrases == 0 && st.StopWords >= s && st.Specificity < c {
							f.VectorWeight = w
						}
						return fuse(l, f)
					},
				})
			}
		}
	}
	return out
}

// fusePages is fuse with page agreement: after the reciprocal rank fusion
// of the two lists, each fused chunk gains beta * weight / (k + r + 1)
// from every list that does not hold its text but ranks a chunk of its
// page (URL) at r (0-based, the page's first chunk in that list).
func fusePages(l line, f askyourdocs.FusionOptions, beta float64) []string {
	wv := f.VectorWeight
	if isWeak(f, l.Stats) {
		wv = f.WeakVectorWeight
	}
	type list struct {
		es []entry
		w  float64
	}
	lists := []list{{l.Vector, wv}, {l.Keyword, f.TextWeight}}
	var rl []askyourdocs.RankedList
	for _, x := range lists {
		if len(x.es) > 0 {
			rl = append(rl, askyourdocs.RankedList{Docs: docs(x.es), Weight: x.w})
		}
	}
	hits := askyourdocs.ReciprocalRankFusion(rl, f.RRFK, 0)
	type scored struct {
		url   string
		score float64
		i     int
	}
	out := make([]scored, len(hits))
	for i, h := range hits {
		u, _ := h.Doc.Metadata[askyourdocs.MetaURL].(string)
		out[i] = scored{u, h.Score, i}
		if slices.Contains(l.Demoted, h.Text) {
			out[i].score *= releaseNotesWeight
		}
		for _, x := range lists {
			if slices.ContainsFunc(x.es, func(e entry) bool { return e[1] == h.Text }) {
				continue
			}
			if r := slices.IndexFunc(x.es, func(e entry) bool { return e[0] == u }); r >= 0 {
				out[i].score += beta * x.w / float64(f.RRFK+r+1)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.i - b.i
	})
	urls := make([]string, 0, depth)
	for _, s := range out[:min(depth, len(out))] {
		urls = append(urls, s.url)
	}
	return urls
}

// extraReport prints every -extra setting: whether fusion keeps >=
// max(vector, keyword) on hit@1, hit@5 and MRR@10 on every set (else the
// first set and metric below), and its MRR@10 per set.
func extraReport(names []string, data map[string][]line) {
	fmt.Println("-extra: rules tried beside the grid, on the defaults' fusion (MRR@10 per set):")
	for _, x := range extraSettings() {
		fail := ""
		fmt.Printf("  %-58s", x.label)
		for _, s := range names {
			lines := data[s]
			v := triple(metrics(lines, func(l line) []string { return single(l, l.Vector) }))
			k := triple(metrics(lines, func(l line) []string { return single(l, l.Keyword) }))
			m := metrics(lines, x.rank)
			t := triple(m)
			for j, name := range []string{"hit@1", "hit@5", "MRR@10"} {
				if t[j] < max(v[j], k[j])-1e-9 && fail == "" {
					fail = fmt.Sprintf("%s %s %.3f < %.3f", s, name, t[j], max(v[j], k[j]))
				}
			}
			fmt.Printf(" %s %.3f", s, m.MRRAt10)
		}
		if fail == "" {
			fail = "passes"
		}
		fmt.Printf(" | %s\n", fail)
	}
}
