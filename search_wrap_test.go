package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	engine "github.com/dbis-ilm/askyourdocs"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// loggingSearcher is a Searcher of an app's own, from outside the package:
// it wraps another through the interface (so none of the store's methods
// beyond Searcher's are promoted) and counts the reads it forwards.
type loggingSearcher struct {
	engine.Searcher
	reads atomic.Int64 // Search calls SearchText and SearchVector concurrently
}

func (l *loggingSearcher) SearchText(ctx context.Context, q string, k int, f *engine.Filter) ([]*ai.Document, error) {
	l.reads.Add(1)
	return l.Searcher.SearchText(ctx, q, k, f)
}

func (l *loggingSearcher) SearchVector(ctx context.Context, q string, k int, f *engine.Filter) ([]*ai.Document, error) {
	l.reads.Add(1)
	return l.Searcher.SearchVector(ctx, q, k, f)
}

// unwrapping is loggingSearcher with an Unwrap method.
type unwrapping struct{ *loggingSearcher }

func (u unwrapping) Unwrap() engine.Searcher { return u.loggingSearcher.Searcher }

// TestSearchThirdPartySearcher checks that a Searcher wrapping a store gets
// the same Search result as the store itself when it returns the store
// from Unwrap: the same hits, scores and report for questions that use
// the index's recorded fusion, the weak-query rule (its keyword
// statistics) and HyDE's passage search; without Unwrap, the report names
// what Search did without, and the recorded fusion is not applied.
func TestSearchThirdPartySearcher(t *testing.T) {
	ctx := context.Background()
	g := genkit.Init(ctx)
	emb := engine.NewLocalEmbedder(128)
	stores := map[string]engine.Searcher{}
	sq, err := engine.NewSQLiteStore(ctx, nil, emb, filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	stores["sqlite"] = sq
	lv, err := engine.NewLocalvecStore(g, "wrap", emb, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stores["localvec"] = lv

	var docs []*ai.Document
	topics := []string{"kayak rental prices at the boathouse", "opening hours of the museum", "how to renew a library card",
		"parking near the station", "the ferry timetable in winter", "swimming pool tickets for children"}
	for i, topic := range topics {
		for j := range 4 {
			text := fmt.Sprintf("Section %d.%d. This page is about %s. It explains what you need to know about %s, part %d, and where to ask.", i, j, topic, topic, j)
			docs = append(docs, ai.DocumentFromText(text, map[string]any{engine.MetaURL: fmt.Sprintf("https://example.org/%d.html", i), engine.MetaSource: "guide"}))
		}
	}
	// A recorded fusion that differs from the embedder's defaults.
	fusion := engine.FusionDefaults(emb.Name())
	fusion.VectorWeight, fusion.TextWeight = 0.3, 2.5
	model := genkit.DefineModel(g, "test/wrap-hyde", nil, func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		return &ai.ModelResponse{Message: ai.NewModelTextMessage("The museum opens its doors in the morning and the ferry leaves at noon.")}, nil
	})
	hyde := &engine.SearchModel{Model: model} // the built-in prompt, from SearchOptions.Genkit
	questions := []string{"what do I need to know about this and where can I ask about it", "kayak rental", "what are the opening hours of the museum and when can I go there", "library card", "how do I get to the ferry in winter"}

	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			// Recorded before the first write, which keeps the record.
			if err := engine.RecordIndexInfoForTest(ctx, s, engine.IndexInfo{Embedder: emb.Name(), Dim: 128, Fusion: &fusion}); err != nil {
				t.Fatal(err)
			}
			if err := engine.IndexInBatches(ctx, s, docs, nil); err != nil {
				t.Fatal(err)
			}
			weak := false
			for _, q := range questions {
				for _, h := range []*engine.SearchModel{nil, hyde} {
					wantRes, err := engine.Search(ctx, s, q, &engine.SearchOptions{HyDE: h, Genkit: g})
					if err != nil {
						t.Fatal(err)
					}
					w := unwrapping{&loggingSearcher{Searcher: s}}
					gotRes, err := engine.Search(ctx, w, q, &engine.SearchOptions{HyDE: h, Genkit: g})
					if err != nil {
						t.Fatal(err)
					}
					wantHits, want, gotHits, got := wantRes.Hits, wantRes.Report, gotRes.Hits, gotRes.Report
					if w.reads.Load() == 0 {
						t.Errorf("%q: the wrapper's reads were not used", q)
					}
					if !reflect.DeepEqual(searchWrapHits(wantHits), searchWrapHits(gotHits)) || !reflect.DeepEqual(want, got) {
						t.Errorf("%q (HyDE %v): the wrapper with Unwrap differs from the store:\n%v\n%+v\n%v\n%+v", q, h != nil,
							searchWrapHits(wantHits), want, searchWrapHits(gotHits), got)
					}
					if want.Fusion != fusion || len(want.Lacking) != 0 {
						t.Errorf("%q: the store's report: fusion %+v, lacking %v", q, want.Fusion, want.Lacking)
					}
					weak = weak || want.KeywordWeak
					plainRes, err := engine.Search(ctx, &loggingSearcher{Searcher: s}, q, &engine.SearchOptions{HyDE: h, Genkit: g})
					if err != nil {
						t.Fatal(err)
					}
					plain := plainRes.Report
					if !slices.Equal(plain.Lacking, []string{"keyword statistics", "passage search", "index record"}) || plain.Fusion == fusion {
						t.Errorf("%q: a wrapper without Unwrap: lacking %v, fusion %+v", q, plain.Lacking, plain.Fusion)
					}
				}
			}
			if !weak {
				t.Error("no question was weak: the keyword statistics went untested")
			}
		})
	}
}

// searchWrapHits is what a hit list is compared by.
func searchWrapHits(hits []engine.SearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s|%.9f|%d/%d/%d|%s", strings.Fields(h.Text)[1], h.Score, h.VectorRank, h.TextRank, h.HyDERank, h.Level)
	}
	return out
}
