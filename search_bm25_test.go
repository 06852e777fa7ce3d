package engine

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// bm25Hit is a ranked row of a bm25Index, for the tests.
type bm25Hit struct {
	row   int
	stage int
	score float64
}

// rank returns the rows of x matching p in the one keyword ranker's order
// with their stages and scores (keep and filter as rankKeywords has them).
func (x *bm25Index) rank(ctx context.Context, p bm25Plan, docs []*ai.Document, keys []string, filter func(map[string]any) bool, keep int) ([]bm25Hit, error) {
	v := x.view(docs, keys, filter)
	hits, err := scoreKeywords(ctx, v, &p)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hits, compareKeywordHits)
	for i := 0; i < len(hits); {
		if i, err = orderTies(ctx, v, hits, i); err != nil {
			return nil, err
		}
	}
	var out []bm25Hit
	for _, h := range hits {
		if d := v.doc(h.ord); d == nil || (filter != nil && !filter(d.Metadata)) {
			continue
		}
		out = append(out, bm25Hit{row: int(x.slotRow[h.ord]), stage: h.stage, score: h.score})
	}
	if keep > 0 && len(out) > keep {
		out = out[:keep]
	}
	return out, nil
}

// TestBM25HandComputed checks the scores of a three-document corpus
// against values computed by hand: N = 3, average length 3, k1 = 1.2,
// b = 0.75, idf = ln(1 + (N - df + 0.5)/(df + 0.5)).
//
//	d0 "apple banana apple"        (3 terms)
//	d1 "banana cherry"             (2 terms)
//	d2 "cherry cherry cherry date" (4 terms)
//
// "apple": idf ln(1 + 2.5/1.5) = 0.980829; d0 tf 2, K = 1.2 (length =
// average): 0.980829 * 2 * 2.2 / (2 + 1.2) = 1.348640.
// "banana cherry": idf of each ln(1 + 1.5/2.5) = 0.470004; d1 (K = 0.9):
// 2 * 0.470004 * 2.2/1.9 = 1.088430, and it holds both words, so it ranks
// first; d2 (K = 1.5): 0.470004 * 3 * 2.2/4.5 = 0.689339; d0 (K = 1.2):
// 0.470004 * 2.2/2.2 = 0.470004.
func TestBM25HandComputed(t *testing.T) {
	an, err := newTextAnalyzer("simple")
	if err != nil {
		t.Fatal(err)
	}
	docs := []*ai.Document{
		ai.DocumentFromText("apple banana apple", nil),
		ai.DocumentFromText("banana cherry", nil),
		ai.DocumentFromText("cherry cherry cherry date", nil),
	}
	x := newLocalvecBM25(an, docs)
	for _, tc := range []struct {
		query  string
		rows   []int
		scores []float64
		stages []int
	}{
		{"apple", []int{0}, []float64{1.348640}, []int{1}},
		{"banana cherry", []int{1, 2, 0}, []float64{1.088430, 0.689339, 0.470004}, []int{1, 0, 0}},
		{`"cherry date" banana`, []int{2, 1, 0}, []float64{0.689339 + 0.980829*2.2/2.5, 0.470004 * 2.2 / 1.9 * 2, 0.470004}, []int{2, 1, 1}},
	} {
		hits, err := x.rank(t.Context(), newBM25Plan(an, tc.query, nil), docs, nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var rows, stages []int
		for _, h := range hits {
			rows, stages = append(rows, h.row), append(stages, h.stage)
		}
		if !slices.Equal(rows, tc.rows) || !slices.Equal(stages, tc.stages) {
			t.Fatalf("%q: rows %v stages %v, want %v %v", tc.query, rows, stages, tc.rows, tc.stages)
		}
		for i, h := range hits {
			if math.Abs(h.score-tc.scores[i]) > 1e-5 {
				t.Errorf("%q: row %d score %.6f, want %.6f", tc.query, h.row, h.score, tc.scores[i])
			}
		}
	}
}

// TestBM25IndexUpdates checks that removing rows changes the statistics
// (N, document frequencies, average length) exactly as rebuilding would.
func TestBM25IndexUpdates(t *testing.T) {
	an, _ := newTextAnalyzer("simple")
	docs := []*ai.Document{
		ai.DocumentFromText("apple pie", nil),
		ai.DocumentFromText("apple apple apple tart with a long tail of words", nil),
		ai.DocumentFromText("cherry pie", nil),
	}
	x := newLocalvecBM25(an, docs)
	x.drop(1)
	x.move(2, 1)
	x.truncate(2)
	kept := []*ai.Document{docs[0], docs[2]}
	fresh := newLocalvecBM25(an, kept)
	p := newBM25Plan(an, "apple pie", nil)
	got, _ := x.rank(t.Context(), p, kept, nil, nil, 0)
	want, _ := fresh.rank(t.Context(), p, kept, nil, nil, 0)
	if !slices.Equal(got, want) {
		t.Errorf("after delete %v, rebuilt %v", got, want)
	}
}

// TestBM25BreadcrumbBoost checks the breadcrumb field counts
// bm25HeadingWeight times: a chunk whose breadcrumb says "apple" scores
// exactly like one whose text says it that many times.
func TestBM25BreadcrumbBoost(t *testing.T) {
	an, _ := newTextAnalyzer("simple")
	docs := []*ai.Document{
		ai.DocumentFromText("x", map[string]any{MetaBreadcrumb: "apple"}),
		ai.DocumentFromText("x"+strings.Repeat(" apple", bm25HeadingWeight), nil),
		ai.DocumentFromText("y z", nil),
	}
	hits, err := newLocalvecBM25(an, docs).rank(t.Context(), newBM25Plan(an, "apple", nil), docs, nil, nil, 0)
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits %v, %v", hits, err)
	}
	if hits[0].score != hits[1].score || hits[0].row != 0 {
		t.Errorf("breadcrumb %v, text %v", hits[0], hits[1])
	}
}

