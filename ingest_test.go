package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// ingestTestSource is an IngestSource whose Documents ignore the chunks and
// return one document per text, with the source's url in the metadata.
type ingestTestSource struct {
	url      string
	texts    []string
	meta     map[string]any // extra metadata for every document
	fetchErr error
	staleErr error
	bySource bool // DeleteStale by source name instead of by URL
}

func (s *ingestTestSource) Name() string { return s.url }

func (s *ingestTestSource) Fetch(ctx context.Context) ([]Paragraph, error) {
	if s.fetchErr != nil {
		return nil, s.fetchErr
	}
	return []Paragraph{{Text: strings.Join(s.texts, " ")}}, nil
}

func (s *ingestTestSource) Documents(chunks []Chunk) []*ai.Document {
	docs := make([]*ai.Document, len(s.texts))
	for i, t := range s.texts {
		m := map[string]any{MetaURL: s.url, MetaSource: "src:" + s.url, "ordinal": i}
		for k, v := range s.meta {
			m[k] = v
		}
		docs[i] = ai.DocumentFromText(t, m)
	}
	return docs
}

func (s *ingestTestSource) DeleteStale(ctx context.Context, store VectorStore) (int, error) {
	if s.staleErr != nil {
		return 0, s.staleErr
	}
	if s.bySource {
		return store.DeleteBySource(ctx, "src:"+s.url)
	}
	return store.DeleteByURL(ctx, s.url)
}

func ingestTestTexts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s chunk %d about topic%d", prefix, i, i%7)
	}
	return out
}

// ingestMemStore is a plain VectorStore (no diffing) kept in memory; Index
// fails on call failAt (1-based) when set.
type ingestMemStore struct {
	docs   []*ai.Document
	calls  int
	failAt int
}

func (m *ingestMemStore) Index(ctx context.Context, docs []*ai.Document) error {
	m.calls++
	if m.calls == m.failAt {
		return errors.New("disk full")
	}
	m.docs = append(m.docs, docs...)
	return nil
}

func (m *ingestMemStore) deleteWhere(key, val string) int {
	n := 0
	kept := m.docs[:0]
	for _, d := range m.docs {
		if metaString(d.Metadata, key) == val {
			n++
			continue
		}
		kept = append(kept, d)
	}
	m.docs = kept
	return n
}

func (m *ingestMemStore) DeleteByURL(ctx context.Context, url string) (int, error) {
	return m.deleteWhere(MetaURL, url), nil
}
func (m *ingestMemStore) DeleteBySource(ctx context.Context, s string) (int, error) {
	return m.deleteWhere(MetaSource, s), nil
}
func (m *ingestMemStore) Close() error { return nil }

func (m *ingestMemStore) count(url string) int {
	n := 0
	for _, d := range m.docs {
		if metaString(d.Metadata, MetaURL) == url {
			n++
		}
	}
	return n
}

