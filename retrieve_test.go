package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// rerankFake is a fake rerank model: it scores each "[n] passage" of the
// rendered prompt by the number after "s=" in the passage, counts calls and
// the most calls in flight, and fails calls whose prompt contains "FAIL".
type rerankFake struct {
	calls, inFlight, maxInFlight atomic.Int64
	reply                        func(scores []int) string
	// arrived, when non-nil, receives the number of calls in flight as
	// each call starts (it must have room for every call).
	arrived chan int64
	// gate, when non-nil, holds every call until it is closed or the
	// call's context ends.
	gate chan struct{}
}

var rerankFakePassage = regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)
var rerankFakeScore = regexp.MustCompile(`s=(\d+)`)

func (f *rerankFake) generate(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	f.calls.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if f.arrived != nil {
		f.arrived <- n
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	text := req.Messages[len(req.Messages)-1].Text()
	if strings.Contains(text, "FAIL") {
		return nil, errors.New("fake model failure")
	}
	var scores []int
	for _, m := range rerankFakePassage.FindAllStringSubmatch(text, -1) {
		s := 0
		if sm := rerankFakeScore.FindStringSubmatch(m[2]); sm != nil {
			s, _ = strconv.Atoi(sm[1])
		}
		scores = append(scores, s)
	}
	out := fmt.Sprint(scores)
	out = strings.ReplaceAll(strings.Trim(out, "[]"), " ", ", ")
	out = "[" + out + "]"
	if f.reply != nil {
		out = f.reply(scores)
	}
	return &ai.ModelResponse{Message: ai.NewModelTextMessage(out), FinishReason: ai.FinishReasonStop}, nil
}

// rerankSetup returns a Genkit instance with the fake model and a rerank
// prompt using the documented input contract.
func rerankSetup(t testing.TB, f *rerankFake) (*genkit.Genkit, ai.Model, ai.Prompt) {
	t.Helper()
	g := genkit.Init(context.Background())
	m := genkit.DefineModel(g, "test/rerank", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}}, f.generate)
	p := genkit.DefinePrompt(g, "rerank", ai.WithPrompt("Frage: {{question}} ({{count}} Passagen)\n{{{numbered}}}"))
	return g, m, p
}

func TestRerankScoresBatchesDedupAndOrder(t *testing.T) {
	f := &rerankFake{}
	_, m, p := rerankSetup(t, f)
	// 30 distinct texts plus 10 duplicates of some of them: 40 candidates.
	var texts []string
	for i := range 30 {
		texts = append(texts, fmt.Sprintf("passage %d s=%d", i, i%11))
	}
	for i := range 10 {
		texts = append(texts, texts[i*3])
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	scores := RerankScores(context.Background(), p, m, nil, "q", texts, RerankOptions{BatchSize: 5, Parallel: 3, DefaultScore: -1})
	if got := f.calls.Load(); got != 6 {
		t.Errorf("%d model calls, want 6 (30 distinct texts in batches of 5)", got)
	}
	if len(scores) != len(texts) {
		t.Fatalf("%d scores for %d texts", len(scores), len(texts))
	}
	for i, s := range scores {
		want, _ := strconv.Atoi(rerankFakeScore.FindStringSubmatch(texts[i])[1])
		if s != want {
			t.Errorf("score[%d] = %d, want %d (%q)", i, s, want, texts[i])
		}
	}
}

// No candidates: nil, as the original engine returns, and no model call.
func TestRerankScoresNone(t *testing.T) {
	g := genkit.Init(t.Context())
	m := genkit.DefineModel(g, "test/rerank-none", nil, func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		t.Error("model called without candidates")
		return nil, errors.New("unexpected")
	})
	p := genkit.DefinePrompt(g, "rerank-none", ai.WithPrompt("{{question}}"))
	for _, texts := range [][]string{nil, {}} {
		if got := RerankScores(t.Context(), p, m, nil, "q", texts, RerankOptions{DefaultScore: 3}); got != nil {
			t.Errorf("RerankScores(%#v) = %#v, want nil", texts, got)
		}
	}
}

