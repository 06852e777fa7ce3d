package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// searchTestStore opens the named store with emb, empty, closed when the
// test ends (pgvector skipped without a test database).
func searchTestStore(t *testing.T, name string, emb ai.Embedder, dim int) Searcher {
	t.Helper()
	switch name {
	case "localvec":
		return ingestTestLocalvec(t, t.TempDir(), emb)
	case "sqlite":
		return sqliteTestStore(t, filepath.Join(t.TempDir(), "docs.db"), emb)
	default:
		return pgTestStore(t, emb, dim)
	}
}

// indexedTestStore is searchTestStore holding docs (IndexInBatches).
func indexedTestStore(t *testing.T, name string, emb ai.Embedder, dim int, docs []*ai.Document) Searcher {
	t.Helper()
	s := searchTestStore(t, name, emb, dim)
	if err := IndexInBatches(t.Context(), s, docs, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// searchTestCorpus is a deterministic corpus of 120 chunks over 6 sources
// and 24 pages, each text a distinct mix of words from a small vocabulary
// and of a length no other has (so that no two chunks tie in BM25), with a
// "lang" and a "level" (a number) metadata value.
func searchTestCorpus() []*ai.Document {
	vocab := strings.Fields("kayak paddle river lake rental price safety jacket harbour boathouse season opening " +
		"tour guide map weather storm wind wave beach camp fire route permit")
	x := uint32(7)
	next := func() int { x = x*1664525 + 1013904223; return int(x >> 8) }
	var docs []*ai.Document
	for i := range 120 {
		n := 3 + i
		words := make([]string, n)
		for j := range words {
			words[j] = vocab[next()%len(vocab)]
		}
		src := fmt.Sprintf("src%d", i%6)
		docs = append(docs, ai.DocumentFromText(fmt.Sprintf("Chunk %d. %s.", i, strings.Join(words, " ")), map[string]any{
			MetaURL: fmt.Sprintf("https://docs.example/%s/page%d", src, i%24), MetaSource: src,
			"lang": []string{"en", "de", "fr"}[i%3], "level": float64(i % 4),
		}))
	}
	return docs
}

// searchTestQuestions are the questions the Search conformance test asks.
var searchTestQuestions = []string{
	"How much is a kayak rental?", "safety jacket on the river", "storm and wind warnings",
	"where is the boathouse opening season", "camp fire permit", "guide map route", "beach",
}

// tieGroups returns the hit texts in order with each run of equal scores
// sorted, so lists differing only in the order of exact ties compare equal.
func tieGroups(hits []SearchHit) []string {
	out := make([]string, 0, len(hits))
	for i := 0; i < len(hits); {
		j := i
		for j < len(hits) && hits[j].Score == hits[i].Score {
			j++
		}
		var g []string
		for _, h := range hits[i:j] {
			g = append(g, h.Text)
		}
		slices.Sort(g)
		out = append(out, g...)
		i = j
	}
	return out
}

func TestStoreConformanceSearchSameRanking(t *testing.T) {
	got := map[string][][]string{}
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := indexedTestStore(t, name, NewLocalEmbedder(256), 256, searchTestCorpus())
			var lists [][]string
			for _, q := range searchTestQuestions {
				hits, err := searchHits(Search(ctx, s, q, nil))
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != 10 {
					t.Fatalf("%q: %d hits, want 10", q, len(hits))
				}
				for i, h := range hits {
					if i > 0 && h.Score > hits[i-1].Score {
						t.Errorf("%q: hit %d scores %v above hit %d's %v", q, i, h.Score, i-1, hits[i-1].Score)
					}
					if h.VectorRank == 0 && h.TextRank == 0 {
						t.Errorf("%q: hit %d is in neither list", q, i)
					}
				}
				lists = append(lists, tieGroups(hits))
			}
			got[name] = lists
		})
	}
	ref, ok := got["sqlite"]
	if !ok {
		t.Fatal("no sqlite result")
	}
	for name, lists := range got {
		for i, l := range lists {
			if !slices.Equal(l, ref[i]) {
				t.Errorf("%s, %q: top 10 differs from sqlite's:\n%q\n%q", name, searchTestQuestions[i], l, ref[i])
			}
		}
	}
}

