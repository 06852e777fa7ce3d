package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// weakTestCorpus is a manual where "class" is common: 24 short chunks
// about classes of other things (which BM25 ranks above a longer text for
// the lone keyword "class"), the answer to "What is a class?" (a longer
// chunk whose heading is the question), a page defining the identifier
// max_log_file_size and one that only uses its parts, and filler chunks
// that hold "what" and "is" (so they are not rare words of the corpus).
func weakTestCorpus() (docs []*ai.Document, answer, ident string) {
	add := func(text, url string) {
		docs = append(docs, ai.DocumentFromText(text, map[string]any{MetaURL: url, MetaSource: "manual"}))
	}
	topics := strings.Fields("storage network printer queue service traffic priority device font color " +
		"error event socket buffer cache window thread signal token route driver sensor widget format")
	for i, t := range topics {
		// Lengths differ, so that no two chunks tie in BM25 (ties go by
		// chunk ID, which differs between stores).
		add(fmt.Sprintf("The %s class. Each %s class has a %s class name and a class id %d%s.", t, t, t, i,
			strings.Repeat(" more", i)), "https://docs.example/classes/"+t)
	}
	answer = "What is a class? A class is a template for objects."
	add(answer, "https://docs.example/faq/what-is-a-class")
	ident = "max_log_file_size sets the largest size a log file may reach before it is rotated; " +
		"the default is 10 MB."
	add(ident, "https://docs.example/config/max_log_file_size")
	add("What does the log file size limit do? The max log setting and the file size of a log: what is "+
		"the log file size, what is max log?", "https://docs.example/faq/log-size")
	for i := range 12 {
		add(fmt.Sprintf("Release note %d: what is new is listed on the download page%s.", i, strings.Repeat(" soon", i)), fmt.Sprintf("https://docs.example/news/%d", i))
	}
	return docs, answer, ident
}

// hitRank returns the 1-based rank of text among hits (0: absent).
func hitRank(hits []SearchHit, text string) int {
	for i, h := range hits {
		if h.Text == text {
			return i + 1
		}
	}
	return 0
}

// TestFusionWeakKeywordQuery checks the per-question weighting on every
// store with the built-in embedder: "What is a class?" is a weak keyword
// query (three stop words, "class" in a third of the chunks) whose
// answer the vector list ranks first and the keyword list below the
// short class chunks; fusion with the defaults ranks it first, and the
// same fusion without the weak-query weighting does not (so the test fails
// when the adaptivity breaks). An identifier question stays a strong
// keyword query: the page defining max_log_file_size ranks first, above
// the chunk the vector list prefers. Every store gives the same statistics
// and the same top 10.
func TestFusionWeakKeywordQuery(t *testing.T) {
	corpus, answer, ident := weakTestCorpus()
	tops := map[string][][]string{}
	var stats map[string]KeywordQueryStats
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := indexedTestStore(t, name, NewLocalEmbedder(256), 256, corpus)
			defaults := FusionDefaults(localEmbedderName(256))
			got := map[string]KeywordQueryStats{}
			var lists [][]string
			for _, c := range []struct {
				q, want string
				weak    bool
			}{{"What is a class?", answer, true}, {"What does max_log_file_size do?", ident, false}} {
				st, err := s.(keywordStatser).keywordQueryStats(ctx, c.q)
				if err != nil {
					t.Fatal(err)
				}
				got[c.q] = st
				if st.Specificity != st.specificity() {
					t.Errorf("%q: Specificity field %v, computed %v", c.q, st.Specificity, st.specificity())
				}
				if defaults.weak(st) != c.weak {
					t.Fatalf("%q: weak %v (stats %+v, specificity %.3f), want %v", c.q, !c.weak, st, st.specificity(), c.weak)
				}
				vec, err := s.SearchVector(ctx, c.q, defaultSearchDepth, nil)
				if err != nil {
					t.Fatal(err)
				}
				txt, err := s.SearchText(ctx, c.q, defaultSearchDepth, nil)
				if err != nil {
					t.Fatal(err)
				}
				vr, tr := rankByText(vec)[c.want], rankByText(txt)[c.want]
				hits, rep, err := searchReported(ctx, s, c.q, &SearchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.KeywordWeak != c.weak {
					t.Errorf("%q: report says weak %v", c.q, rep.KeywordWeak)
				}
				if want := st; !defaults.mayBeWeak(c.q) {
					t.Errorf("%q: Search would not look at the statistics", c.q)
				} else if fmt.Sprint(rep.Keywords) != fmt.Sprint(want) {
					t.Errorf("%q: report's keyword statistics %+v, the store's %+v", c.q, rep.Keywords, want)
				}
				plain := nonAdaptive(defaults)
				flat, err := searchHits(Search(ctx, s, c.q, &SearchOptions{Fusion: &plain}))
				if err != nil {
					t.Fatal(err)
				}
				if c.weak {
					if vr != 1 || tr <= 1 {
						t.Fatalf("%q: the corpus must have the answer first in the vector list and lower in the keyword list: ranks %d, %d", c.q, vr, tr)
					}
					if r := hitRank(flat, c.want); r == 1 {
						t.Fatalf("%q: fusion without the weak-query weighting already ranks the answer first; the test proves nothing", c.q)
					}
				} else if tr != 1 || vr == 1 {
					t.Fatalf("%q: the corpus must have the definition first in the keyword list only: ranks vector %d, keyword %d", c.q, vr, tr)
				}
				if r := hitRank(hits, c.want); r != 1 {
					t.Errorf("%q: Search ranks the answer %d (vector list %d, keyword list %d), want 1", c.q, r, vr, tr)
				}
				lists = append(lists, tieGroups(hits))
			}
			if stats == nil {
				stats = got
			} else {
				for q, st := range got {
					if fmt.Sprint(st) != fmt.Sprint(stats[q]) {
						t.Errorf("%q: stats %+v, the first store's %+v", q, st, stats[q])
					}
				}
			}
			tops[name] = lists
		})
	}
	for name, lists := range tops {
		for i, l := range lists {
			if !slices.Equal(l, tops["sqlite"][i]) {
				t.Errorf("%s: question %d: top 10 differs from sqlite's:\n%q\n%q", name, i, l, tops["sqlite"][i])
			}
		}
	}
}

