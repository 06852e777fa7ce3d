package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// fusionPage returns a chunk of text on the page url.
func fusionPage(text, url string) *ai.Document {
	return ai.DocumentFromText(text, map[string]any{MetaURL: url})
}

// TestFuseRankedDominantListDocument has the faqlinks shape: one chunk
// text on two pages (borg's man_intro.html repeats usage/general.html),
// the vector list ranking man_intro's copy first and general's second, the
// keyword list holding the text once, as general's, first. Under the
// built-in embedder's lexical-first weights the fused first chunk is the
// keyword list's document; before, it was the vector list's (the best
// rank, earliest list) and general.html was in no fused hit at all.
// Under equal weights the best rank decides, as before.
func TestFuseRankedDominantListDocument(t *testing.T) {
	vector := []*ai.Document{fusionPage("shared", "man_intro.html"), fusionPage("shared", "general.html"), fusionPage("v2", "v2.html")}
	text := []*ai.Document{fusionPage("shared", "general.html"), fusionPage("k1", "k1.html"), fusionPage("v2", "k-v2.html")}

	got := fuseRanked(vector, text, nil, FusionDefaults(localEmbedderName(1024)))
	if got[0].Text != "shared" || metaString(got[0].Doc.Metadata, MetaURL) != "general.html" {
		t.Errorf("lexical-first: first hit %q on %q, want the keyword list's general.html", got[0].Text, metaString(got[0].Doc.Metadata, MetaURL))
	}
	if got[0].VectorRank != 1 || got[0].TextRank != 1 {
		t.Errorf("ranks %d/%d, want 1/1", got[0].VectorRank, got[0].TextRank)
	}
	// "v2" is 3rd in both lists: the keyword list's share is larger.
	for _, h := range got {
		if h.Text == "v2" && metaString(h.Doc.Metadata, MetaURL) != "k-v2.html" {
			t.Errorf("v2 on %q, want the keyword list's k-v2.html", metaString(h.Doc.Metadata, MetaURL))
		}
	}

	// The vector list dominates when it weighs more, even at a worse rank.
	got = fuseRanked([]*ai.Document{fusionPage("a", "a.html"), fusionPage("b", "b.html"), fusionPage("v2", "vec.html")},
		[]*ai.Document{fusionPage("v2", "kw.html")}, nil, FusionOptions{RRFK: 5, VectorWeight: 1, TextWeight: 0.1})
	for _, h := range got {
		if h.Text == "v2" && metaString(h.Doc.Metadata, MetaURL) != "vec.html" {
			t.Errorf("vector-first: v2 on %q, want the vector list's vec.html", metaString(h.Doc.Metadata, MetaURL))
		}
	}

	// Equal weights: the best rank, the earliest list (vector) on a tie.
	got = fuseRanked(vector, text, nil, FusionOptions{RRFK: 60, VectorWeight: 1, TextWeight: 1})
	if metaString(got[0].Doc.Metadata, MetaURL) != "man_intro.html" {
		t.Errorf("equal weights: first hit on %q, want man_intro.html", metaString(got[0].Doc.Metadata, MetaURL))
	}
}

// TestReciprocalRankFusionDominantListProperty checks on random lists
// whose texts sit on several pages that (1) fusion with one list weighted
// near 0 is the other list: its texts first, in its order, each as that
// list's own document, and (2) with equal weights every fused text is the
// document at its best rank, the earliest list on equal ranks.
func TestReciprocalRankFusionDominantListProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 5))
	list := func(n int, prefix string, dedup bool) []*ai.Document {
		var out []*ai.Document
		seen := map[string]bool{}
		for range n {
			txt := fmt.Sprintf("t%d", r.IntN(30))
			if dedup && seen[txt] {
				continue
			}
			seen[txt] = true
			out = append(out, fusionPage(txt, fmt.Sprintf("%s-%s-%d.html", prefix, txt, r.IntN(3))))
		}
		return out
	}
	for iter := range 300 {
		vector, text := list(r.IntN(40), "v", false), list(r.IntN(40), "k", true)
		k := 1 + r.IntN(60)
		got := ReciprocalRankFusion([]RankedList{{Docs: vector, Weight: 1e-9}, {Docs: text, Weight: 1}}, k, 0)
		for i, d := range text {
			if got[i].Doc != d {
				t.Fatalf("iter %d: fused %d is %q on %q, want the keyword list's %q on %q", iter, i,
					got[i].Text, metaString(got[i].Doc.Metadata, MetaURL), DocText(d), metaString(d.Metadata, MetaURL))
			}
		}
		got = ReciprocalRankFusion([]RankedList{{Docs: vector, Weight: 1}, {Docs: text, Weight: 1}}, k, 0)
		for _, h := range got {
			var want *ai.Document
			for rank := 0; want == nil; rank++ {
				for _, l := range [][]*ai.Document{vector, text} {
					if want == nil && rank < len(l) && DocText(l[rank]) == h.Text {
						want = l[rank]
					}
				}
			}
			if h.Doc != want {
				t.Fatalf("iter %d: equal weights: %q is on %q, want %q (its best rank)", iter, h.Text,
					metaString(h.Doc.Metadata, MetaURL), metaString(want.Metadata, MetaURL))
			}
		}
	}
}
