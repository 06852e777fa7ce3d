package engine

import (
	"math"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// FusionOptions are the settings of Search's fusion (SearchOptions.Fusion),
// weighted reciprocal rank fusion: a chunk scores Σ weight / (RRFK + rank + 1) over the lists
// holding it (rank 0-based). Zero fields take the values of
// FusionDefaults("") (the textbook fusion); an index records the settings
// its embedder implies (IndexInfo.Fusion).
//
// WeakVectorWeight > 0 makes the fusion adaptive: for a question whose
// keyword query is weak (SearchReport.KeywordWeak), no quoted phrase, at
// least WeakStopWords stop words and keywords whose Specificity is below
// WeakSpecificity (SearchReport.Keywords), the vector
// (and HyDE) lists are weighted by WeakVectorWeight instead; 0 keeps the
// weights for every question. docs/retrieval.md has the grid.
type FusionOptions struct {
	RRFK         int     `json:"rrfK"`
	VectorWeight float64 `json:"vectorWeight"`
	TextWeight   float64 `json:"textWeight"`
	HyDEWeight   float64 `json:"hydeWeight"`
	// WeakVectorWeight is the vector weight for a weak keyword query (0:
	// not adaptive); WeakSpecificity (0: 0.4) and WeakStopWords (0: 3)
	// say which queries are weak.
	WeakVectorWeight float64 `json:"weakVectorWeight,omitempty"`
	WeakSpecificity  float64 `json:"weakSpecificity,omitempty"`
	WeakStopWords    int     `json:"weakStopWords,omitempty"`
}

// Fusion defaults (docs/retrieval.md, "Fusion", has the grid they come
// from). The built-in embedder's vector list is much weaker than BM25F on
// manuals, so its fusion is lexical-first: k 5 and vector weight 0.005,
// which keeps fusion at least as good as both lists on hit@1, hit@5 and
// MRR@10 on all thirteen dev sets (0.1, the default before, falls 0.0003
// MRR@10 below the keyword list on dbindex; the mean MRR@10 of the two
// differs by 0.0002). The vector list then breaks the keyword list's ties
// and adds the chunks it lacks, and decides weak keyword queries. Any other
// embedder gets the textbook fusion (k 60, every list weighted 1), which
// lets a semantic list bring up passages sharing no word with the question.
//
// Both are adaptive: a question of mostly stop words whose keywords are
// common in the index ("What is a class?") weights the vector list 3 (6
// for other embedders), above the keyword list, since the vector list sees
// the whole question.
var (
	localHashFusion = FusionOptions{RRFK: 5, VectorWeight: 0.005, TextWeight: 1, HyDEWeight: 0.004,
		WeakVectorWeight: 3, WeakSpecificity: defaultWeakSpecificity, WeakStopWords: defaultWeakStopWords}
	textbookFusion = FusionOptions{RRFK: defaultRRFK, VectorWeight: 1, TextWeight: 1, HyDEWeight: 1,
		WeakVectorWeight: 6, WeakSpecificity: defaultWeakSpecificity, WeakStopWords: defaultWeakStopWords}
)

// The weak keyword query of the defaults: at least 3 stop words and a
// Specificity below 0.4 (one keyword held by more than about 5% of the
// chunks, or nothing but stop words).
const (
	defaultWeakSpecificity = 0.4
	defaultWeakStopWords   = 3
)

// FusionDefaults returns the fusion settings an index built with the named
// embedder implies: the lexical-first settings for the built-in embedder
// (NewLocalEmbedder, any dimension), the textbook ones otherwise.
func FusionDefaults(embedder string) FusionOptions {
	if strings.HasPrefix(embedder, "askyourdocs/local-hash") {
		return localHashFusion
	}
	return textbookFusion
}

// formerFusionDefaults returns the settings the named embedder's defaults
// were before today's: without the weak-query fields (before fusion was
// adaptive) and, for the built-in embedder, vector weight 0.1 (HyDE 0.08)
// with and without them. An index recording one of them was not set by
// hand, so Search gives it today's defaults (indexFusion).
func formerFusionDefaults(embedder string) []FusionOptions {
	d := FusionDefaults(embedder)
	out := []FusionOptions{nonAdaptive(d)}
	if d == localHashFusion {
		old := localHashFusion
		old.VectorWeight, old.HyDEWeight = 0.1, 0.08
		out = append(out, old, nonAdaptive(old))
	}
	return out
}

// withDefaults fills zero fields from the textbook fusion (the weak-query
// thresholds only when the fusion is adaptive).
func (f FusionOptions) withDefaults() FusionOptions {
	if f.WeakVectorWeight > 0 {
		if f.WeakSpecificity <= 0 {
			f.WeakSpecificity = defaultWeakSpecificity
		}
		if f.WeakStopWords <= 0 {
			f.WeakStopWords = defaultWeakStopWords
		}
	}
	if f.RRFK <= 0 {
		f.RRFK = textbookFusion.RRFK
	}
	if f.VectorWeight == 0 {
		f.VectorWeight = textbookFusion.VectorWeight
	}
	if f.TextWeight == 0 {
		f.TextWeight = textbookFusion.TextWeight
	}
	if f.HyDEWeight == 0 {
		f.HyDEWeight = textbookFusion.HyDEWeight
	}
	return f
}

// fusedHit is one result of fuseRanked: the chunk, its text, its fused
// score and its 1-based ranks in the input lists (0: not in that list).
type fusedHit struct {
	Doc                            *ai.Document
	Text                           string
	Score                          float64
	VectorRank, TextRank, HyDERank int
}

// fuseRanked fuses a vector list, a keyword list and a HyDE list (each
// best first; any may be empty) with f's weighted reciprocal rank fusion
// (ReciprocalRankFusion, in that list order for ties) and returns every
// distinct chunk text once, best first, with its rank in each list.
func fuseRanked(vector, text, hyde []*ai.Document, f FusionOptions) []fusedHit {
	f = f.withDefaults()
	var lists []RankedList
	if len(vector) > 0 {
		lists = append(lists, RankedList{Docs: vector, Weight: f.VectorWeight})
	}
	if len(hyde) > 0 {
		lists = append(lists, RankedList{Docs: hyde, Weight: f.HyDEWeight})
	}
	if len(text) > 0 {
		lists = append(lists, RankedList{Docs: text, Weight: f.TextWeight})
	}
	fused := ReciprocalRankFusion(lists, f.RRFK, 0)
	vr, tr, hr := rankByText(vector), rankByText(text), rankByText(hyde)
	// A text indexed twice (a page's HTML and its plain-text source copy,
	// sourceCopyURL) is one hit: the rendered page's.
	page := map[string]*ai.Document{}
	for _, l := range [][]*ai.Document{vector, text, hyde} {
		for _, d := range l {
			if d != nil && !sourceCopyURL(metaString(d.Metadata, MetaURL)) {
				if t := DocText(d); page[t] == nil {
					page[t] = d
				}
			}
		}
	}
	out := make([]fusedHit, len(fused))
	for i, d := range fused {
		if p := page[d.Text]; p != nil && sourceCopyURL(metaString(d.Doc.Metadata, MetaURL)) {
			d.Doc = p
		}
		out[i] = fusedHit{Doc: d.Doc, Text: d.Text, Score: d.Score, VectorRank: vr[d.Text], TextRank: tr[d.Text], HyDERank: hr[d.Text]}
	}
	return out
}

// rankByText maps each text of docs to its 1-based best rank.
func rankByText(docs []*ai.Document) map[string]int {
	m := make(map[string]int, len(docs))
	for i, d := range docs {
		if d == nil {
			continue
		}
		t := DocText(d)
		if _, ok := m[t]; !ok {
			m[t] = i + 1
		}
	}
	return m
}

// forQuery returns the settings fuseRanked uses for one question whose
// keyword query has the statistics st: f with zero fields filled, and
// for a weak keyword query (weak) of an adaptive f the vector weight
// WeakVectorWeight and the HyDE weight scaled alike. The result is not
// adaptive (WeakVectorWeight 0), so applying it again changes nothing.
func (f FusionOptions) forQuery(st KeywordQueryStats) FusionOptions {
	f = f.withDefaults()
	weak := f.weak(st)
	if f.WeakVectorWeight > 0 && weak {
		f.HyDEWeight *= f.WeakVectorWeight / f.VectorWeight
		f.VectorWeight = f.WeakVectorWeight
	}
	return nonAdaptive(f)
}

// nonAdaptive returns f without the weak-query weighting.
func nonAdaptive(f FusionOptions) FusionOptions {
	f.WeakVectorWeight, f.WeakSpecificity, f.WeakStopWords = 0, 0, 0
	return f
}

// weak reports whether f counts a keyword query with statistics st as
// weak: no quoted phrase, at least WeakStopWords stop words left out and
// a Specificity below WeakSpecificity. A question that is mostly
// phrasing around a few common words ("What is a class?") is searched by
// those words alone, which rank many chunks alike; the vector list sees
// the whole question. Identifiers and rare terms are specific.
func (f FusionOptions) weak(st KeywordQueryStats) bool {
	f = f.withDefaults()
	if f.WeakVectorWeight <= 0 {
		return false
	}
	return st.Phrases == 0 && st.StopWords >= f.WeakStopWords && st.specificity() < f.WeakSpecificity
}

// specificity computes KeywordQueryStats.Specificity from Chunks and
// Terms: the sum over the terms found in the index of their IDF (BM25's,
// ln(1 + (N - df + 0.5) / (df + 0.5))) divided by the IDF of a term held
// by one chunk.
func (st KeywordQueryStats) specificity() float64 {
	if st.Chunks <= 0 {
		return 0
	}
	one := bm25IDF(st.Chunks, 1)
	if one <= 0 || math.IsNaN(one) {
		return 0
	}
	var sum float64
	for _, df := range st.DocFreqs {
		if df > 0 {
			sum += bm25IDF(st.Chunks, min(df, st.Chunks)) / one
		}
	}
	return sum
}