// oracleEmbedder is a strong retriever for tests: it gives each text the
// vector its table holds (the question the same vector as its answer),
// and texts not in the table a vector orthogonal to all of them.
type oracleEmbedder struct {
	dim   int
	table map[string][]float32
}

func (e *oracleEmbedder) Name() string          { return "test/oracle" }
func (e *oracleEmbedder) Register(api.Registry) {}

func (e *oracleEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	resp := &ai.EmbedResponse{}
	for _, d := range req.Input {
		v, ok := e.table[DocText(d)]
		if !ok {
			v = make([]float32, e.dim)
			v[e.dim-1] = 1
		}
		resp.Embeddings = append(resp.Embeddings, &ai.Embedding{Embedding: slices.Clone(v)})
	}
	return resp, nil
}

// TestFusionStrongEmbedderVectorWins checks the fusion an index built with
// another embedder gets (FusionDefaults of its name) on every store, with
// an embedder that finds the answers: for the weak question the answer
// is first in the vector list and below every class chunk in the keyword
// list, whose first chunk the vector list ranks 14th, after the release
// notes; fusion must rank the answer first, where the textbook fusion
// without the weak-query weighting ranks the keyword list's first chunk
// first. For the identifier question both lists rank the definition
// first, and so does fusion.
func TestFusionStrongEmbedderVectorWins(t *testing.T) {
	const dim = 8
	corpus, answer, ident := weakTestCorpus()
	const q, qIdent = "What is a class?", "What does max_log_file_size do?"
	// vec(i, w) has cosine w with e0 (the weak question) and the rest on
	// axis i.
	vec := func(i int, w float64) []float32 {
		v := make([]float32, dim)
		v[0], v[i] = float32(w), float32(math.Sqrt(1-w*w))
		return v
	}
	table := map[string][]float32{q: vec(1, 1), answer: vec(1, 1), qIdent: vec(3, 0), ident: vec(3, 0)}
	notes := 0
	for _, d := range corpus {
		if text := DocText(d); strings.HasPrefix(text, "Release note") {
			table[text] = vec(2, 0.8-0.01*float64(notes))
			notes++
		}
	}
	// The class chunks after the notes, in keyword order (the keyword list
	// does not depend on the embedder).
	probe := indexedTestStore(t, "localvec", NewLocalEmbedder(16), 16, corpus)
	kw, err := probe.SearchText(t.Context(), q, defaultSearchDepth, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range kw {
		if table[DocText(d)] == nil {
			table[DocText(d)] = vec(4, 0.5-0.01*float64(i))
		}
	}
	emb := &oracleEmbedder{dim: dim, table: table}
	defaults := FusionDefaults(emb.Name())
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := indexedTestStore(t, name, emb, dim, corpus)
			vl, err := s.SearchVector(ctx, q, defaultSearchDepth, nil)
			if err != nil {
				t.Fatal(err)
			}
			tl, err := s.SearchText(ctx, q, defaultSearchDepth, nil)
			if err != nil {
				t.Fatal(err)
			}
			vr, tr := rankByText(vl), rankByText(tl)
			if len(tl) == 0 || vr[answer] != 1 || vr[DocText(tl[0])] != notes+2 || tr[answer] <= notes+2 {
				t.Fatalf("lists: answer vector %d keyword %d; keyword's first vector %d", vr[answer], tr[answer], vr[DocText(tl[0])])
			}
			plain := nonAdaptive(defaults)
			flat, err := searchHits(Search(ctx, s, q, &SearchOptions{Fusion: &plain}))
			if err != nil {
				t.Fatal(err)
			}
			if hitRank(flat, answer) == 1 {
				t.Fatal("textbook fusion without the weak-query weighting ranks the answer first; the test proves nothing")
			}
			hits, err := searchHits(Search(ctx, s, q, nil))
			if err != nil {
				t.Fatal(err)
			}
			if r := hitRank(hits, answer); r != 1 {
				t.Errorf("%q: Search ranks the answer %d, want 1 (the vector list's first)", q, r)
			}
			hits, err = searchHits(Search(ctx, s, qIdent, nil))
			if err != nil {
				t.Fatal(err)
			}
			if r := hitRank(hits, ident); r != 1 {
				t.Errorf("identifier: Search ranks the definition %d, want 1", r)
			}
		})
	}
}