func TestIndexSourcePlainStoreUpsertAndRollback(t *testing.T) {
	ctx := t.Context()
	m := &ingestMemStore{}
	other := &ingestTestSource{url: "u:other", texts: ingestTestTexts("other", 3)}
	if _, _, err := IndexSource(ctx, m, other, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
	src := &ingestTestSource{url: "u:a", texts: ingestTestTexts("a", 250)}
	var msgs []string
	indexed, deleted, err := IndexSource(ctx, m, src, 500, 50, func(s string) { msgs = append(msgs, s) })
	if err != nil || indexed != 250 || deleted != 0 {
		t.Fatalf("first run: %d, %d, %v", indexed, deleted, err)
	}
	// The original engine's messages: the chunk count, then one per batch.
	if want := []string{"250 Chunks erzeugt, indexiere...", "Batch 1/3 indexiert", "Batch 2/3 indexiert", "Batch 3/3 indexiert"}; !slices.Equal(msgs, want) {
		t.Errorf("progress messages: %q, want %q", msgs, want)
	}
	// Re-index: upsert replaces the 250 chunks.
	indexed, deleted, err = IndexSource(ctx, m, src, 500, 50, nil)
	if err != nil || indexed != 250 || deleted != 250 || m.count("u:a") != 250 {
		t.Fatalf("second run: %d, %d, %v, stored %d", indexed, deleted, err, m.count("u:a"))
	}
	// A failure in the third batch removes what the run wrote.
	m.failAt = m.calls + 3
	_, deleted, err = IndexSource(ctx, m, src, 500, 50, nil)
	if err == nil || deleted != 250 {
		t.Fatalf("failing run: deleted %d, err %v", deleted, err)
	}
	if n := m.count("u:a"); n != 0 {
		t.Errorf("after failed run %d chunks of the source remain, want 0 (not half-indexed)", n)
	}
	if n := m.count("u:other"); n != 3 {
		t.Errorf("other source has %d chunks, want 3", n)
	}
}

func TestIndexSourceBadSources(t *testing.T) {
	ctx := t.Context()
	m := &ingestMemStore{}
	boom := errors.New("boom")
	if _, _, err := IndexSource(ctx, m, &ingestTestSource{url: "u", fetchErr: boom}, 500, 50, nil); !errors.Is(err, boom) {
		t.Errorf("fetch error: %v", err)
	}
	if _, _, err := IndexSource(ctx, m, &ingestTestSource{url: "u", texts: []string{"", "  "}}, 500, 50, nil); !errors.Is(err, ErrNoDocuments) {
		t.Errorf("no text: %v", err)
	}
	if _, _, err := IndexSource(ctx, m, &ingestTestSource{url: "u"}, 500, 50, nil); !errors.Is(err, ErrNoDocuments) {
		t.Errorf("no documents: %v", err)
	}
	if _, _, err := IndexSource(ctx, nil, &ingestTestSource{url: "u"}, 500, 50, nil); err == nil {
		t.Error("nil store: no error")
	}
	if len(m.docs) != 0 || m.calls != 0 {
		t.Errorf("bad sources wrote: %d docs, %d calls", len(m.docs), m.calls)
	}
	// Documents without text are skipped, the others indexed.
	indexed, _, err := IndexSource(ctx, m, &ingestTestSource{url: "u", texts: []string{"one", "", "two"}}, 500, 50, nil)
	if err != nil || indexed != 2 || len(m.docs) != 2 {
		t.Errorf("mixed: indexed %d, stored %d, %v", indexed, len(m.docs), err)
	}
}

func ingestTestLocalvec(t *testing.T, dir string, emb ai.Embedder) *LocalvecStore {
	t.Helper()
	s, err := NewLocalvecStore(genkit.Init(t.Context()), "docs", emb, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestIndexSourceLocalvecDiff(t *testing.T) {
	ctx := t.Context()
	emb := newTestEmbedder(32)
	s := ingestTestLocalvec(t, t.TempDir(), emb)
	src := &ingestTestSource{url: "u:a", texts: ingestTestTexts("a", 250)}
	indexed, deleted, err := IndexSource(ctx, s, src, 500, 50, nil)
	if err != nil || indexed != 250 || deleted != 0 {
		t.Fatalf("first run: %d %d %v", indexed, deleted, err)
	}
	if emb.docs.Load() != 250 || s.fileWrites.Load() != 1 {
		t.Errorf("first run embedded %d docs and wrote the file %d times; want 250, 1", emb.docs.Load(), s.fileWrites.Load())
	}

	// Unchanged: no embedding, no write.
	calls, writes := emb.calls.Load(), s.fileWrites.Load()
	indexed, deleted, err = IndexSource(ctx, s, src, 500, 50, nil)
	if err != nil || indexed != 250 || deleted != 0 {
		t.Fatalf("unchanged run: %d %d %v", indexed, deleted, err)
	}
	if emb.calls.Load() != calls || s.fileWrites.Load() != writes {
		t.Errorf("unchanged run: %d embed calls, %d file writes; want 0, 0", emb.calls.Load()-calls, s.fileWrites.Load()-writes)
	}

	// One text changed, one removed, metadata of all changed: one embedding.
	src.texts = append(src.texts[:249:249], "a brand new chunk text")
	src.texts = append(src.texts[:10], src.texts[11:]...)
	src.meta = map[string]any{"tag": "v2"}
	docs := emb.docs.Load()
	indexed, deleted, err = IndexSource(ctx, s, src, 500, 50, nil)
	if err != nil || indexed != 249 || deleted != 250 {
		t.Fatalf("changed run: %d %d %v", indexed, deleted, err)
	}
	if n := emb.docs.Load() - docs; n != 1 {
		t.Errorf("changed run embedded %d documents, want 1 (the new text)", n)
	}
	if storedChunks(t, s) != 249 {
		t.Errorf("store has %d docs, want 249", storedChunks(t, s))
	}
	// Deleting by source (the recorder records sources too).
	src.bySource = true
	src.meta = nil
	if _, deleted, err = IndexSource(ctx, s, src, 500, 50, nil); err != nil || deleted != 249 {
		t.Fatalf("by-source run: deleted %d, %v", deleted, err)
	}
}

func TestIndexSourceLocalvecFailureKeepsOldVersion(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	emb := newTestEmbedder(16)
	s := ingestTestLocalvec(t, dir, emb)
	src := &ingestTestSource{url: "u:a", texts: ingestTestTexts("old", 120)}
	if _, _, err := IndexSource(ctx, s, src, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
	before := localvecTestFile(t, s.path)

	// The embedder fails in the middle of the second batch's run.
	src.texts = ingestTestTexts("new", 300)
	failAfter := emb.calls.Load() + 2
	boom := errors.New("embedder down")
	emb.fail = func(call int64) error {
		if call > failAfter {
			return boom
		}
		return nil
	}
	if _, _, err := IndexSource(ctx, s, src, 500, 50, nil); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the embedder's", err)
	}
	emb.fail = nil
	if got := localvecTestFile(t, s.path); got != before {
		t.Error("failed run changed the file")
	}
	if storedChunks(t, s) != 120 {
		t.Errorf("store has %d docs after failed run, want the old 120", storedChunks(t, s))
	}
	res, err := s.KeywordSearch(ctx, "old chunk", 0, nil, nil)
	if err != nil || len(res) != 120 {
		t.Errorf("old version searchable: %d, %v", len(res), err)
	}

	// Cancellation mid-run: same guarantee, and it stops promptly.
	cctx, cancel := context.WithCancel(ctx)
	calls := emb.calls.Load()
	emb.fail = func(call int64) error {
		if call == calls+2 {
			cancel()
		}
		return nil
	}
	if _, _, err := IndexSource(cctx, s, src, 500, 50, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: err = %v", err)
	}
	if n := emb.calls.Load() - calls; n > 2 {
		t.Errorf("%d embed calls after cancellation at call 2", n)
	}
	if got := localvecTestFile(t, s.path); got != before || storedChunks(t, s) != 120 {
		t.Error("cancelled run changed the store")
	}
}

// ingestAppStore is an app's own richer store: it embeds *LocalvecStore and
// adds methods of its own, as in the spec's "Extending a store".
type ingestAppStore struct {
	*LocalvecStore
	retagged int
}

func (a *ingestAppStore) Retrieve(ctx context.Context, q string, k int, tag string) ([]*ai.Document, error) {
	docs, err := a.KeywordSearch(ctx, q, 0, nil, func(m map[string]any) bool { return m["tag"] == tag })
	return docs[:min(k, len(docs))], err
}

func (a *ingestAppStore) Retag(ctx context.Context, url, tag string) error { a.retagged++; return nil }

// ingestAppVectorStore is the app's larger interface.
type ingestAppVectorStore interface {
	VectorStore
	Retrieve(ctx context.Context, q string, k int, tag string) ([]*ai.Document, error)
	KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error)
	Sources(ctx context.Context) ([]Source, error)
	Retag(ctx context.Context, url, tag string) error
}

func TestIndexSourceAcceptsAppStoreType(t *testing.T) {
	ctx := t.Context()
	emb := newTestEmbedder(16)
	var app ingestAppVectorStore = &ingestAppStore{LocalvecStore: ingestTestLocalvec(t, t.TempDir(), emb)}
	src := &ingestTestSource{url: "u:a", texts: ingestTestTexts("x", 5), meta: map[string]any{"tag": "t1"}}
	if n, _, err := IndexSource(ctx, app, src, 500, 50, nil); err != nil || n != 5 {
		t.Fatalf("IndexSource with app store: %d, %v", n, err)
	}
	calls := emb.calls.Load()
	if _, _, err := IndexSource(ctx, app, src, 500, 50, nil); err != nil || emb.calls.Load() != calls {
		t.Errorf("app store is not diffed: %d embed calls, %v", emb.calls.Load()-calls, err)
	}
	docs, err := app.Retrieve(ctx, "chunk", 3, "t1")
	if err != nil || len(docs) != 3 {
		t.Errorf("app Retrieve: %d, %v", len(docs), err)
	}
	if err := IndexInBatches(ctx, app, []*ai.Document{ai.DocumentFromText("extra", nil)}, nil); err != nil {
		t.Errorf("IndexInBatches with app store: %v", err)
	}
}

func TestScopeRecorder(t *testing.T) {
	ctx := t.Context()
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(8))
	if _, _, err := IndexSource(ctx, s, &ingestTestSource{url: "u:a", texts: ingestTestTexts("a", 4)}, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
	r := &scopeRecorder{store: s}
	if n, err := r.DeleteByURL(ctx, "u:a"); err != nil || n != 4 {
		t.Errorf("DeleteByURL reports %d, %v; want the 4 matching chunks", n, err)
	}
	if n, err := r.DeleteBySource(ctx, "src:none"); err != nil || n != 0 {
		t.Errorf("DeleteBySource reports %d, %v", n, err)
	}
	r.DeleteByURL(ctx, "u:a")
	if fmt.Sprint(r.scope.urls, r.scope.sources) != "[u:a] [src:none]" {
		t.Errorf("scope %v %v", r.scope.urls, r.scope.sources)
	}
	if storedChunks(t, s) != 4 {
		t.Error("recorder deleted chunks")
	}
	if err := r.Index(ctx, nil); !errors.Is(err, errRecorderWrite) {
		t.Errorf("Index: %v", err)
	}
	if err := r.Close(); !errors.Is(err, errRecorderWrite) {
		t.Errorf("Close: %v", err)
	}
	// A DeleteStale that writes makes IndexSource fail without changes.
	src := &writingStaleSource{ingestTestSource{url: "u:a", texts: []string{"changed"}}}
	if _, _, err := IndexSource(ctx, s, src, 500, 50, nil); !errors.Is(err, errRecorderWrite) {
		t.Errorf("writing DeleteStale: %v", err)
	}
	if storedChunks(t, s) != 4 {
		t.Errorf("store changed: %d docs", storedChunks(t, s))
	}
	// Without a counting store the recorder reports 0.
	if n, _ := (&scopeRecorder{store: &ingestMemStore{}}).DeleteByURL(ctx, "x"); n != 0 {
		t.Errorf("plain store count %d", n)
	}
}

// countingStaleSource counts its DeleteStale calls; the first fails when
// failFirst is set.
type countingStaleSource struct {
	ingestTestSource
	calls     int
	failFirst error
}

func (c *countingStaleSource) DeleteStale(ctx context.Context, store VectorStore) (int, error) {
	c.calls++
	if c.calls == 1 && c.failFirst != nil {
		return 0, c.failFirst
	}
	return c.ingestTestSource.DeleteStale(ctx, store)
}

// As in the original engine: a DeleteStale error is logged and the new
// version is still written (plain store and diffing store), and the
// rollback of a failed write calls DeleteStale again.
func TestIndexSourceDeleteStaleErrorGoesOn(t *testing.T) {
	ctx := t.Context()
	boom := errors.New("boom")

	m := &ingestMemStore{}
	var msgs []string
	indexed, deleted, err := IndexSource(ctx, m, &ingestTestSource{url: "u", texts: []string{"x", "y"}, staleErr: boom}, 500, 50,
		func(s string) { msgs = append(msgs, s) })
	if err != nil || indexed != 2 || deleted != 0 || m.count("u") != 2 {
		t.Fatalf("plain store: indexed %d, deleted %d, stored %d, %v", indexed, deleted, m.count("u"), err)
	}
	if !slices.ContainsFunc(msgs, func(s string) bool { return strings.Contains(s, "boom") }) {
		t.Errorf("progress does not report the DeleteStale error: %q", msgs)
	}

	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(8))
	if _, _, err := IndexSource(ctx, s, &ingestTestSource{url: "u:a", texts: []string{"old one", "old two"}}, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
	indexed, _, err = IndexSource(ctx, s, &ingestTestSource{url: "u:a", texts: []string{"new one"}, staleErr: boom}, 500, 50, nil)
	if err != nil || indexed != 1 {
		t.Fatalf("diffing store: indexed %d, %v", indexed, err)
	}
	found, err := s.KeywordSearch(ctx, `"new one"`, 10, nil, nil)
	if err != nil || len(found) != 1 || DocText(found[0]) != "new one" {
		t.Errorf("new version not written: %d documents, %v", len(found), err)
	}

	// Rollback: the write fails, DeleteStale runs a second time and the
	// source is left without chunks.
	m = &ingestMemStore{}
	src := &countingStaleSource{ingestTestSource: ingestTestSource{url: "u:b", texts: ingestTestTexts("b", 250)}}
	if _, _, err := IndexSource(ctx, m, src, 500, 50, nil); err != nil || src.calls != 1 {
		t.Fatalf("first run: %v, %d DeleteStale calls", err, src.calls)
	}
	m.failAt = m.calls + 2
	if _, _, err := IndexSource(ctx, m, src, 500, 50, nil); err == nil {
		t.Fatal("failing write: no error")
	}
	if src.calls != 3 {
		t.Errorf("DeleteStale called %d times over two runs, want 3 (once, then twice: before the write and in the rollback)", src.calls)
	}
	if n := m.count("u:b"); n != 0 {
		t.Errorf("%d chunks left after the rollback", n)
	}
	// A first DeleteStale that fails, then a failing write: the rollback's
	// DeleteStale still runs.
	m.failAt = m.calls + 1
	src.calls, src.failFirst = 0, boom
	if _, _, err := IndexSource(ctx, m, src, 500, 50, nil); err == nil || errors.Is(err, boom) {
		t.Fatalf("failing write after a failed DeleteStale: %v (the DeleteStale error is logged, not returned)", err)
	}
	if src.calls != 2 || m.count("u:b") != 0 {
		t.Errorf("%d DeleteStale calls, %d chunks left; want 2 and 0", src.calls, m.count("u:b"))
	}
}

type writingStaleSource struct{ ingestTestSource }

func (w *writingStaleSource) DeleteStale(ctx context.Context, store VectorStore) (int, error) {
	return 0, store.Index(ctx, []*ai.Document{ai.DocumentFromText("sneaky", nil)})
}

// TestIndexSourceProgressOriginal is the original engine's check: a chunk
// message first, then batch messages, on a plain store and on one that
// diffs sources.
func TestIndexSourceProgressOriginal(t *testing.T) {
	ctx := t.Context()
	for name, store := range map[string]VectorStore{
		"plain":    &ingestMemStore{},
		"localvec": ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(8)),
	} {
		var msgs []string
		src := &ingestTestSource{url: "u:p", texts: []string{"Erster Absatz mit etwas Inhalt.", "Zweiter Absatz mit mehr Inhalt."}}
		if _, _, err := IndexSource(ctx, store, src, 500, 50, func(s string) { msgs = append(msgs, s) }); err != nil {
			t.Fatal(err)
		}
		if want := []string{"2 Chunks erzeugt, indexiere...", "Batch 1/1 indexiert"}; !slices.Equal(msgs, want) {
			t.Errorf("%s: progress %q, want %q", name, msgs, want)
		}
	}
}

// TestIndexSourceLogsPerSourceAtDebug: an app that leaves logging as it is
// (slog's default, Info) sees nothing from indexing a source; the
// per-source line is at Debug.
func TestIndexSourceLogsPerSourceAtDebug(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)
	s := ingestTestLocalvec(t, t.TempDir(), newTestEmbedder(8))
	if _, _, err := IndexSource(t.Context(), s, &ingestTestSource{url: "u:a", texts: ingestTestTexts("a", 3)}, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `level=DEBUG msg="indexed source"`) {
		t.Errorf("no debug line for the source:\n%s", out)
	}
	if strings.Contains(out, "level=INFO") || strings.Contains(out, "level=WARN") {
		t.Errorf("indexing a source logged above debug:\n%s", out)
	}
}
