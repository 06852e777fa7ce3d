package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestPgvecWriteLocks: a source replacement holds an advisory lock per URL
// and source inside its transaction; an Index call holds none, however
// many URLs its documents name (thousands of locks in one transaction
// would exhaust the server's lock table, and Index replaces nothing).
// The locks are read from pg_locks by a second connection while the
// writer's transaction is open (replaceHook).
func TestPgvecWriteLocks(t *testing.T) {
	ctx := context.Background()
	s := pgTestStore(t, newTestEmbedder(8), 8)
	held := -1
	var keys []int64
	s.replaceHook = func(context.Context) error {
		return s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND ((classid::bigint << 32) | objid::bigint) = ANY($1)`, keys).Scan(&held)
	}
	docs := func(prefix string, n int) []*ai.Document {
		out := make([]*ai.Document, n)
		for i := range out {
			out[i] = ai.DocumentFromText(fmt.Sprintf("%s page %d", prefix, i), map[string]any{MetaURL: fmt.Sprintf("%s/%d", prefix, i), MetaSource: prefix})
		}
		return out
	}
	rows := func(ds []*ai.Document) []*pgvecRow {
		prepared, err := pgvecPrepare(ds)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]*pgvecRow, len(prepared))
		for i := range prepared {
			out[i] = &prepared[i]
		}
		return out
	}

	repl := docs("replaced", 3)
	keys = pgvecScopeLocks(s.names.table, []string{"replaced/0"}, nil, rows(repl))
	if _, _, err := s.replaceSource(ctx, replaceScope{urls: []string{"replaced/0"}}, repl, nil); err != nil {
		t.Fatal(err)
	}
	if held != len(keys) || held == 0 {
		t.Fatalf("a source replacement held %d of its %d advisory locks in its transaction", held, len(keys))
	}

	many := docs("indexed", 300)
	keys, held = pgvecScopeLocks(s.names.table, nil, nil, rows(many)), -1
	if err := s.Index(ctx, many); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("Index of %d URLs held %d advisory locks, want 0", len(many), held)
	}
}