// TestFusionForQuery checks the weak-query rule on statistics alone.
func TestFusionForQuery(t *testing.T) {
	f := FusionDefaults(localEmbedderName(512))
	common := KeywordQueryStats{Chunks: 1000, StopWords: 3, Terms: []string{"class"}, DocFreqs: []int{300}}
	rare := KeywordQueryStats{Chunks: 1000, StopWords: 3, Terms: []string{"max_log_file_size"}, DocFreqs: []int{2}}
	heading := KeywordQueryStats{Chunks: 1000, StopWords: 0, Terms: []string{"class"}, DocFreqs: []int{300}}
	quoted := common
	quoted.Phrases = 1
	onlyStops := KeywordQueryStats{Chunks: 1000, StopWords: 3, Terms: []string{"what", "is", "it"}, DocFreqs: []int{900, 990, 950}}
	if s := rare.specificity(); s < 0.8 || s > 1 {
		t.Errorf("a term in 2 of 1000 chunks: specificity %.3f", s)
	}
	if s := (KeywordQueryStats{Chunks: 1000, Terms: []string{"x"}, DocFreqs: []int{0}}).specificity(); s != 0 {
		t.Errorf("no term found: specificity %v", s)
	}
	for _, c := range []struct {
		name string
		st   KeywordQueryStats
		weak bool
	}{{"common", common, true}, {"rare", rare, false}, {"heading", heading, false}, {"quoted", quoted, false}, {"stop words only", onlyStops, true}} {
		if got := f.weak(c.st); got != c.weak {
			t.Errorf("%s: weak %v, want %v (specificity %.3f)", c.name, got, c.weak, c.st.specificity())
		}
		q := f.forQuery(c.st)
		want := f.VectorWeight
		if c.weak {
			want = f.WeakVectorWeight
		}
		if q.VectorWeight != want || q.TextWeight != f.TextWeight || q.RRFK != f.RRFK || q.WeakVectorWeight != 0 {
			t.Errorf("%s: forQuery %+v, want vector weight %v", c.name, q, want)
		}
		if c.weak && math.Abs(q.HyDEWeight/q.VectorWeight-f.HyDEWeight/f.VectorWeight) > 1e-12 {
			t.Errorf("%s: HyDE weight %v not scaled with the vector weight", c.name, q.HyDEWeight)
		}
		if again := q.forQuery(c.st); again != q {
			t.Errorf("%s: forQuery twice: %+v then %+v", c.name, q, again)
		}
	}
	// Explicit settings without WeakVectorWeight are used as given.
	given := FusionOptions{RRFK: 7, VectorWeight: 0.3, TextWeight: 1, HyDEWeight: 0.2}
	if q := given.forQuery(common); q != given {
		t.Errorf("non-adaptive settings changed: %+v", q)
	}
}

