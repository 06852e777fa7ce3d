package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// localvecTestFile returns the content of the file at path ("" if missing).
func localvecTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func localvecTestDocs(n int, url string) []*ai.Document {
	docs := make([]*ai.Document, n)
	for i := range docs {
		docs[i] = ai.DocumentFromText(fmt.Sprintf("document %d talks about subject%d and area%d", i, i%10, i%3),
			map[string]any{MetaURL: url, MetaSource: "s" + strconv.Itoa(i%2)})
	}
	return docs
}

func localvecTexts(docs []*ai.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = DocText(d)
	}
	return out
}

func TestLocalvecStoreIndexRetrieveDelete(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newTestEmbedder(64)
	s := ingestTestLocalvec(t, dir, emb)
	if s.path != filepath.Join(dir, "__db_docs.json") {
		t.Errorf("path %s", s.path)
	}
	docs := append(localvecTestDocs(20, "u1"), localvecTestDocs(5, "u2")...)
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// 25 distinct? u2's first 5 differ from u1's by url metadata.
	if storedChunks(t, s) != 25 {
		t.Fatalf("%d chunks", storedChunks(t, s))
	}
	// Indexing the same documents again embeds nothing and writes nothing.
	calls, writes := emb.calls.Load(), s.fileWrites.Load()
	if err := s.Index(ctx, docs[:10]); err != nil || emb.calls.Load() != calls || s.fileWrites.Load() != writes {
		t.Errorf("re-index: %v, %d calls, %d writes", err, emb.calls.Load()-calls, s.fileWrites.Load()-writes)
	}
	if err := s.Index(ctx, nil); err != nil {
		t.Errorf("empty Index: %v", err)
	}

	for _, opts := range []any{
		&localvec.RetrieverOptions{K: 4},
		localvec.RetrieverOptions{K: 4},
		map[string]any{"k": 4},
		struct {
			K int `json:"k"`
		}{4},
	} {
		resp, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("document 7 talks about subject7 and area1", nil), Options: opts})
		if err != nil {
			t.Fatalf("%T: %v", opts, err)
		}
		if len(resp.Documents) != 4 || DocText(resp.Documents[0]) != DocText(docs[7]) {
			t.Errorf("%T: got %q", opts, localvecTexts(resp.Documents))
		}
	}
	resp, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("subject1", nil)})
	if err != nil || len(resp.Documents) != localvecDefaultK {
		t.Errorf("default k: %d, %v", len(resp.Documents), err)
	}
	if _, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("x", nil), Options: "five"}); err == nil {
		t.Error("string options: no error")
	}
	// Through the registry, as a genkit app would.
	g := genkit.Init(ctx)
	s2, err := NewLocalvecStore(g, "other", emb, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if localvec.Retriever(g, "other") == nil {
		t.Error("retriever not registered under localvec's name")
	}
	if _, err := NewLocalvecStore(g, "other", emb, dir); err == nil {
		t.Error("second store with the same name in one genkit: no error")
	}

	src, err := s.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{{"u1", "s0", 10, ""}, {"u1", "s1", 10, ""}, {"u2", "s0", 3, ""}, {"u2", "s1", 2, ""}}
	if !slices.Equal(src, want) {
		t.Errorf("Sources = %v, want %v", src, want)
	}
	if n, err := s.DeleteBySource(ctx, "s1"); err != nil || n != 12 {
		t.Errorf("DeleteBySource: %d, %v", n, err)
	}
	if n, err := s.DeleteByURL(ctx, "u1"); err != nil || n != 10 {
		t.Errorf("DeleteByURL: %d, %v", n, err)
	}
	if n, err := s.DeleteByURL(ctx, ""); err != nil || n != 0 {
		t.Errorf("DeleteByURL(\"\"): %d, %v", n, err)
	}
	if storedChunks(t, s) != 3 {
		t.Errorf("%d chunks after deletes, want 3", storedChunks(t, s))
	}
	// The file says the same after reopening.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := ingestTestLocalvec(t, dir, emb)
	if storedChunks(t, r) != 3 {
		t.Errorf("reopened: %d chunks", storedChunks(t, r))
	}
	resp, err = r.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("document 2 talks about subject2", nil), Options: &localvec.RetrieverOptions{K: 1}})
	if err != nil || len(resp.Documents) != 1 || DocText(resp.Documents[0]) != DocText(docs[22]) {
		t.Errorf("reopened retrieve: %v %v", resp, err)
	}
}