// TestRerankScoresParallel proves RerankScores runs exactly opts.Parallel
// model calls at once: the fake holds every call until Parallel of them are
// in flight together (an implementation running fewer at once never gets
// there and the test fails on its deadline), and none of the calls ever
// saw more than Parallel in flight.
func TestRerankScoresParallel(t *testing.T) {
	for _, par := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("parallel=%d", par), func(t *testing.T) {
			const batches = 8
			f := &rerankFake{arrived: make(chan int64, batches), gate: make(chan struct{})}
			release := sync.OnceFunc(func() { close(f.gate) })
			t.Cleanup(release)
			_, m, p := rerankSetup(t, f)
			texts := make([]string, 3*batches)
			for i := range texts {
				texts[i] = fmt.Sprintf("t%d s=5", i)
			}
			done := make(chan []int, 1)
			go func() {
				done <- RerankScores(t.Context(), p, m, nil, "q", texts, RerankOptions{BatchSize: 3, Parallel: par})
			}()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			for reached := false; !reached; {
				select {
				case n := <-f.arrived:
					reached = n >= int64(par)
				case <-ctx.Done():
					t.Fatalf("never %d calls in flight at once (at most %d)", par, f.maxInFlight.Load())
				}
			}
			release()
			var scores []int
			select {
			case scores = <-done:
			case <-ctx.Done():
				t.Fatal("RerankScores did not return after the calls were released")
			}
			if got := f.calls.Load(); got != batches {
				t.Errorf("%d calls, want %d", got, batches)
			}
			if got := f.maxInFlight.Load(); got != int64(par) {
				t.Errorf("%d calls in flight at most, want exactly Parallel=%d", got, par)
			}
			for i, s := range scores {
				if s != 5 {
					t.Errorf("score[%d] = %d, want 5", i, s)
				}
			}
		})
	}
}

