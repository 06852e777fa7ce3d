package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// localvecDefaultK is the number of documents the Retriever returns when
// the request does not say (Genkit's localvec default).
const localvecDefaultK = 3

// localvecParallelMin is the matrix size (rows x dimensions) from which a
// query scans in parallel, one part of the rows per CPU.
const localvecParallelMin = 1 << 20

// localvecRetrieverK returns the k a retriever request's Options ask for.
func localvecRetrieverK(opts any) (int, error) {
	k := 0
	switch o := opts.(type) {
	case nil:
	case *localvec.RetrieverOptions:
		if o != nil {
			k = o.K
		}
	case localvec.RetrieverOptions:
		k = o.K
	default:
		b, err := json.Marshal(opts)
		if err != nil {
			return 0, fmt.Errorf("retriever options %T: %w", opts, err)
		}
		var v struct {
			K *float64 `json:"k"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return 0, fmt.Errorf("retriever options %T: want an object with a numeric \"k\": %w", opts, err)
		}
		if v.K != nil {
			k = int(*v.K)
		}
	}
	if k <= 0 {
		k = localvecDefaultK
	}
	return k, nil
}

// retrieve is the Retriever's function: it embeds the query and returns the
// k stored documents with the highest cosine similarity, best first.
func (s *LocalvecStore) retrieve(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("localvec retrieve: %w", err)
	}
	if req == nil || req.Query == nil {
		return nil, fmt.Errorf("localvec retrieve: request has no query document")
	}
	k, err := localvecRetrieverK(req.Options)
	if err != nil {
		return nil, fmt.Errorf("localvec retrieve: %w", err)
	}
	vecs, err := embedChecked(ctx, s.emb, []*ai.Document{req.Query}, 0)
	if err != nil {
		return nil, fmt.Errorf("localvec retrieve: query: %w", err)
	}
	q := vecs[0]
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("localvec retrieve: %w", ErrStoreClosed)
	}
	if len(s.rows.ids) == 0 {
		return &ai.RetrieverResponse{}, nil
	}
	if len(q) != s.rows.dim {
		return nil, fmt.Errorf("localvec retrieve: %w: query vector has %d dimensions, the store has %d", ErrDimensionMismatch, len(q), s.rows.dim)
	}
	top := s.rows.topK(q, k)
	docs := make([]*ai.Document, len(top))
	for i, h := range top {
		docs[i] = localvecCopyDoc(s.rows.docs[h.row])
	}
	return &ai.RetrieverResponse{Documents: docs}, nil
}

// localvecCopyDoc returns a copy of a stored document that a caller may
// change (add metadata, say) without changing the store: the content slice
// and the top-level metadata map are copied, the parts are shared.
func localvecCopyDoc(d *ai.Document) *ai.Document {
	return &ai.Document{Content: slices.Clone(d.Content), Metadata: maps.Clone(d.Metadata)}
}

// localvecHit is a scored row.
type localvecHit struct {
	score float32
	row   int
}

// localvecHeap is a min-heap of the k best hits seen so far: the root is the
// worst of them, the one a better hit replaces.
type localvecHeap []localvecHit

// worse reports whether a ranks below b (lower score; on equal scores the
// later row, so results are deterministic).
func localvecWorse(a, b localvecHit) bool {
	return a.score < b.score || (a.score == b.score && a.row > b.row)
}

func (h localvecHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && localvecWorse(h[r], h[l]) {
			m = r
		}
		if !localvecWorse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h localvecHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !localvecWorse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// offer adds x if the heap holds fewer than k hits or x beats the worst.
func (h *localvecHeap) offer(x localvecHit, k int) {
	if len(*h) < k {
		*h = append(*h, x)
		h.up(len(*h) - 1)
		return
	}
	if localvecWorse((*h)[0], x) {
		(*h)[0] = x
		h.down(0)
	}
}

// localvecScanTopK scores rows 0..n-1 of a matrix of dim columns with
// score and returns the k best (all when k >= n) as an unordered heap.
// Large matrices are scanned in parallel, one part per CPU, and the parts'
// heaps merged. It is the vector scan of LocalvecStore and SQLiteStore.
func localvecScanTopK(n, dim, k int, score func(i int) float32) localvecHeap {
	k = min(k, n)
	if k <= 0 {
		return nil
	}
	parts := 1
	if n*dim >= localvecParallelMin {
		parts = min(runtime.GOMAXPROCS(0), n/1024+1)
	}
	heaps := make([]localvecHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		scan := func() {
			h := make(localvecHeap, 0, k)
			for i := lo; i < hi; i++ {
				h.offer(localvecHit{score(i), i}, k)
			}
			heaps[p] = h
		}
		if parts == 1 {
			scan()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); scan() }()
	}
	wg.Wait()
	all := heaps[0]
	for _, h := range heaps[1:] {
		for _, x := range h {
			all.offer(x, k)
		}
	}
	return all
}

// topK returns the k rows most similar to q (cosine), best first. Rows are
// scored as dot(q/|q|, row) * inv[row]: one dot product and one multiply per
// row. Large matrices are scanned in parallel. Called with mu held shared.
func (r *localvecRows) topK(q []float32, k int) []localvecHit {
	qn := slices.Clone(q)
	if inv := localvecInvNorm(qn); inv != 0 {
		for i := range qn {
			qn[i] *= inv
		}
	}
	all := localvecScanTopK(len(r.ids), r.dim, k, func(i int) float32 {
		return localvecDot(qn, r.vec(i)) * r.inv[i]
	})
	slices.SortFunc(all, func(a, b localvecHit) int {
		if localvecWorse(b, a) {
			return -1
		}
		if localvecWorse(a, b) {
			return 1
		}
		return 0
	})
	return all
}

// localvecDefaultAnalyzer is the English analyzer: a LocalvecStore's
// keyword index uses it for English or unknown text (keywordAnalyzer).
var localvecDefaultAnalyzer = &textAnalyzer{lang: defaultTextSearchLanguage, stem: textStemmers[defaultTextSearchLanguage]}

// keywords returns the BM25 index of every row analysed with an: rows.kw,
// first made new if it is missing or analyses with another analyzer, then
// given the rows added since it was last brought up to date (in order, so
// it is the index add would have built one row at a time). Called with the
// store's mu held exclusively, or shared and the store's kwMu held.
func (r *localvecRows) keywords(an *textAnalyzer) *bm25Index {
	if r.kw == nil || r.kw.an != an {
		r.kw = newBM25Index(an)
	}
	if n := r.kw.live(); n < len(r.docs) {
		r.kw.addDocs(r.docs[n:])
	}
	return r.kw
}

// keywordAnalyzer returns the store's keyword analyzer: the one
// LocalvecOptions.KeywordLanguage chose, else the one of keywordLanguageFor over the
// rows' detected languages (English stems for English or unknown text, no
// stemming for another language), so that a change of the rows' main
// language rebuilds the index at the next query. Called with mu held.
func (s *LocalvecStore) keywordAnalyzer() *textAnalyzer {
	if s.kwAn != nil {
		return s.kwAn
	}
	return analyzerForLanguages(s.rows.langs)
}

// keywordIndex returns the store's BM25 index of every row, indexing the
// rows written since the last keyword query first. Called with mu held
// shared: concurrent queries take turns (kwMu) to bring it up to date,
// and once it is, they only read it until a writer (mu held exclusively)
// changes the rows.
func (s *LocalvecStore) keywordIndex() *bm25Index {
	s.kwMu.Lock()
	defer s.kwMu.Unlock()
	return s.rows.keywords(s.keywordAnalyzer())
}

// SetKeywordLanguage sets the language of the store's keyword ranking and
// rebuilds its inverted index in memory (the file is not touched); an
// unknown language is an error wrapping ErrUnknownLanguage and changes
// nothing.
//
// Deprecated: Use NewLocalvecStoreWithOptions with
// LocalvecOptions.KeywordLanguage: the language is set when the store
// opens, not after.
func (s *LocalvecStore) SetKeywordLanguage(language string) error {
	an, err := newTextAnalyzer(language)
	if err != nil {
		return fmt.Errorf("localvec keyword language: %w", err)
	}
	return s.setKeywordAnalyzer(an)
}

// setKeywordAnalyzer makes an the keyword analyzer and rebuilds the
// inverted index with it, blocking queries and writes meanwhile.
func (s *LocalvecStore) setKeywordAnalyzer(an *textAnalyzer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("localvec keyword language: %w", ErrStoreClosed)
	}
	s.kwAn = an
	s.rows.keywords(an)
	return nil
}

// newLocalvecBM25 returns the BM25 index of docs, row i being docs[i].
func newLocalvecBM25(an *textAnalyzer, docs []*ai.Document) *bm25Index {
	x := newBM25Index(an)
	x.addDocs(docs)
	return x
}