// TestBM25MergedHeadings checks the merged headings (MetaHeadings) belong
// to the heading field: a chunk with breadcrumb "fruit" and merged heading
// "apple" scores exactly like one whose breadcrumb is "fruit > apple"
// (the separator is no term), and ranks above a chunk of the same length
// that says "apple" once in its text.
func TestBM25MergedHeadings(t *testing.T) {
	an, _ := newTextAnalyzer("simple")
	docs := []*ai.Document{
		ai.DocumentFromText("x y", map[string]any{MetaBreadcrumb: "fruit", MetaHeadings: "apple"}),
		ai.DocumentFromText("x y", map[string]any{MetaBreadcrumb: "fruit > apple"}),
		ai.DocumentFromText("apple y", map[string]any{MetaBreadcrumb: "fruit > pear"}),
		ai.DocumentFromText("y z", map[string]any{MetaHeadings: 7}), // not a string: ignored
	}
	hits, err := newLocalvecBM25(an, docs).rank(t.Context(), newBM25Plan(an, "apple", nil), docs, nil, nil, 0)
	if err != nil || len(hits) != 3 {
		t.Fatalf("hits %v, %v", hits, err)
	}
	if hits[0].row != 0 || hits[1].row != 1 || hits[0].score != hits[1].score || hits[2].row != 2 || hits[2].score >= hits[1].score {
		t.Errorf("hits %v: want rows 0 and 1 tied, then row 2", hits)
	}
	if got := bm25HeadingText(docs[0].Metadata); got != "fruit\napple" {
		t.Errorf("heading field %q", got)
	}
}

// TestBM25HeadingPairs checks the heading pairs against a value computed
// by hand: two chunks with the same text and the same heading words, one
// heading saying "Properties on Targets", the other "Targets on
// Properties". The query "properties on targets" (stop word "on") scores
// the pair "properties targets" of its keywords and the pairs "properties
// on" and "on targets" of its word sequence as further terms, which only
// the second heading holds (within bm25PairWindow): it ranks first, by
// exactly those pairs' BM25 shares. Both chunks have the same length: 3
// terms of text, 3 heading terms counted 3 times and 3 pairs once (15),
// as has the third, so the length factor is 1.
func TestBM25HeadingPairs(t *testing.T) {
	an, _ := newTextAnalyzer("simple")
	docs := []*ai.Document{
		ai.DocumentFromText("a b c", map[string]any{MetaBreadcrumb: "Targets on Properties"}),
		ai.DocumentFromText("a b c", map[string]any{MetaBreadcrumb: "Properties on Targets"}),
		ai.DocumentFromText("d e f", map[string]any{MetaBreadcrumb: "Other Words Here"}),
	}
	stop := map[string]bool{"on": true}
	plan := newBM25Plan(an, "properties on targets", stop)
	if !slices.Equal(plan.pairs, []string{"properties targets", "properties on", "on targets"}) {
		t.Fatalf("query pairs %q", plan.pairs)
	}
	hits, err := newLocalvecBM25(an, docs).rank(t.Context(), plan, docs, nil, nil, 0)
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits %v, %v", hits, err)
	}
	// N = 3, df = 1, tf = 1, len = avg: idf * (k1+1) / (1 + k1), for each
	// of the three pairs, which only row 1's heading holds.
	pair := math.Log(1+(3-1+0.5)/(1+0.5)) * (bm25K1 + 1) / (1 + bm25K1)
	if hits[0].row != 1 || math.Abs(hits[0].score-hits[1].score-3*pair) > 1e-12 {
		t.Errorf("hits %v: want row 1 first by %.12f", hits, 3*pair)
	}
	// Pairs never join words of two breadcrumb elements.
	var terms []string
	bm25HeadingTerms(an, "Targets > Properties", func(term string, w int) { terms = append(terms, term) })
	if !slices.Equal(terms, []string{"targets", "properties"}) {
		t.Errorf("heading terms %q", terms)
	}
}

// TestBM25PlanForeignStopWords checks keepStopWords' language rule on the
// plan: "des" is a keyword where the index holds no German (its marker
// "und" in no chunk or too few) and a stop word where it does, and the
// words it frees no longer count as stop words.
func TestBM25PlanForeignStopWords(t *testing.T) {
	an := localvecDefaultAnalyzer
	for _, c := range []struct {
		und      int // chunks of 1000 holding "und"
		keywords []string
		freed    int
	}{
		{0, []string{"des", "encrypt"}, 1},
		{4, []string{"des", "encrypt"}, 1},
		{5, []string{"encrypt"}, 0},
		{900, []string{"encrypt"}, 0},
	} {
		p := newBM25Plan(an, "DES encryption", QuestionStopWords())
		if got := p.statTerms(); !slices.Equal(got, []string{"des", "und"}) {
			t.Fatalf("statTerms %q, want [des und]", got)
		}
		p.keepStopWords(1000, func(term string) int {
			if term == "und" {
				return c.und
			}
			return 400 // "des" is no rare word: a stop word is left out
		})
		if !slices.Equal(p.keywords, c.keywords) || p.freed != c.freed {
			t.Errorf("und in %d chunks: keywords %q freed %d, want %q %d", c.und, p.keywords, p.freed, c.keywords, c.freed)
		}
		if c.freed == 1 && !slices.Equal(p.pairs, []string{"des encrypt"}) {
			t.Errorf("und in %d chunks: pairs %q, want the pair of the freed word", c.und, p.pairs)
		}
	}
}