func TestRerankScoresFailedBatchKeepsDefault(t *testing.T) {
	f := &rerankFake{}
	_, m, p := rerankSetup(t, f)
	texts := []string{"a s=9", "b s=8", "FAIL s=7", "c s=6", "d s=1", "e s=2"}
	got := RerankScores(context.Background(), p, m, nil, "q", texts, RerankOptions{BatchSize: 2, DefaultScore: 4})
	want := []int{9, 8, 4, 4, 1, 2}
	if !slices.Equal(got, want) {
		t.Errorf("scores = %v, want %v", got, want)
	}
	// A reply with too few scores keeps the default for the rest; a score
	// outside 0-10 is clamped.
	f2 := &rerankFake{reply: func(s []int) string { return "[42]" }}
	_, m2, p2 := rerankSetup(t, f2)
	got = RerankScores(context.Background(), p2, m2, nil, "q", []string{"x", "y"}, RerankOptions{BatchSize: 2, DefaultScore: 3})
	if !slices.Equal(got, []int{10, 3}) {
		t.Errorf("scores = %v, want [10 3]", got)
	}
	// Cancelled before start: every score is the default, no call made.
	f3 := &rerankFake{}
	_, m3, p3 := rerankSetup(t, f3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got = RerankScores(ctx, p3, m3, nil, "q", []string{"x s=9", "y s=9"}, RerankOptions{DefaultScore: 2})
	if !slices.Equal(got, []int{2, 2}) || f3.calls.Load() != 0 {
		t.Errorf("cancelled: scores %v, %d calls", got, f3.calls.Load())
	}
	if got := RerankScores(context.Background(), nil, nil, nil, "q", []string{"x"}, RerankOptions{DefaultScore: 5}); !slices.Equal(got, []int{5}) {
		t.Errorf("nil prompt: %v", got)
	}
	if got := RerankScores(context.Background(), p, m, nil, "q", nil, RerankOptions{}); len(got) != 0 {
		t.Errorf("no texts: %v", got)
	}
}

func TestParseRerankScores(t *testing.T) {
	for _, tc := range []struct {
		reply string
		n     int
		want  []int
	}{
		{"[7, 2, 9]", 3, []int{7, 2, 9}},
		{"```json\n[7, 2.6, 9]\n```", 3, []int{7, 3, 9}},
		{`Here are the scores: {"scores": [1, 10, 5]}`, 3, []int{1, 10, 5}},
		{`[{"index": 2, "score": 8}, {"index": 1, "score": 3}]`, 2, []int{3, 8}},
		{`[{"id": 0, "relevance": 4}, {"id": 1, "relevance": 6}]`, 2, []int{4, 6}},
		{`{"1": 7, "2": "5/10"}`, 2, []int{7, 5}},
		{"1: 7\n2: 3\n3: 10", 3, []int{7, 3, 10}},
		{"[1] 6/10\n[2] 2/10", 2, []int{6, 2}},
		{"Passage 1: 9\nPassage 2 - 4", 2, []int{9, 4}},
		{"Scores 8 and 3.", 2, []int{8, 3}},
		{"1 8 2 3", 2, []int{8, 3}},
		{"[12, -3]", 2, []int{10, 0}},
		{"no numbers here", 2, []int{-1, -1}},
		{"[5]", 3, []int{5, -1, -1}},
		{"[1,2,3,4]", 2, []int{1, 2}},
		{"", 0, []int{}},
	} {
		got := parseRerankScores(tc.reply, tc.n)
		if !slices.Equal(got, tc.want) {
			t.Errorf("parseRerankScores(%q, %d) = %v, want %v", tc.reply, tc.n, got, tc.want)
		}
	}
}

func FuzzParseRerankScores(f *testing.F) {
	for _, s := range []string{"[7, 2, 9]", `{"scores":[1,2]}`, "1: 7\n2: 3", `[{"index":2,"score":8}]`, "{", "[[[[1]]]]", `{"1":"x"}`} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, reply string, n int) {
		n = ((n % 50) + 50) % 50
		got := parseRerankScores(reply, n)
		if len(got) != n {
			t.Fatalf("len %d, want %d", len(got), n)
		}
		for _, s := range got {
			if s < -1 || s > 10 {
				t.Fatalf("score %d out of range", s)
			}
		}
	})
}

func TestGenerateHyDEText(t *testing.T) {
	g := genkit.Init(context.Background())
	var lastPrompt string
	reply := "Die Frist beträgt 14 Tage."
	var fail bool
	m := genkit.DefineModel(g, "test/hyde", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			lastPrompt = req.Messages[len(req.Messages)-1].Text()
			if fail {
				return nil, errors.New("model down")
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("  " + reply + "\n")}, nil
		})
	p := genkit.DefinePrompt(g, "hyde", ai.WithPrompt("Schreibe eine Passage, die beantwortet: {{question}}"))
	const q = "Wie lange ist die Frist?"
	if got := GenerateHyDEText(context.Background(), p, m, nil, q); got != reply {
		t.Errorf("got %q", got)
	}
	if lastPrompt != "Schreibe eine Passage, die beantwortet: "+q {
		t.Errorf("prompt input not passed: %q", lastPrompt)
	}
	reply = "   "
	if got := GenerateHyDEText(context.Background(), p, m, nil, q); got != q {
		t.Errorf("empty reply: got %q, want the question", got)
	}
	fail = true
	if got := GenerateHyDEText(context.Background(), p, m, nil, q); got != q {
		t.Errorf("error: got %q, want the question", got)
	}
	if got := GenerateHyDEText(context.Background(), nil, m, nil, q); got != q {
		t.Errorf("nil prompt: got %q", got)
	}
}