func TestStoreConformanceSearchFilter(t *testing.T) {
	filters := []struct {
		name string
		f    *Filter
		keep func(meta map[string]any) bool
	}{
		{"sources", &Filter{Sources: []string{"src1", "src4"}}, func(m map[string]any) bool { return m[MetaSource] == "src1" || m[MetaSource] == "src4" }},
		{"url prefix", &Filter{URLPrefix: "https://docs.example/src2/"}, func(m map[string]any) bool { return m[MetaSource] == "src2" }},
		{"metadata", &Filter{Metadata: map[string][]string{"lang": {"de"}, "level": {"1", "3"}}}, func(m map[string]any) bool {
			return m["lang"] == "de" && (m["level"] == 1.0 || m["level"] == 3.0)
		}},
		{"all", &Filter{Sources: []string{"src0", "src3"}, URLPrefix: "https://docs.example/src3", Metadata: map[string][]string{"lang": {"en", "fr"}}},
			func(m map[string]any) bool { return m[MetaSource] == "src3" && m["lang"] != "de" }},
		{"nothing", &Filter{Metadata: map[string][]string{"lang": nil}}, func(map[string]any) bool { return false }},
	}
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := searchTestStore(t, name, NewLocalEmbedder(256), 256)
			corpus := searchTestCorpus()
			if err := IndexInBatches(ctx, s, corpus, nil); err != nil {
				t.Fatal(err)
			}
			for _, fc := range filters {
				want := 0
				for _, d := range corpus {
					if fc.keep(d.Metadata) {
						want++
					}
				}
				vec, err := s.SearchVector(ctx, "kayak river paddle", 200, fc.f)
				if err != nil {
					t.Fatalf("%s: %v", fc.name, err)
				}
				if len(vec) != want {
					t.Errorf("%s: vector search returned %d chunks, %d pass", fc.name, len(vec), want)
				}
				txt, err := s.SearchText(ctx, "kayak river paddle storm beach camp", 200, fc.f)
				if err != nil {
					t.Fatalf("%s: %v", fc.name, err)
				}
				for _, d := range append(vec, txt...) {
					if !fc.keep(d.Metadata) {
						t.Errorf("%s: chunk %v passed", fc.name, d.Metadata)
					}
				}
				hits, err := searchHits(Search(ctx, s, "kayak river", &SearchOptions{Filter: fc.f}))
				if err != nil {
					t.Fatalf("%s: %v", fc.name, err)
				}
				if len(hits) != min(want, 10) {
					t.Errorf("%s: Search returned %d hits, want %d", fc.name, len(hits), min(want, 10))
				}
			}
			if _, err := s.SearchVector(ctx, "kayak", 0, nil); err == nil {
				t.Error("k 0: no error")
			}
		})
	}
}

func TestStoreConformanceIndexInfo(t *testing.T) {
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := searchTestStore(t, name, NewLocalEmbedder(64), 64)
			r := s.(indexRecorder)
			if _, found, err := r.IndexInfo(ctx); err != nil || found {
				t.Fatalf("new store: found %v, %v", found, err)
			}
			// A record made before the first write is the one kept: the
			// write records only when there is none.
			fo := FusionOptions{RRFK: 7, VectorWeight: 0.5, TextWeight: 1, HyDEWeight: 0.25}
			info := IndexInfo{Embedder: "ollama/nomic-embed-text", Dim: 64, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Fusion: &fo}
			cur, existed, err := r.recordIndexInfo(ctx, info)
			if err != nil || existed || cur.Embedder != info.Embedder {
				t.Fatalf("record: %+v, %v, %v", cur, existed, err)
			}
			if err := s.Index(ctx, searchTestCorpus()[:5]); err != nil {
				t.Fatal(err)
			}
			cur, existed, err = r.recordIndexInfo(ctx, IndexInfo{Embedder: "other", Dim: 8})
			if err != nil || !existed || cur.Embedder != info.Embedder || cur.Dim != 64 || !cur.Created.Equal(info.Created) || *cur.Fusion != fo {
				t.Fatalf("second record: %+v, %v, %v", cur, existed, err)
			}
			if _, rep, err := searchReported(ctx, s, "kayak", nil); err != nil || rep.Fusion != fo {
				t.Fatalf("recorded: fusion %+v, %v", rep.Fusion, err)
			}
		})
	}
}

// TestSearchModes checks the single-list modes and the ranks Search
// reports against the lists themselves.
func TestSearchModes(t *testing.T) {
	ctx := context.Background()
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "docs.db"), NewLocalEmbedder(256))
	if err := IndexInBatches(ctx, s, searchTestCorpus(), nil); err != nil {
		t.Fatal(err)
	}
	q := "safety jacket on the river"
	vec, _ := s.SearchVector(ctx, q, 40, nil)
	txt, _ := s.SearchText(ctx, q, 40, nil)
	for mode, list := range map[SearchMode][]*ai.Document{SearchModeVector: vec, SearchModeKeyword: txt} {
		hits, err := searchHits(Search(ctx, s, q, &SearchOptions{Mode: mode, K: 5}))
		if err != nil || len(hits) != 5 {
			t.Fatalf("%s: %d hits, %v", mode, len(hits), err)
		}
		for i, h := range hits {
			if h.Text != DocText(list[i]) {
				t.Errorf("%s: hit %d is %q, the list has %q", mode, i, h.Text, DocText(list[i]))
			}
			rank := h.VectorRank
			if mode == SearchModeKeyword {
				rank = h.TextRank
			}
			if rank != i+1 {
				t.Errorf("%s: hit %d has rank %d", mode, i, rank)
			}
		}
	}
	hits, err := searchHits(Search(ctx, s, q, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.VectorRank > 0 && DocText(vec[h.VectorRank-1]) != h.Text || h.TextRank > 0 && DocText(txt[h.TextRank-1]) != h.Text {
			t.Errorf("wrong ranks %d/%d for %q", h.VectorRank, h.TextRank, h.Text)
		}
		if h.URL == "" || h.Source == "" || h.Excerpt == "" || h.Passage != h.Text {
			t.Errorf("hit fields missing: %+v", h)
		}
	}
	if _, err := searchHits(Search(ctx, s, "  ", nil)); err == nil {
		t.Error("blank question: no error")
	}
	if _, err := searchHits(Search(ctx, s, q, &SearchOptions{Mode: "bm25"})); err == nil {
		t.Error("unknown mode: no error")
	}
}
