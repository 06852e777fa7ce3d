package engine

import (
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// FusionOptions are the settings of FuseRanked, weighted reciprocal rank
// fusion: a chunk scores Σ weight / (RRFK + rank + 1) over the lists
// holding it (rank 0-based). Zero fields take the values of
// FusionDefaults("") (the textbook fusion); an index records the settings
// its embedder implies (IndexInfo.Fusion).
type FusionOptions struct {
	RRFK         int     `json:"rrfK"`
	VectorWeight float64 `json:"vectorWeight"`
	TextWeight   float64 `json:"textWeight"`
	HyDEWeight   float64 `json:"hydeWeight"`
}

// Fusion defaults (docs/retrieval.md, "Fusion", has the grid they come
// from). The built-in embedder's vector list is much weaker than BM25F on
// manuals, so its fusion is lexical-first: k 5 and vector weight 0.1, the
// best mean MRR@10 of the settings that keep fusion at least as good as
// both lists on hit@1, hit@5 and MRR@10 on all seven dev sets. Any other
// embedder gets the textbook fusion (k 60, every list weighted 1), which
// lets a semantic list bring up passages sharing no word with the question.
var (
	localHashFusion = FusionOptions{RRFK: 5, VectorWeight: 0.1, TextWeight: 1, HyDEWeight: 0.08}
	textbookFusion  = FusionOptions{RRFK: DefaultRRFK, VectorWeight: 1, TextWeight: 1, HyDEWeight: 1}
)

// FusionDefaults returns the fusion settings an index built with the named
// embedder implies: the lexical-first settings for the built-in embedder
// (LocalEmbedderName, any dimension), the textbook ones otherwise.
func FusionDefaults(embedder string) FusionOptions {
	if strings.HasPrefix(embedder, "askyourdocs/local-hash") {
		return localHashFusion
	}
	return textbookFusion
}

// withDefaults fills zero fields from the textbook fusion.
func (f FusionOptions) withDefaults() FusionOptions {
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

// FusedHit is one result of FuseRanked: the chunk, its text, its fused
// score and its 1-based ranks in the input lists (0: not in that list).
type FusedHit struct {
	Doc                            *ai.Document
	Text                           string
	Score                          float64
	VectorRank, TextRank, HyDERank int
}

// FuseRanked fuses a vector list, a keyword list and a HyDE list (each
// best first; any may be empty) with f's weighted reciprocal rank fusion
// (ReciprocalRankFusion, in that list order for ties) and returns every
// distinct chunk text once, best first, with its rank in each list.
func FuseRanked(vector, text, hyde []*ai.Document, f FusionOptions) []FusedHit {
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
	out := make([]FusedHit, len(fused))
	for i, d := range fused {
		out[i] = FusedHit{Doc: d.Doc, Text: d.Text, Score: d.Score, VectorRank: vr[d.Text], TextRank: tr[d.Text], HyDERank: hr[d.Text]}
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