func TestPromptOptions(t *testing.T) {
	if n := len(PromptOptions(nil, nil, nil)); n != 0 {
		t.Errorf("%d options for nothing", n)
	}
	g := genkit.Init(context.Background())
	m := genkit.DefineModel(g, "test/po", nil, func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		cfg, _ := req.Config.(*ollamaConfig)
		return &ai.ModelResponse{Message: ai.NewModelTextMessage(fmt.Sprintf("%d", cfg.NumCtx))}, nil
	})
	p := genkit.DefinePrompt(g, "po", ai.WithPrompt("{{x}}"))
	opts := PromptOptions(m, &ollamaConfig{NumCtx: 77}, map[string]any{"x": "y"})
	if len(opts) != 3 {
		t.Fatalf("%d options", len(opts))
	}
	resp, err := p.Execute(context.Background(), opts...)
	if err != nil || resp.Text() != "77" {
		t.Errorf("config did not reach the model: %v %v", resp, err)
	}
}

func rrfDocs(texts ...string) []*ai.Document {
	out := make([]*ai.Document, len(texts))
	for i, s := range texts {
		out[i] = ai.DocumentFromText(s, map[string]any{"i": i})
	}
	return out
}

func TestReciprocalRankFusionHandComputed(t *testing.T) {
	lists := []RankedList{
		{Docs: rrfDocs("a", "b", "c"), Weight: 1},
		{Docs: rrfDocs("c", "a", "d"), Weight: 2},
	}
	got := ReciprocalRankFusion(lists, 1, 0)
	// k=1: a = 1/2 + 2/3, c = 1/4 + 2/2, b = 1/3, d = 2/4
	want := []struct {
		text  string
		score float64
	}{{"c", 1.25}, {"a", 7.0 / 6}, {"d", 0.5}, {"b", 1.0 / 3}}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Text != w.text || math.Abs(got[i].Score-w.score) > 1e-12 || DocText(got[i].Doc) != w.text {
			t.Errorf("result %d = %q %.4f, want %q %.4f", i, got[i].Text, got[i].Score, w.text, w.score)
		}
	}
	if got := ReciprocalRankFusion(lists, 1, 2); len(got) != 2 || got[0].Text != "c" {
		t.Errorf("maxResults 2: %v", got)
	}
	// k <= 0 means 60; weight 0 counts as 1.
	a := ReciprocalRankFusion([]RankedList{{Docs: rrfDocs("x")}}, 0, 0)
	if len(a) != 1 || math.Abs(a[0].Score-1.0/61) > 1e-15 {
		t.Errorf("defaults: %v", a)
	}
	if got := ReciprocalRankFusion(nil, 60, 10); len(got) != 0 {
		t.Errorf("no lists: %v", got)
	}
}

func TestReciprocalRankFusionDedupAndTies(t *testing.T) {
	first := ai.DocumentFromText("same", map[string]any{"from": "list0"})
	lists := []RankedList{
		{Docs: []*ai.Document{ai.DocumentFromText("p", nil), first, nil, ai.DocumentFromText("same", map[string]any{"from": "list0-repeat"})}},
		{Docs: []*ai.Document{ai.DocumentFromText("q", nil), ai.DocumentFromText("same", map[string]any{"from": "list1"})}},
	}
	got := ReciprocalRankFusion(lists, 60, 0)
	if len(got) != 3 {
		t.Fatalf("%d results: %v", len(got), got)
	}
	// "same" counts once per list at its best rank: 2/62.
	if got[0].Text != "same" || math.Abs(got[0].Score-2.0/62) > 1e-15 || got[0].Doc != first {
		t.Errorf("first = %q %v (%v)", got[0].Text, got[0].Score, got[0].Doc.Metadata)
	}
	// p and q tie at 1/61: list order decides.
	if got[1].Text != "p" || got[2].Text != "q" {
		t.Errorf("tie order = %q, %q; want p, q", got[1].Text, got[2].Text)
	}
	for range 20 {
		again := ReciprocalRankFusion(lists, 60, 0)
		for i := range got {
			if again[i].Text != got[i].Text {
				t.Fatal("order not deterministic")
			}
		}
	}
}

