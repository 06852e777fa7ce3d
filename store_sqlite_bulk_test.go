package engine

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
)

// sqliteBulkGroups splits docs by their MetaURL, in order of first
// appearance.
func sqliteBulkGroups(docs []*ai.Document) ([]string, map[string][]*ai.Document) {
	var urls []string
	groups := map[string][]*ai.Document{}
	for _, d := range docs {
		u := metaString(d.Metadata, MetaURL)
		if groups[u] == nil {
			urls = append(urls, u)
		}
		groups[u] = append(groups[u], d)
	}
	return urls, groups
}

// sqliteBulkDump returns every chunk row with its quantised vector, by
// chunk ID, and the number of keyword index rows.
func sqliteBulkDump(t *testing.T, s *SQLiteStore) (map[string]string, int) {
	t.Helper()
	rows, err := s.DB().Query(`SELECT c.id, c.url, c.source, c.text_hash, c.text, c.doc, c.vec, q.scale, q.q FROM chunks c JOIN qvecs q ON q.rid = c.rid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, url, src, h, text string
		var doc, vec, q []byte
		var scale float64
		if err := rows.Scan(&id, &url, &src, &h, &text, &doc, &vec, &scale, &q); err != nil {
			t.Fatal(err)
		}
		out[id] = fmt.Sprintf("%q %q %s %q %q %x %v %x", url, src, h, text, doc, vec, scale, q)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var terms int
	if err := s.DB().QueryRow(`SELECT count(*) FROM chunk_terms_docsize`).Scan(&terms); err != nil {
		t.Fatal(err)
	}
	return out, terms
}

// TestSQLiteBulkMatchesPlain indexes the parity corpus source by source
// into one store inside a Bulk run (several batches, committed while the
// next sources are prepared, with a re-replaced and a deleted source in
// between) and into another without: the rows, the vectors and the
// keyword ranking are the same.
func TestSQLiteBulkMatchesPlain(t *testing.T) {
	ctx := t.Context()
	docs := keywordParityDocs(1400)
	urls, groups := sqliteBulkGroups(docs)
	// The re-replaced source's first version, which neither store keeps.
	first := []*ai.Document{ai.DocumentFromText("an older version of this page", map[string]any{MetaSource: "parity", MetaURL: urls[3]})}
	gone := []*ai.Document{ai.DocumentFromText("a page that is deleted again", map[string]any{MetaSource: "parity", MetaURL: "file:///gone"})}
	run := func(s *SQLiteStore, w sourceReplacer) {
		t.Helper()
		replace := func(u string, ds []*ai.Document) {
			t.Helper()
			if _, _, err := w.replaceSource(ctx, replaceScope{urls: []string{u}}, ds, nil); err != nil {
				t.Fatal(err)
			}
		}
		replace(urls[3], first)
		replace("file:///gone", gone)
		for i, u := range urls {
			replace(u, groups[u])
			if i == 70 {
				if n, err := s.DeleteByURL(ctx, "file:///gone"); err != nil || n != 1 {
					t.Fatalf("delete inside the run: %d, %v; want 1 (the held source committed first)", n, err)
				}
			}
		}
	}
	open := func(name string) *SQLiteStore {
		s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(t.TempDir(), name), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	plain, bulk := open("plain.db"), open("bulk.db")
	run(plain, plain)
	hits := sqliteTermsAhead.hits.Load()
	if err := bulk.Bulk(ctx, func(b VectorStore) error {
		run(bulk, b.(sourceReplacer))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := sqliteTermsAhead.hits.Load() - hits; n < int64(len(docs)) {
		t.Errorf("the run's inserts used %d terms computed ahead, want at least %d", n, len(docs))
	}
	want, wantTerms := sqliteBulkDump(t, plain)
	got, gotTerms := sqliteBulkDump(t, bulk)
	if len(want) != len(docs) || wantTerms != len(docs) {
		t.Fatalf("plain store: %d chunks, %d keyword rows; want %d", len(want), wantTerms, len(docs))
	}
	if len(got) != len(want) || gotTerms != wantTerms {
		t.Fatalf("bulk store: %d chunks, %d keyword rows; want %d, %d", len(got), gotTerms, len(want), wantTerms)
	}
	for id, w := range want {
		if got[id] != w {
			t.Fatalf("chunk %s differs:\n bulk  %s\n plain %s", id, got[id], w)
		}
	}
	// The keyword ranking: the same chunks in the same order (the rows
	// being equal, the FTS5 index decides).
	for _, q := range keywordParityQueries(docs) {
		for _, maxN := range []int{10, 0} {
			wantDocs, err := plain.keywordSearch(ctx, q, maxN, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			gotDocs, err := bulk.keywordSearch(ctx, q, maxN, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(gotDocs) != len(wantDocs) {
				t.Fatalf("query %q, max %d: %d results, want %d", q, maxN, len(gotDocs), len(wantDocs))
			}
			for i := range wantDocs {
				g, w := gotDocs[i].Metadata, wantDocs[i].Metadata
				if g["n"] != w["n"] {
					t.Fatalf("query %q, max %d: result %d is chunk %v, want %v", q, maxN, i, g["n"], w["n"])
				}
			}
		}
	}
	if n := sqliteTermsAhead.n.Load(); n != 0 {
		t.Errorf("%d terms computed ahead are still held after the run", n)
	}
}

// TestSQLiteBulkKeepsFinishedSourcesOnCancel cancels the context of a
// Bulk run after some sources were replaced: those are committed when the
// run ends, and nothing is left held.
func TestSQLiteBulkKeepsFinishedSourcesOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	docs := keywordParityDocs(60)
	urls, groups := sqliteBulkGroups(docs)
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Bulk(ctx, func(b VectorStore) error {
		for _, u := range urls[:4] {
			if _, _, err := b.(sourceReplacer).replaceSource(ctx, replaceScope{urls: []string{u}}, groups[u], nil); err != nil {
				return err
			}
		}
		cancel()
		_, _, err := b.(sourceReplacer).replaceSource(ctx, replaceScope{urls: []string{urls[4]}}, groups[urls[4]], nil)
		if err == nil {
			t.Error("a replacement after the cancel succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := s.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 4 {
		t.Fatalf("%d sources after the cancelled run, want the 4 finished ones: %v", len(srcs), srcs)
	}
	for _, src := range srcs {
		if src.Chunks != len(groups[src.URL]) {
			t.Errorf("source %s: %d chunks, want %d", src.URL, src.Chunks, len(groups[src.URL]))
		}
	}
	var gen int64
	if err := s.DB().QueryRow(`SELECT value FROM meta WHERE key = 'generation'`).Scan(&gen); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if gen != 1 {
		t.Errorf("generation %d after one batch, want 1 (one transaction)", gen)
	}
}

// TestSQLiteKillBulkWriter kills (SIGKILL) a writer process in a Bulk run
// (40 sources of 30 chunks: batches committed by the writer goroutine
// while the next are prepared) at random moments, 10 times: every time
// the database opens, is consistent (whole sources only), and a complete
// Bulk run afterwards leaves every source exactly once.
func TestSQLiteKillBulkWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	killSQLiteWriter(t, sqliteKillRun{mode: "bulk", prefix: "b", sources: 40, kills: 10, maxDelay: 600 * time.Millisecond, seed: 9})
}

// TestSQLiteBulkRefusedSourceLosesOnlyItself makes the database refuse one
// source of a held batch (a trigger standing in for a full disk or a
// constraint): the batch's other sources are still written, the refused
// one is not, half-written or at all, and Bulk's error names it.
func TestSQLiteBulkRefusedSourceLosesOnlyItself(t *testing.T) {
	ctx := t.Context()
	docs := keywordParityDocs(60)
	urls, groups := sqliteBulkGroups(docs)
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(t.TempDir(), "r.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refused := urls[2]
	if _, err := s.DB().ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON chunks WHEN NEW.url = '`+refused+`'
		BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END`); err != nil {
		t.Fatal(err)
	}
	err = s.Bulk(ctx, func(b VectorStore) error {
		for _, u := range urls[:5] {
			if _, _, err := b.(sourceReplacer).replaceSource(ctx, replaceScope{urls: []string{u}}, groups[u], nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), refused) || !strings.Contains(err.Error(), "simulated write failure") {
		t.Fatalf("Bulk error %v, want one naming %s and the cause", err, refused)
	}
	srcs, err := s.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 4 {
		t.Fatalf("%d sources, want the 4 not refused: %v", len(srcs), srcs)
	}
	for _, src := range srcs {
		if src.URL == refused {
			t.Errorf("the refused source is stored: %v", src)
		}
		if src.Chunks != len(groups[src.URL]) {
			t.Errorf("source %s: %d chunks, want %d", src.URL, src.Chunks, len(groups[src.URL]))
		}
	}
}
