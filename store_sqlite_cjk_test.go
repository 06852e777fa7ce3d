package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// TestSQLiteSchema7ReanalysedForCJK: a database of schema 7 (whose keyword
// index holds a CJK run as one term) is re-analysed when it opens: its
// schema becomes 8 and a substring of a Japanese clause is found.
func TestSQLiteSchema7ReanalysedForCJK(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docs.db")
	s, err := NewSQLiteStore(ctx, genkit.Init(ctx), NewLocalEmbedder(64), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := ai.DocumentFromText("この章では受験者数を入力してから試験問題用紙を印刷します。", map[string]any{MetaURL: "/manual/p10", MetaSource: "manual"})
	if err := s.Index(ctx, []*ai.Document{doc}); err != nil {
		t.Fatal(err)
	}
	// As schema 7 left it: the run as one term.
	for _, stmt := range []string{
		`INSERT INTO chunk_terms (chunk_terms) VALUES ('delete-all')`,
		`INSERT INTO chunk_terms (rowid, terms) SELECT rid, 'この章では受験者数を入力してから試験問題用紙を印刷します' FROM chunks`,
		`UPDATE meta SET value = 7 WHERE key = 'schema'`,
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if docs, err := s.SearchText(ctx, "受験者数", 5, nil); err != nil || len(docs) != 0 {
		t.Fatalf("the schema 7 index found the substring: %d %v", len(docs), err)
	}
	s.Close()

	s = sqliteTestStore(t, path, NewLocalEmbedder(64))
	var version int
	if err := s.DB().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&version); err != nil || version != 8 {
		t.Fatalf("schema %d (%v), want 8", version, err)
	}
	for _, q := range []string{"受験者数", "試験問題用紙を印刷"} {
		docs, err := s.SearchText(ctx, q, 5, nil)
		if err != nil || len(docs) != 1 {
			t.Errorf("%q after the migration: %d hits (%v), want 1", q, len(docs), err)
		}
	}
}