func TestLocalvecStoreBadInput(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	g := genkit.Init(ctx)
	emb := newTestEmbedder(8)
	for _, name := range []string{"", "a/b", `a\b`, ".."} {
		if _, err := NewLocalvecStore(g, name, emb, dir); err == nil {
			t.Errorf("name %q: no error", name)
		}
	}
	if _, err := NewLocalvecStore(g, "x", nil, dir); err == nil {
		t.Error("nil embedder: no error")
	}
	if _, err := NewLocalvecStore(nil, "x", emb, dir); err == nil {
		t.Error("nil genkit: no error")
	}
	os.WriteFile(filepath.Join(dir, "__db_broken.json"), []byte(`{"a":{"doc":`), 0o644)
	if _, err := NewLocalvecStore(g, "broken", emb, dir); err == nil {
		t.Error("truncated file: no error")
	}
	os.WriteFile(filepath.Join(dir, "__db_mixed.json"), []byte(`{"a":{"doc":{"content":[{"text":"x"}]},"embedding":[1,2]},"b":{"doc":{"content":[{"text":"y"}]},"embedding":[1]}}`), 0o644)
	if _, err := NewLocalvecStore(g, "mixed", emb, dir); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("mixed dimensions in file: %v", err)
	}

	s := ingestTestLocalvec(t, dir, emb)
	if err := s.Index(ctx, []*ai.Document{ai.DocumentFromText("ok", nil), ai.DocumentFromText(" ", nil)}); !errors.Is(err, ErrEmptyDocument) {
		t.Errorf("blank doc: %v", err)
	}
	if err := s.Index(ctx, []*ai.Document{nil}); !errors.Is(err, ErrEmptyDocument) {
		t.Errorf("nil doc: %v", err)
	}
	if storedChunks(t, s) != 0 || emb.calls.Load() != 0 {
		t.Error("bad documents were embedded or stored")
	}
	if err := s.Index(ctx, localvecTestDocs(3, "u")); err != nil {
		t.Fatal(err)
	}
	before := localvecTestFile(t, s.path)

	// Another embedder dimension: clear error, nothing written.
	s.emb = newTestEmbedder(16)
	if err := s.Index(ctx, localvecTestDocs(5, "v")); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("dim mismatch: %v", err)
	}
	if _, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("q", nil)}); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("query dim mismatch: %v", err)
	}
	if _, _, err := s.replaceSource(ctx, replaceScope{urls: []string{"u"}}, localvecTestDocs(5, "u")[3:], nil); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("replace dim mismatch: %v", err)
	}
	if localvecTestFile(t, s.path) != before || storedChunks(t, s) != 3 {
		t.Error("dimension mismatch changed the store")
	}
	// Embedder errors leave it unchanged too.
	bad := newTestEmbedder(8)
	bad.fail = func(int64) error { return errors.New("quota") }
	s.emb = bad
	if err := s.Index(ctx, localvecTestDocs(5, "v")); err == nil || storedChunks(t, s) != 3 {
		t.Errorf("embedder error: %v, %d chunks", err, storedChunks(t, s))
	}

	// Closed store.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"Index":          s.Index(ctx, localvecTestDocs(1, "u")),
		"DeleteByURL":    second(s.DeleteByURL(ctx, "u")),
		"DeleteBySource": second(s.DeleteBySource(ctx, "s0")),
		"Sources":        second(s.Sources(ctx)),
		"KeywordSearch":  second(s.KeywordSearch(ctx, "document", 5, nil, nil)),
		"Retriever":      second(s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("q", nil)})),
		"IndexInBatches": IndexInBatches(ctx, s, localvecTestDocs(1, "u"), nil),
		"IndexSource":    third(IndexSource(ctx, s, &ingestTestSource{url: "u", texts: []string{"t"}}, 100, 10, nil)),
	} {
		if !errors.Is(err, ErrStoreClosed) {
			t.Errorf("%s after Close: %v, want ErrStoreClosed", name, err)
		}
	}
	if localvecTestFile(t, s.path) != before {
		t.Error("closed store changed the file")
	}
}