// rrfDirect is a direct implementation of the RRF formula, for the
// property test.
func rrfDirect(lists []RankedList, k int) map[string]float64 {
	scores := map[string]float64{}
	for _, l := range lists {
		w := l.Weight
		if w == 0 {
			w = 1
		}
		best := map[string]int{}
		for r, d := range l.Docs {
			if d == nil {
				continue
			}
			if _, ok := best[DocText(d)]; !ok {
				best[DocText(d)] = r
			}
		}
		for text, r := range best {
			scores[text] += w / float64(k+r+1)
		}
	}
	return scores
}

func TestReciprocalRankFusionProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 300 {
		nLists := 1 + r.IntN(6)
		lists := make([]RankedList, nLists)
		for i := range lists {
			n := r.IntN(30)
			docs := make([]*ai.Document, n)
			for j := range docs {
				if r.IntN(20) == 0 {
					continue // nil entry
				}
				docs[j] = ai.DocumentFromText(fmt.Sprintf("d%d", r.IntN(40)), nil)
			}
			lists[i] = RankedList{Docs: docs, Weight: float64(r.IntN(4)) * 0.5}
		}
		k := 1 + r.IntN(80)
		max := r.IntN(15) - 3
		got := ReciprocalRankFusion(lists, k, max)
		want := rrfDirect(lists, k)
		if max <= 0 && len(got) != len(want) {
			t.Fatalf("iter %d: %d results, want %d", iter, len(got), len(want))
		}
		if max > 0 && len(got) != min(max, len(want)) {
			t.Fatalf("iter %d: %d results, want %d", iter, len(got), min(max, len(want)))
		}
		seen := map[string]bool{}
		for i, fd := range got {
			if seen[fd.Text] {
				t.Fatalf("iter %d: duplicate %q", iter, fd.Text)
			}
			seen[fd.Text] = true
			if math.Abs(fd.Score-want[fd.Text]) > 1e-12 {
				t.Fatalf("iter %d: %q score %v, want %v", iter, fd.Text, fd.Score, want[fd.Text])
			}
			if i > 0 && got[i-1].Score < fd.Score {
				t.Fatalf("iter %d: not sorted at %d", iter, i)
			}
		}
		// A capped result is the top of the full ranking.
		all := make([]float64, 0, len(want))
		for _, s := range want {
			all = append(all, s)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(all)))
		for i, fd := range got {
			if math.Abs(fd.Score-all[i]) > 1e-12 {
				t.Fatalf("iter %d: result %d has score %v, the %d-best is %v", iter, i, fd.Score, i, all[i])
			}
		}
	}
}

