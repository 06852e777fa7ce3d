package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
)

// storeFakeBatches is a VectorStore fake that records Index batches and,
// optionally, the deferred-persist session calls.
type storeFakeBatches struct {
	batches  [][]*ai.Document
	failAt   int // 1-based Index call that fails; 0 = never
	begins   int
	ends     int
	persists int // persists: at every Index outside a session, at the last end
	depth    int
}

func (s *storeFakeBatches) Index(ctx context.Context, docs []*ai.Document) error {
	if s.failAt > 0 && len(s.batches)+1 == s.failAt {
		return errors.New("fake index failure")
	}
	s.batches = append(s.batches, docs)
	if s.depth == 0 {
		s.persists++
	}
	return nil
}
func (s *storeFakeBatches) DeleteByURL(ctx context.Context, url string) (int, error) { return 0, nil }
func (s *storeFakeBatches) DeleteBySource(ctx context.Context, name string) (int, error) {
	return 0, nil
}
func (s *storeFakeBatches) Close() error { return nil }

// storeFakePersister adds a Bulk run to storeFakeBatches, as a store whose
// every write rewrites the whole store (wholeStoreBulker): what it holds
// persists once, when the run ends.
type storeFakePersister struct{ storeFakeBatches }

func (s *storeFakePersister) rewritesWholeStore() {}
func (s *storeFakePersister) Bulk(ctx context.Context, fn func(VectorStore) error) error {
	s.begins++
	s.depth++
	err := runBatch(s, fn)
	s.ends++
	s.depth--
	if s.depth == 0 {
		s.persists++
	}
	return err
}
func (s *storeFakePersister) writeBatch(ctx context.Context, _ replaceScope, docs []*ai.Document, _ func(done, total int)) (int, int, error) {
	return len(docs), 0, s.Index(ctx, docs)
}
func (s *storeFakePersister) deleteBatch(context.Context, string, string) (int, error) { return 0, nil }
func (s *storeFakePersister) countScope(context.Context, replaceScope) (int, error)    { return 0, nil }

func storeTestDocs(n int) []*ai.Document {
	docs := make([]*ai.Document, n)
	for i := range docs {
		docs[i] = ai.DocumentFromText(fmt.Sprintf("chunk number %d", i), map[string]any{MetaURL: "u"})
	}
	return docs
}

func TestIndexInBatchesSplitsAndReportsProgress(t *testing.T) {
	for _, n := range []int{1, 99, 100, 101, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := &storeFakeBatches{}
			var got [][2]int
			docs := storeTestDocs(n)
			if err := IndexInBatches(t.Context(), s, docs, func(done, total int) { got = append(got, [2]int{done, total}) }); err != nil {
				t.Fatal(err)
			}
			wantBatches := (n + indexBatchSize - 1) / indexBatchSize
			if len(s.batches) != wantBatches {
				t.Fatalf("%d batches, want %d", len(s.batches), wantBatches)
			}
			var all []*ai.Document
			for i, b := range s.batches {
				if len(b) > indexBatchSize {
					t.Errorf("batch %d has %d docs", i, len(b))
				}
				all = append(all, b...)
			}
			if !slices.Equal(all, docs) {
				t.Error("batches do not concatenate to the input in order")
			}
			if len(got) != wantBatches || got[len(got)-1] != [2]int{n, n} {
				t.Errorf("progress %v", got)
			}
		})
	}
}

func TestIndexInBatchesDefersPersistOnce(t *testing.T) {
	s := &storeFakePersister{}
	if err := IndexInBatches(t.Context(), s, storeTestDocs(1000), nil); err != nil {
		t.Fatal(err)
	}
	if len(s.batches) != 10 || s.begins != 1 || s.ends != 1 || s.persists != 1 {
		t.Errorf("batches=%d begins=%d ends=%d persists=%d; want 10 1 1 1", len(s.batches), s.begins, s.ends, s.persists)
	}
	// Without the optional interface every batch persists.
	p := &storeFakeBatches{}
	if err := IndexInBatches(t.Context(), p, storeTestDocs(1000), nil); err != nil {
		t.Fatal(err)
	}
	if p.persists != 10 {
		t.Errorf("plain store persisted %d times, want 10", p.persists)
	}
}

