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
	if err := s.DB().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Fatalf("schema %d (%v), want %d", version, err, sqliteSchemaVersion)
	}
	for _, q := range []string{"受験者数", "試験問題用紙を印刷"} {
		docs, err := s.SearchText(ctx, q, 5, nil)
		if err != nil || len(docs) != 1 {
			t.Errorf("%q after the migration: %d hits (%v), want 1", q, len(docs), err)
		}
	}
}

// TestSQLiteSchema8ReanalysedForAcronymPlurals: a database of schema 8,
// whose keyword index holds an acronym's plural as CamelCase parts
// ("BIGNUMs" as "bignu" and "ms"), is re-analysed when it opens, so that
// "ms" no longer finds a chunk without it and "bignum" still does.
func TestSQLiteSchema8ReanalysedForAcronymPlurals(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docs.db")
	s := sqliteTestStore(t, path, NewLocalEmbedder(64))
	doc := ai.DocumentFromText("BN_swap() exchanges two BIGNUMs.", map[string]any{MetaURL: "/man/BN_swap", MetaSource: "man"})
	if err := s.Index(ctx, []*ai.Document{doc}); err != nil {
		t.Fatal(err)
	}
	if docs, err := s.SearchText(ctx, "ms", 5, nil); err != nil || len(docs) != 0 {
		t.Fatalf("today's analyzer indexed a part %q: %d hits (%v)", "ms", len(docs), err)
	}
	// As schema 8 left it: the plural's CamelCase parts among the terms.
	for _, stmt := range []string{
		`INSERT INTO chunk_terms (chunk_terms) VALUES ('delete-all')`,
		`INSERT INTO chunk_terms (rowid, terms) SELECT rid, 'bn swap bn_swap exchang two bignum bignu ms' FROM chunks`,
		`UPDATE meta SET value = 8 WHERE key = 'schema'`,
		`UPDATE meta SET value = value + 1 WHERE key = 'generation'`, // readers' caches see a write
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if docs, err := s.SearchText(ctx, "ms", 5, nil); err != nil || len(docs) != 1 {
		t.Fatalf("the schema 8 index: %q found %d (%v), want the part to match", "ms", len(docs), err)
	}
	s.Close()

	s = sqliteTestStore(t, path, NewLocalEmbedder(64))
	var version int
	if err := s.DB().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Fatalf("schema %d (%v), want %d", version, err, sqliteSchemaVersion)
	}
	for q, want := range map[string]int{"ms": 0, "exchange BIGNUMs": 1, "bignum": 1} {
		if docs, err := s.SearchText(ctx, q, 5, nil); err != nil || len(docs) != want {
			t.Errorf("%q after the migration: %d hits (%v), want %d", q, len(docs), err, want)
		}
	}
}