func BenchmarkReciprocalRankFusion(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	lists := make([]RankedList, 10)
	for i := range lists {
		docs := make([]*ai.Document, 100)
		for j := range docs {
			docs[j] = ai.DocumentFromText(fmt.Sprintf("chunk %d of some document with a bit of text", r.IntN(500)), nil)
		}
		lists[i] = RankedList{Docs: docs, Weight: 1}
	}
	b.ReportAllocs()
	for b.Loop() {
		ReciprocalRankFusion(lists, 60, 20)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/input-doc")
}

// BenchmarkReciprocalRankFusionCLI measures the CLI's fusion: a vector and
// a keyword list of 40 chunks each (depth 40) with the default weights,
// 1,000 fusions per iteration so that -benchtime 1x is enough.
func BenchmarkReciprocalRankFusionCLI(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	list := func() []*ai.Document {
		docs := make([]*ai.Document, 40)
		for j := range docs {
			docs[j] = ai.DocumentFromText(fmt.Sprintf("chunk %d of a manual page, a few hundred characters of text in the real case", r.IntN(120)), nil)
		}
		return docs
	}
	lists := []RankedList{{Docs: list(), Weight: 0.02}, {Docs: list(), Weight: 1}}
	n := 0
	for b.Loop() {
		for range 1000 {
			ReciprocalRankFusion(lists, 10, 40)
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/1e3, "µs/fusion")
}

// rerankStaticPrompt is an ai.Prompt that answers every call with the same
// reply without going through Genkit, to measure RerankScores' own cost.
type rerankStaticPrompt struct{ reply string }

func (p rerankStaticPrompt) Name() string { return "static" }
func (p rerankStaticPrompt) Execute(ctx context.Context, opts ...ai.PromptExecuteOption) (*ai.ModelResponse, error) {
	return &ai.ModelResponse{Message: ai.NewModelTextMessage(p.reply)}, nil
}
func (p rerankStaticPrompt) ExecuteStream(ctx context.Context, opts ...ai.PromptExecuteOption) iter.Seq2[*ai.ModelStreamValue, error] {
	return nil
}
func (p rerankStaticPrompt) Render(ctx context.Context, input any) (*ai.GenerateActionOptions, error) {
	return nil, nil
}

// BenchmarkRerankScoresOverhead measures what RerankScores costs per
// candidate with a model that answers instantly: "own" calls an ai.Prompt
// directly (dedup, batching, goroutines, input assembly, reply parsing);
// "genkit" goes through a Genkit prompt and DefineModel fake (adds prompt
// rendering and Genkit's per-call schema validation).
func BenchmarkRerankScoresOverhead(b *testing.B) {
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = fmt.Sprintf("candidate passage number %d with some words s=%d", i, i%11)
	}
	texts = append(texts, texts[:20]...) // 120 candidates, 100 distinct
	b.Run("own", func(b *testing.B) {
		p := rerankStaticPrompt{reply: "[3, 9, 4, 7, 1, 0, 10, 5, 6, 2]"}
		b.ReportAllocs()
		for b.Loop() {
			RerankScores(context.Background(), p, nil, nil, "question", texts, RerankOptions{BatchSize: 10, Parallel: 2})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/candidate")
	})
	b.Run("genkit", func(b *testing.B) {
		f := &rerankFake{}
		_, m, p := rerankSetup(b, f)
		b.ReportAllocs()
		for b.Loop() {
			RerankScores(context.Background(), p, m, nil, "question", texts, RerankOptions{BatchSize: 10, Parallel: 2})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/candidate")
	})
}

// pipelineSearch ranks corpus by cosine similarity to query under emb and
// returns the k best: a brute-force vector retriever for the pipeline test.
func pipelineSearch(t *testing.T, emb ai.Embedder, corpus []*ai.Document, query *ai.Document, k int) []*ai.Document {
	t.Helper()
	resp, err := emb.Embed(context.Background(), &ai.EmbedRequest{Input: append([]*ai.Document{query}, corpus...)})
	if err != nil {
		t.Fatal(err)
	}
	q := resp.Embeddings[0].Embedding
	type hit struct {
		doc *ai.Document
		sim float64
	}
	hits := make([]hit, len(corpus))
	for i, d := range corpus {
		hits[i] = hit{d, localCosine(q, resp.Embeddings[i+1].Embedding)}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].sim > hits[j].sim })
	out := make([]*ai.Document, 0, k)
	for _, h := range hits[:k] {
		out = append(out, h.doc)
	}
	return out
}

// TestRetrievalPipelineWithFakes runs question -> HyDE -> two retrievals
// -> RRF -> rerank -> top-k against fakes and checks the order the fake
// rerank scores imply.
func TestRetrievalPipelineWithFakes(t *testing.T) {
	f := &rerankFake{}
	g, rerankModel, rerankPrompt := rerankSetup(t, f)
	var hydeCalls atomic.Int64
	hydeModel := genkit.DefineModel(g, "test/hyde-pipeline", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			hydeCalls.Add(1)
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("Der Vermieter muss die Kaution nach Ende des Mietvertrags zurückzahlen, meist innerhalb von sechs Monaten.")}, nil
		})
	hydePrompt := genkit.DefinePrompt(g, "hyde-pipeline", ai.WithPrompt("Passage zu: {{question}}"))

	// Relevant chunks carry middling fake scores; off-topic chunks carry
	// the top score 10, so they would win if retrieval let them through.
	corpus := rrfDocs(
		"Die Kaution für den Mietvertrag beträgt höchstens drei Monatsmieten. s=6",             // A
		"Nach dem Ende des Mietvertrags muss der Vermieter die Kaution zurückzahlen. s=9",      // B
		"Die Kaution darf der Vermieter sechs Monate nach Ende des Mietvertrags behalten. s=8", // C
		"Kaution und Mietvertrag: der Mieter zahlt die Kaution in drei Raten. s=3",             // D
		"Das Schwimmbad öffnet im Sommer um neun Uhr. s=10",                                    // off-topic
		"Fahrräder sind im Hof abzustellen. s=10",                                              // off-topic
		"Die Bibliothek verleiht Bücher für vier Wochen. s=10",                                 // off-topic
	)
	emb := NewLocalEmbedder(512)
	question := "Wann bekomme ich die Kaution für meinen Mietvertrag zurück?"

	hyde := GenerateHyDEText(context.Background(), hydePrompt, hydeModel, nil, question)
	byQuestion := pipelineSearch(t, emb, corpus, QueryDocument(question), 3)
	byHyDE := pipelineSearch(t, emb, corpus, ai.DocumentFromText(hyde, nil), 3)
	fused := ReciprocalRankFusion([]RankedList{{Docs: byQuestion, Weight: 1}, {Docs: byHyDE, Weight: 0.8}}, 60, 6)
	texts := make([]string, len(fused))
	for i, fd := range fused {
		texts[i] = fd.Text
		if strings.Contains(fd.Text, "s=10") {
			t.Errorf("off-topic chunk retrieved: %q", fd.Text)
		}
	}
	scores := RerankScores(context.Background(), rerankPrompt, rerankModel, nil, question, texts, RerankOptions{BatchSize: 2, Parallel: 2})
	order := make([]int, len(fused))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	var top []string
	for _, i := range order[:3] {
		top = append(top, strings.Fields(fused[i].Text)[len(strings.Fields(fused[i].Text))-1])
	}
	if got := strings.Join(top, " "); got != "s=9 s=8 s=6" {
		t.Errorf("top-3 by rerank = %s, want s=9 s=8 s=6 (B, C, A)", got)
	}
	if hydeCalls.Load() != 1 {
		t.Errorf("%d HyDE calls", hydeCalls.Load())
	}
	if want := int64((len(texts) + 1) / 2); f.calls.Load() != want {
		t.Errorf("%d rerank calls for %d candidates in batches of 2, want %d", f.calls.Load(), len(texts), want)
	}
}

// TestReciprocalRankFusionFirstOfAllIsFirst checks, on random lists with
// random weights, that a document every list ranks first is ranked first.
func TestReciprocalRankFusionFirstOfAllIsFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for iter := range 500 {
		top := ai.DocumentFromText("top", nil)
		var lists []RankedList
		for range 1 + r.IntN(4) {
			docs := []*ai.Document{top}
			for range r.IntN(50) {
				docs = append(docs, ai.DocumentFromText(fmt.Sprintf("d%d", r.IntN(60)), nil))
			}
			lists = append(lists, RankedList{Docs: docs, Weight: r.Float64() * 3})
		}
		got := ReciprocalRankFusion(lists, r.IntN(100), 0)
		if len(got) == 0 || got[0].Text != "top" {
			t.Fatalf("iter %d: first is %q", iter, got[0].Text)
		}
	}
}