func TestIndexInBatchesEndsSessionOnError(t *testing.T) {
	s := &storeFakePersister{}
	s.failAt = 3
	err := IndexInBatches(t.Context(), s, storeTestDocs(1000), nil)
	if err == nil {
		t.Fatal("no error from failing store")
	}
	if len(s.batches) != 2 || s.ends != 1 {
		t.Errorf("batches=%d ends=%d, want 2 1", len(s.batches), s.ends)
	}
}

func TestIndexInBatchesBadInput(t *testing.T) {
	s := &storeFakeBatches{}
	if err := IndexInBatches(t.Context(), s, nil, func(int, int) { t.Error("progress on empty input") }); err != nil {
		t.Errorf("empty input: %v", err)
	}
	docs := storeTestDocs(150)
	docs[120] = ai.DocumentFromText("  \n", nil)
	if err := IndexInBatches(t.Context(), s, docs, nil); !errors.Is(err, ErrEmptyDocument) {
		t.Errorf("blank document: err = %v, want ErrEmptyDocument", err)
	}
	docs[120] = nil
	if err := IndexInBatches(t.Context(), s, docs, nil); !errors.Is(err, ErrEmptyDocument) {
		t.Errorf("nil document: err = %v, want ErrEmptyDocument", err)
	}
	if len(s.batches) != 0 {
		t.Errorf("bad input wrote %d batches", len(s.batches))
	}
	if err := IndexInBatches(t.Context(), nil, docs, nil); err == nil {
		t.Error("nil store: no error")
	}
}

func TestIndexInBatchesStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := &storeFakePersister{}
	err := IndexInBatches(ctx, s, storeTestDocs(1000), func(done, total int) {
		if done == 300 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(s.batches) != 3 || s.ends != 1 {
		t.Errorf("batches=%d ends=%d after cancel at 300, want 3 1", len(s.batches), s.ends)
	}
}

// fixedEmbedder returns the same vectors for any request.
type fixedEmbedder struct{ vecs [][]float32 }

func (e fixedEmbedder) Name() string            { return "test/fixed" }
func (e fixedEmbedder) Register(r api.Registry) {}
func (e fixedEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	resp := &ai.EmbedResponse{}
	for _, v := range e.vecs {
		resp.Embeddings = append(resp.Embeddings, &ai.Embedding{Embedding: v})
	}
	return resp, nil
}

func TestEmbedChecked(t *testing.T) {
	two := []*ai.Document{ai.DocumentFromText("a", nil), ai.DocumentFromText("b", nil)}
	nan := float32(math.NaN())
	tests := []struct {
		name    string
		vecs    [][]float32
		dim     int
		wantErr string
		wantDim bool
	}{
		{"ok, dim from first", [][]float32{{1, 0}, {0, 1}}, 0, "", false},
		{"ok, fixed dim", [][]float32{{1, 0}, {0, 1}}, 2, "", false},
		{"too few vectors", [][]float32{{1, 0}}, 0, "returned 1 vectors", false},
		{"empty vector", [][]float32{{1, 0}, {}}, 0, "empty vector", false},
		{"mixed dims", [][]float32{{1, 0}, {1, 0, 0}}, 0, "", true},
		{"store dim", [][]float32{{1, 0}, {0, 1}}, 3, "", true},
		{"NaN", [][]float32{{1, 0}, {nan, 1}}, 0, "NaN or Inf", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := embedChecked(t.Context(), fixedEmbedder{tt.vecs}, two, tt.dim)
			switch {
			case tt.wantDim:
				if !errors.Is(err, ErrDimensionMismatch) {
					t.Errorf("err = %v, want ErrDimensionMismatch", err)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			default:
				if err != nil || len(got) != 2 {
					t.Errorf("got %v, %v", got, err)
				}
			}
		})
	}
}
