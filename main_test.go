package engine

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// testLoopback is the fetcher of the tests that fetch pages from httptest
// servers on 127.0.0.1: its own guard setting lets private targets through,
// injected where a test needs it (crawlOptions.fetch, webFetcher methods).
// The package setting stays at its default, so every other fetch in the test
// binary, including those through FetchWebPage and RunCrawl, runs guarded.
var testLoopback = newWebFetcher(webFetcherDeps{guard: new(bool)})

// testEmbedder is the shared test fake for ai.Embedder. It implements the
// interface directly (no genkit.DefineEmbedder, whose schema validation would
// dominate benchmarks), counts calls and embedded documents, and returns
// deterministic bag-of-words vectors: texts sharing words are similar.
type testEmbedder struct {
	dim   int
	calls atomic.Int64 // Embed calls
	docs  atomic.Int64 // documents embedded
	// fail, when set, is consulted before each call (1-based call number);
	// a non-nil result is returned as the call's error.
	fail func(call int64) error
}

func newTestEmbedder(dim int) *testEmbedder { return &testEmbedder{dim: dim} }

func (e *testEmbedder) Name() string            { return "test/bow-embedder" }
func (e *testEmbedder) Register(r api.Registry) {}

func (e *testEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	n := e.calls.Add(1)
	if e.fail != nil {
		if err := e.fail(n); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	resp := &ai.EmbedResponse{Embeddings: make([]*ai.Embedding, len(req.Input))}
	for i, d := range req.Input {
		resp.Embeddings[i] = &ai.Embedding{Embedding: testVector(DocText(d), e.dim)}
	}
	e.docs.Add(int64(len(req.Input)))
	return resp, nil
}

// testVector hashes the lower-cased words of text into dim buckets and L2
// normalises the result; an empty text gets a fixed unit vector.
func testVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,;:!?\"'()[]")
		if w == "" {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[int(h.Sum32())%dim]++
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}