func second[T any](_ T, err error) error        { return err }
func third[A, B any](_ A, _ B, err error) error { return err }

func TestLocalvecDeferredPersist(t *testing.T) {
	ctx := t.Context()
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(16))
	if err := IndexInBatches(ctx, s, localvecTestDocs(1000, "u"), nil); err != nil {
		t.Fatal(err)
	}
	if n := s.fileWrites.Load(); n != 1 {
		t.Errorf("IndexInBatches of 10 batches wrote the file %d times, want 1", n)
	}
	// Close persists a session left open.
	if err := s.beginBulk(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.writeBatch(ctx, replaceScope{}, localvecTestDocs(5, "late"), nil); err != nil {
		t.Fatal(err)
	}
	if n := s.fileWrites.Load(); n != 1 {
		t.Errorf("Index inside a session wrote the file (%d writes)", n)
	}
	path := s.path
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.endBulk(); err != nil {
		t.Errorf("end after close: %v", err)
	}
	var data map[string]localvec.DbValue
	if err := json.Unmarshal([]byte(localvecTestFile(t, path)), &data); err != nil || len(data) != 1005 {
		t.Errorf("file after Close: %d entries, %v", len(data), err)
	}
}

func TestLocalvecIndexInBatchesCancel(t *testing.T) {
	dir := t.TempDir()
	emb := newTestEmbedder(16)
	s := ingestTestLocalvec(t, dir, emb)
	ctx, cancel := context.WithCancel(t.Context())
	emb.fail = func(call int64) error {
		if call == 4 {
			cancel() // cancelled while the 4th batch is being embedded
		}
		return nil
	}
	err := IndexInBatches(ctx, s, localvecTestDocs(1000, "u"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	// Whole batches only, and the file holds what memory holds.
	if storedChunks(t, s) != 300 || emb.calls.Load() != 4 {
		t.Errorf("%d chunks after cancel in batch 4 (%d embed calls), want 300 (4)", storedChunks(t, s), emb.calls.Load())
	}
	s.Close()
	if r := ingestTestLocalvec(t, dir, emb); storedChunks(t, r) != 300 {
		t.Errorf("reopened: %d chunks, want 300", storedChunks(t, r))
	}
}

// TestLocalvecCompatGenkitFileOpensInStore writes a database with Genkit's
// own localvec and opens, searches and extends it with LocalvecStore.
func TestLocalvecCompatGenkitFileOpensInStore(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newTestEmbedder(32)
	g := genkit.Init(ctx)
	ds, ret, err := localvec.DefineRetriever(g, "docs", localvec.Config{Dir: dir, Embedder: emb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := localvecTestDocs(30, "u")
	for i := 0; i < 30; i += 10 {
		if err := localvec.Index(ctx, docs[i:i+10], ds); err != nil {
			t.Fatal(err)
		}
	}
	s := ingestTestLocalvec(t, dir, emb)
	if storedChunks(t, s) != 30 {
		t.Fatalf("opened %d documents, want 30", storedChunks(t, s))
	}
	q := ai.DocumentFromText("document 12 talks about subject2 and area0", nil)
	want, err := ret.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: &localvec.RetrieverOptions{K: 5}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: &localvec.RetrieverOptions{K: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if DocText(got.Documents[0]) != DocText(want.Documents[0]) || DocText(got.Documents[0]) != DocText(docs[12]) {
		t.Errorf("top hit %q, genkit's %q", DocText(got.Documents[0]), DocText(want.Documents[0]))
	}
	// Same ID scheme: documents genkit stored are recognised, not re-added.
	calls := emb.calls.Load()
	if err := s.Index(ctx, docs); err != nil || storedChunks(t, s) != 30 || emb.calls.Load() != calls {
		t.Errorf("re-index of genkit's documents: %v, %d chunks, %d embed calls", err, storedChunks(t, s), emb.calls.Load()-calls)
	}
	res, err := LocalvecKeywordSearch(s.path, `"document 12 talks"`, 3, nil, nil)
	if err != nil || len(res) != 1 || DocText(res[0]) != DocText(docs[12]) {
		t.Errorf("LocalvecKeywordSearch on genkit's file: %v, %v", localvecTexts(res), err)
	}
}

// TestLocalvecCompatStoreFileOpensInGenkit writes with LocalvecStore and
// reads, queries and extends the file with Genkit's localvec.
func TestLocalvecCompatStoreFileOpensInGenkit(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newTestEmbedder(256)
	s := ingestTestLocalvec(t, dir, emb)
	docs := localvecTestDocs(40, "u")
	if err := IndexInBatches(ctx, s, docs, nil); err != nil {
		t.Fatal(err)
	}
	q := ai.DocumentFromText("document 33 talks about subject3 and area0", nil)
	ours, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: &localvec.RetrieverOptions{K: 5}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	// The byte format of numbers matches encoding/json's.
	var raw map[string]json.RawMessage
	b := localvecTestFile(t, s.path)
	if err := json.Unmarshal([]byte(b), &raw); err != nil {
		t.Fatal(err)
	}
	for id, v := range raw {
		var dv localvec.DbValue
		if err := json.Unmarshal(v, &dv); err != nil {
			t.Fatal(err)
		}
		re, _ := json.Marshal(dv.Embedding)
		if !strings.Contains(string(v), `"embedding":`+string(re)) {
			t.Errorf("entry %s: embedding not encoded as encoding/json does", id)
		}
		if sum, _ := localvecDocID(dv.Doc); sum != id {
			t.Errorf("entry %s: ID is not localvec's (%s)", id, sum)
		}
	}

	g := genkit.Init(ctx)
	ds, ret, err := localvec.DefineRetriever(g, "docs", localvec.Config{Dir: dir, Embedder: emb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Data) != 40 {
		t.Fatalf("genkit loaded %d documents, want 40", len(ds.Data))
	}
	theirs, err := ret.Retrieve(ctx, &ai.RetrieverRequest{Query: q, Options: &localvec.RetrieverOptions{K: 5}})
	if err != nil {
		t.Fatal(err)
	}
	// Same scores rank by rank (documents with equal scores may be ordered
	// differently: genkit's order of ties follows map iteration).
	o, th := localvecTexts(ours.Documents), localvecTexts(theirs.Documents)
	qv := testVector(DocText(q), 256)
	for i := range o {
		so, st := localvecDot(qv, testVector(o[i], 256)), localvecDot(qv, testVector(th[i], 256))
		if so-st > 1e-5 || st-so > 1e-5 {
			t.Errorf("rank %d: our score %g, genkit's %g", i, so, st)
		}
	}
	if o[0] != th[0] || o[0] != DocText(docs[33]) {
		t.Errorf("ours %q\ntheirs %q", localvecTexts(ours.Documents), localvecTexts(theirs.Documents))
	}
	if err := localvec.Index(ctx, docs[:5], ds); err != nil || len(ds.Data) != 40 {
		t.Errorf("genkit re-index of our documents: %v, %d entries (duplicates?)", err, len(ds.Data))
	}
}

func TestLocalvecConcurrentReadersAndWriter(t *testing.T) {
	ctx := t.Context()
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(32))
	if err := s.Index(ctx, localvecTestDocs(50, "seed")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch (r + i) % 3 {
				case 0:
					var resp *ai.RetrieverResponse
					resp, err = s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("subject3 area1", nil), Options: &localvec.RetrieverOptions{K: 5}})
					if err == nil && len(resp.Documents) != 5 {
						err = fmt.Errorf("retrieve returned %d", len(resp.Documents))
					}
				case 1:
					_, err = s.KeywordSearch(ctx, "subject3", 5, nil, nil)
				case 2:
					_, err = s.Sources(ctx)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 3 {
		url := fmt.Sprintf("w%d", i)
		if err := IndexInBatches(ctx, s, localvecTestDocs(300, url), nil); err != nil {
			t.Error(err)
		}
		if _, err := s.DeleteByURL(ctx, url); err != nil {
			t.Error(err)
		}
		if _, _, err := IndexSource(ctx, s, &ingestTestSource{url: url, texts: ingestTestTexts(url, 150)}, 100, 10, nil); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if storedChunks(t, s) != 50+3*150 {
		t.Errorf("%d chunks", storedChunks(t, s))
	}
}

func TestLocalvecTopKMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 100, 3000} {
		var rows localvecRows
		dim := 768
		if n == 3000 {
			dim = 512 // 3000 x 512 >= localvecParallelMin: the parallel path
		}
		add := make([]localvecNewRow, n)
		for i := range add {
			v := make([]float32, dim)
			for j := range v {
				v[j] = rng.Float32()*2 - 1
			}
			add[i] = localvecNewRow{id: strconv.Itoa(i), doc: ai.DocumentFromText("x", nil), vec: v}
		}
		rows.append(add)
		q := add[n/2].vec
		for _, k := range []int{1, 10, n + 5} {
			got := rows.topK(q, k)
			// The reference scores as topK does (the query normalised
			// first), so that rounding cannot reorder near-ties.
			qn := slices.Clone(q)
			for j := range qn {
				qn[j] *= localvecInvNorm(q)
			}
			scores := make([]localvecHit, n)
			for i := range n {
				scores[i] = localvecHit{localvecDot(qn, rows.vec(i)) * rows.inv[i], i}
			}
			slices.SortFunc(scores, func(a, b localvecHit) int {
				if localvecWorse(b, a) {
					return -1
				}
				return 1
			})
			if len(got) != min(k, n) {
				t.Fatalf("n=%d k=%d: %d hits", n, k, len(got))
			}
			for i := range got {
				if got[i].row != scores[i].row {
					t.Fatalf("n=%d k=%d: hit %d is row %d, want %d", n, k, i, got[i].row, scores[i].row)
				}
			}
			if got[0].row != n/2 {
				t.Errorf("n=%d: the query's own row is not first", n)
			}
		}
	}
}

func TestAppendJSONFloat32MatchesEncodingJSON(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.1, 1e-7, -3.4e38, 1e21, 1e20, 123456.79, 5e-324, 1.17549435e-38, 0.000001, 0.0000009}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		vals = append(vals, float32(rng.NormFloat64()*0.05))
	}
	for _, v := range vals {
		want, _ := json.Marshal(v)
		if got := appendJSONFloat32(nil, v); string(got) != string(want) {
			t.Errorf("%g: got %s, want %s", v, got, want)
		}
	}
}

// TestLocalvecCrashChild is the child process of TestLocalvecCrash: it opens
// the store and indexes a large batch, until its parent kills it.
func TestLocalvecCrashChild(t *testing.T) {
	dir := os.Getenv("ASKYOURDOCS_LOCALVEC_CRASH_DIR")
	if dir == "" {
		t.Skip("child process of TestLocalvecCrash")
	}
	s, err := NewLocalvecStore(genkit.Init(context.Background()), "crash", newTestEmbedder(256), dir)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if err := IndexInBatches(context.Background(), s, localvecTestDocs(20000, fmt.Sprint(time.Now().UnixNano())), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalvecCrash kills (SIGKILL) a process while it writes a large
// database and checks that the file is the old or the new version, whole.
func TestLocalvecCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	s, err := NewLocalvecStore(genkit.Init(t.Context()), "crash", newTestEmbedder(256), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := IndexInBatches(t.Context(), s, localvecTestDocs(500, "old"), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	old := localvecTestFile(t, s.path)

	for round := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLocalvecCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ASKYOURDOCS_LOCALVEC_CRASH_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child is writing its temporary file, let it get
		// some way into it (round 1: further, maybe past the rename), kill.
		deadline := time.Now().Add(60 * time.Second)
		for {
			m, _ := filepath.Glob(filepath.Join(dir, "__db_crash.json.*.tmp"))
			if len(m) > 0 {
				if fi, err := os.Stat(m[0]); err == nil && fi.Size() > int64(1+round*20)<<20 {
					break
				}
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("child never wrote a temporary file")
			}
			time.Sleep(2 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		r, err := NewLocalvecStore(genkit.Init(t.Context()), "crash", newTestEmbedder(256), dir)
		if err != nil {
			t.Fatalf("round %d: database unreadable after kill: %v", round, err)
		}
		n := storedChunks(t, r)
		r.Close()
		if n != 500 && (n-500)%20000 != 0 {
			t.Errorf("round %d: %d documents after kill: neither the old nor a new version", round, n)
		}
		if round == 0 && localvecTestFile(t, r.path) != old {
			t.Log("round 0: the child completed a write before the kill")
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
			t.Errorf("round %d: temporary files left after reopening: %v", round, m)
		}
	}
}

func TestLocalvecResultsAreCopies(t *testing.T) {
	ctx := t.Context()
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(16))
	if err := s.Index(ctx, localvecTestDocs(3, "u")); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Retriever.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("document 1", nil)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Documents[0].Metadata[MetaURL] = "changed"
	kw, err := s.KeywordSearch(ctx, "document", 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	kw[0].Metadata[MetaSource] = "changed"
	src, _ := s.Sources(ctx)
	if len(src) != 2 || src[0].URL != "u" || src[1].URL != "u" || src[0].Source == "changed" || src[1].Source == "changed" {
		t.Errorf("changing results changed the store: %v", src)
	}
}

func TestLocalvecBulk(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := ingestTestLocalvec(t, dir, newTestEmbedder(16))
	srcs := []*ingestTestSource{
		{url: "a.pdf", texts: []string{"alpha one", "alpha two"}},
		{url: "b.pdf", texts: []string{"beta one"}},
		{url: "c.pdf", texts: []string{"gamma one", "gamma two", "gamma three"}},
	}
	failing := &ingestTestSource{url: "d.pdf", fetchErr: errors.New("unreadable")}
	fnErr := errors.New("stopped by the caller")
	err := s.Bulk(ctx, func(b VectorStore) error {
		for i, src := range srcs {
			if _, _, err := IndexSource(ctx, b, src, 100, 10, nil); err != nil {
				return err
			}
			if i == 0 {
				if _, _, err := IndexSource(ctx, b, failing, 100, 10, nil); err == nil {
					t.Error("failing source indexed")
				}
			}
		}
		if n := s.fileWrites.Load(); n != 0 {
			t.Errorf("file written %d times inside Bulk", n)
		}
		if storedChunks(t, s) != 6 {
			t.Errorf("inside Bulk the store holds %d chunks, want 6 (queries see changes at once)", storedChunks(t, s))
		}
		return fnErr
	})
	if !errors.Is(err, fnErr) {
		t.Fatalf("Bulk returned %v, want fn's error", err)
	}
	if n := s.fileWrites.Load(); n != 1 {
		t.Errorf("Bulk over 3 sources wrote the file %d times, want 1", n)
	}
	// What fn completed is on disk: a fresh store on the same file sees it.
	g := genkit.Init(ctx)
	s2, err := NewLocalvecStore(g, "reopen", newTestEmbedder(16), dir)
	if err != nil {
		t.Fatal(err)
	}
	_ = s2.Close()
	reread, err := LocalvecKeywordSearch(s.path, "gamma", 10, nil, nil)
	if err != nil || len(reread) != 3 {
		t.Errorf("after Bulk the file has %d gamma chunks (%v), want 3", len(reread), err)
	}

	// A nested Bulk writes nothing: the outermost writes once at its end.
	writes := s.fileWrites.Load()
	err = s.Bulk(ctx, func(b VectorStore) error {
		if err := b.Index(ctx, localvecTestDocs(3, "e.pdf")); err != nil {
			return err
		}
		err := s.Bulk(ctx, func(b2 VectorStore) error { _, err := b2.DeleteByURL(ctx, "b.pdf"); return err })
		if got := s.fileWrites.Load() - writes; got != 0 {
			t.Errorf("nested Bulk wrote %d times, want 0", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.fileWrites.Load() - writes; got != 1 {
		t.Errorf("Bulk with a nested Bulk wrote %d times, want 1", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Bulk(ctx, func(VectorStore) error { return nil }); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("Bulk after Close: %v", err)
	}
}
