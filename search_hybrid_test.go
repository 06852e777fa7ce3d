package engine

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// searchHits returns a Search result's hits, for tests that want only them.
func searchHits(res *SearchResult, err error) ([]SearchHit, error) {
	if err != nil {
		return nil, err
	}
	return res.Hits, nil
}

// searchReported runs Search and returns its hits and report apart.
func searchReported(ctx context.Context, s Searcher, q string, o *SearchOptions) ([]SearchHit, SearchReport, error) {
	res, err := Search(ctx, s, q, o)
	if err != nil {
		return nil, SearchReport{}, err
	}
	return res.Hits, res.Report, nil
}

// TestSearchSpans checks that every step of a search with HyDE and rerank
// is a span under the search's span, with its count and latency.
func TestSearchSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	ctx := context.Background()
	g := genkit.Init(ctx)
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "docs.db"), NewLocalEmbedder(256))
	if err := IndexInBatches(ctx, s, searchTestCorpus(), nil); err != nil {
		t.Fatal(err)
	}
	model := genkit.DefineModel(g, "test/search-model", nil, func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		text := "A kayak rental costs a price per day at the boathouse."
		if strings.Contains(req.Messages[len(req.Messages)-1].Text(), "Rate how well") {
			text = "[9, 2, 7, 1, 5, 3, 8, 0, 4, 6]"
		}
		return &ai.ModelResponse{Message: ai.NewModelTextMessage(text)}, nil
	})
	// The built-in prompts come from g (the steps name no Prompt).
	hits, rep, err := searchReported(ctx, s, "kayak rental price", &SearchOptions{
		Genkit: g,
		HyDE:   &SearchModel{Model: model},
		Rerank: &SearchModel{Model: model},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reranked || rep.HyDE == 0 || rep.HyDEPassage == "" || len(hits) != 10 {
		t.Fatalf("report %+v, %d hits", rep, len(hits))
	}
	if hits[0].Rerank != 9 || hits[0].Confidence != 9 || hits[0].ConfidenceBasis != "rerank" {
		t.Errorf("first hit: rerank %d, confidence %d (%s)", hits[0].Rerank, hits[0].Confidence, hits[0].ConfidenceBasis)
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		spans[sp.Name()] = sp
	}
	root, ok := spans["askyourdocs.search"]
	if !ok {
		t.Fatalf("no search span among %v", spans)
	}
	for _, name := range []string{"vector", "text", "hyde", "fusion", "rerank"} {
		sp, ok := spans["askyourdocs.search."+name]
		if !ok {
			t.Errorf("no %s span", name)
			continue
		}
		if sp.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%s span is not under the search span", name)
		}
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range sp.Attributes() {
			attrs[a.Key] = a.Value
		}
		if attrs["askyourdocs.count"].AsInt64() <= 0 {
			t.Errorf("%s span: count %v", name, attrs["askyourdocs.count"])
		}
		if _, ok := attrs["askyourdocs.latency_ms"]; !ok {
			t.Errorf("%s span: no latency", name)
		}
	}
}

// TestSearchConfidence checks the evidence confidence without a reranker:
// a question whose words the best passage quotes scores high, one with a
// word the index lacks is capped.
func TestSearchConfidence(t *testing.T) {
	ctx := context.Background()
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "docs.db"), NewLocalEmbedder(256))
	docs := []*ai.Document{
		ai.DocumentFromText("Kayak rental\nA day tour with a rented kayak costs 95 euros.", map[string]any{MetaURL: "a", MetaSource: "a"}),
		ai.DocumentFromText("Opening hours\nThe boathouse opens at eight.", map[string]any{MetaURL: "b", MetaSource: "b"}),
	}
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	hits, err := searchHits(Search(ctx, s, "kayak tour costs", nil))
	if err != nil || len(hits) == 0 {
		t.Fatalf("%d hits, %v", len(hits), err)
	}
	if hits[0].URL != "a" || hits[0].Confidence < 8 || hits[0].Excerpt != "Kayak rental\nA day tour with a rented kayak costs 95 euros." {
		t.Errorf("first hit %q: confidence %d (%s), excerpt %q", hits[0].URL, hits[0].Confidence, hits[0].ConfidenceBasis, hits[0].Excerpt)
	}
	hits, err = searchHits(Search(ctx, s, "kayak submarine", nil))
	if err != nil || len(hits) == 0 {
		t.Fatalf("%d hits, %v", len(hits), err)
	}
	if hits[0].Confidence > confidenceAbsentCap || !strings.Contains(hits[0].ConfidenceBasis, "submarine") {
		t.Errorf("absent word: confidence %d (%s)", hits[0].Confidence, hits[0].ConfidenceBasis)
	}
}

// TestSearchBuiltinPrompts: a model step without a Prompt takes the
// built-in one from SearchOptions.Genkit, defined there once even when
// many searches start at the same moment; a prompt of that name the app
// defined first is used instead; no Prompt and no Genkit is an error that
// names the step, and the caller's SearchModel is left as it was.
func TestSearchBuiltinPrompts(t *testing.T) {
	ctx := t.Context()
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "docs.db"), NewLocalEmbedder(256))
	if err := IndexInBatches(ctx, s, searchTestCorpus(), nil); err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(ctx)
	var prompts sync.Map // the texts the model was asked
	model := genkit.DefineModel(g, "test/builtin-prompt-model", nil, func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		prompts.Store(req.Messages[len(req.Messages)-1].Text(), true)
		return &ai.ModelResponse{Message: ai.NewModelTextMessage("A kayak rental costs a price per day.")}, nil
	})
	hyde := &SearchModel{Model: model}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := Search(ctx, s, "kayak rental price", &SearchOptions{Genkit: g, HyDE: hyde})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if hyde.Prompt != nil {
		t.Error("Search set the caller's SearchModel.Prompt")
	}
	asked := false
	prompts.Range(func(k, _ any) bool {
		asked = asked || strings.Contains(k.(string), "Write a short passage") && strings.Contains(k.(string), "kayak rental price")
		return true
	})
	if !asked {
		t.Error("the model was not asked the built-in HyDE prompt")
	}

	// An app's own prompt of the built-in name wins.
	g2 := genkit.Init(ctx)
	genkit.DefinePrompt(g2, "askyourdocs-hyde", ai.WithPrompt("OWN HYDE {{question}}"))
	model2 := genkit.DefineModel(g2, "test/own-prompt-model", nil, func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		prompts.Store(req.Messages[len(req.Messages)-1].Text(), true)
		return &ai.ModelResponse{Message: ai.NewModelTextMessage("passage")}, nil
	})
	if _, err := Search(ctx, s, "boathouse", &SearchOptions{Genkit: g2, HyDE: &SearchModel{Model: model2}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := prompts.Load("OWN HYDE boathouse"); !ok {
		t.Error("the app's own askyourdocs-hyde prompt was not used")
	}

	_, err := Search(ctx, s, "kayak", &SearchOptions{Rerank: &SearchModel{Model: model}})
	if err == nil || !strings.Contains(err.Error(), "askyourdocs-rerank") {
		t.Errorf("rerank without Prompt or Genkit: %v, want an error naming the step", err)
	}
}