// TestIndexFusionRecordedDefaults checks that an index recording its
// embedder's former defaults (before fusion was adaptive, and the
// built-in embedder's vector weight 0.1) gets today's defaults, and one
// recording other settings keeps them.
func TestIndexFusionRecordedDefaults(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name     string
		recorded FusionOptions
		want     FusionOptions
	}{
		{"old defaults", nonAdaptive(FusionDefaults(localEmbedderName(64))), FusionDefaults(localEmbedderName(64))},
		{"vector weight 0.1", FusionOptions{RRFK: 5, VectorWeight: 0.1, TextWeight: 1, HyDEWeight: 0.08, WeakVectorWeight: 3, WeakSpecificity: 0.4, WeakStopWords: 3}, FusionDefaults(localEmbedderName(64))},
		{"vector weight 0.1, not adaptive", FusionOptions{RRFK: 5, VectorWeight: 0.1, TextWeight: 1, HyDEWeight: 0.08}, FusionDefaults(localEmbedderName(64))},
		{"the textbook fusion without weak queries, given for the built-in embedder", nonAdaptive(FusionDefaults("ollama/nomic-embed-text")), nonAdaptive(FusionDefaults("ollama/nomic-embed-text"))},
		{"own settings", FusionOptions{RRFK: 2, VectorWeight: 0.2, TextWeight: 1, HyDEWeight: 0.1}, FusionOptions{RRFK: 2, VectorWeight: 0.2, TextWeight: 1, HyDEWeight: 0.1}},
	} {
		s := searchTestStore(t, "sqlite", NewLocalEmbedder(64), 64)
		f := c.recorded
		if _, _, err := s.(indexRecorder).recordIndexInfo(ctx, IndexInfo{Embedder: localEmbedderName(64), Dim: 64, Fusion: &f}); err != nil {
			t.Fatal(err)
		}
		got, err := indexFusion(ctx, s)
		if err != nil || got != c.want {
			t.Errorf("%s: indexFusion %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// TestFusionMayBeWeak checks that Search's cheap check before asking the
// store for statistics never skips a question the statistics would call
// weak, and counts stop words as the stores do.
func TestFusionMayBeWeak(t *testing.T) {
	ctx := t.Context()
	corpus, _, _ := weakTestCorpus()
	s := indexedTestStore(t, "sqlite", NewLocalEmbedder(64), 64, corpus)
	f := FusionDefaults(localEmbedderName(64))
	for _, c := range []struct {
		q     string
		stops int
		maybe bool
	}{
		{"What is a class?", 3, true},
		{"what is it", 3, true},
		{"How do I use using the class?", 6, true},
		{`What is a "class"?`, 3, false},
		{"What is a class", 3, true},
		{"class", 0, false},
		{"What is max_log_file_size?", 2, false},
		{"Where do I get it?", 5, true},
	} {
		st, err := s.(keywordStatser).keywordQueryStats(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if st.StopWords != c.stops {
			t.Errorf("%q: %d stop words, want %d", c.q, st.StopWords, c.stops)
		}
		if got := f.mayBeWeak(c.q); got != c.maybe || (f.weak(st) && !got) {
			t.Errorf("%q: mayBeWeak %v (want %v), Weak %v", c.q, got, c.maybe, f.weak(st))
		}
		// The report holds the statistics exactly when Search looked at
		// them: fusion mode and a question that may be weak.
		for _, mode := range []SearchMode{SearchModeFusion, SearchModeKeyword} {
			_, rep, err := searchReported(ctx, s, c.q, &SearchOptions{Mode: mode, Fusion: &f})
			if err != nil {
				t.Fatal(err)
			}
			want := KeywordQueryStats{}
			if mode == SearchModeFusion && c.maybe {
				want = st
			}
			if fmt.Sprint(rep.Keywords) != fmt.Sprint(want) {
				t.Errorf("%q, %s: report's statistics %+v, want %+v", c.q, mode, rep.Keywords, want)
			}
		}
	}
}
