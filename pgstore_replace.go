package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// pgvecReplaceAttempts bounds how often a source replacement retries after a
// concurrent writer removed chunks it meant to keep unchanged.
const pgvecReplaceAttempts = 5

// replaceSource implements sourceReplacer (see ingest.go): it makes the
// chunks in scope equal to docs.
//
// Chunks already stored with the same ID (same source, url, text and
// metadata, embedded by the same embedder) are kept as they are; the others
// are embedded first (reusing stored vectors of equal text,
// pgvecEmbedBatch documents per call, progress reported per batch), with no
// transaction open. Then one transaction takes an advisory lock per URL
// and source of the scope and of docs, writes the new chunks and deletes
// the scope's chunks that are not in docs, and commits. Readers, and the
// next run after a crash or a kill at any moment, see the source wholly old
// or wholly new; concurrent replacements of one source serialise on the
// locks, so the last to commit wins whole. On any error, including a
// cancelled ctx, the old chunks are left as they were.
func (s *PgvecStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	if err := s.checkOpen("replace source"); err != nil {
		return 0, 0, err
	}
	if len(docs) > 0 {
		if err := s.checkDim(ctx, "replace source"); err != nil {
			return 0, 0, err
		}
	}
	prepared, err := pgvecPrepare(docs)
	if err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
	}
	t := pgvecIdent(s.names.table)
	urls, sources := scope.urls, scope.sources
	if urls == nil {
		urls = []string{}
	}
	if sources == nil {
		sources = []string{}
	}

	// The scope's current chunks: ID -> embedder.
	rows, err := s.Pool.Query(ctx, `SELECT id, embedder FROM `+t+` WHERE url = ANY($1) OR source = ANY($2)`, urls, sources)
	if err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: list current chunks: %w", err)
	}
	current := make(map[string]string)
	for rows.Next() {
		var id, emb string
		if err := rows.Scan(&id, &emb); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("pgvector replace source: list current chunks: %w", err)
		}
		current[id] = emb
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: list current chunks: %w", err)
	}

	keep := make([]string, 0, len(prepared))
	var todo, kept []*pgvecRow
	for i := range prepared {
		r := &prepared[i]
		keep = append(keep, r.id)
		if emb, ok := current[r.id]; ok && emb == s.embName {
			kept = append(kept, r)
			continue
		}
		todo = append(todo, r)
	}
	locks := pgvecScopeLocks(s.names.table, urls, sources, prepared)

	total := len(todo)
	if progress != nil {
		progress(0, total)
	}
	if err := s.embedWithProgress(ctx, todo, progress); err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
	}
	if run := s.bulkRun(); run != nil {
		// A Bulk run commits the source with its next batch.
		keepSet := make(map[string]bool, len(keep))
		for _, id := range keep {
			keepSet[id] = true
		}
		for id := range current {
			if !keepSet[id] {
				deleted++
			}
		}
		src := &pgvecBulkSource{urls: urls, sources: sources, keep: keep, todo: todo, kept: kept, locks: locks}
		if err := s.addBulkSource(ctx, run, src); err != nil {
			return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
		}
		return len(todo), deleted, nil
	}
	deferred, err := s.writeAdding(ctx, todo, func() error { return s.replaceLoop(ctx, urls, sources, keep, locks, &todo, kept, &deleted) })
	if err != nil {
		return 0, 0, fmt.Errorf("pgvector replace source: %w", err)
	}
	if !deferred {
		s.compactTerms(ctx, todo)
	}
	return len(todo), deleted, nil
}

// lockKept takes the sources' advisory locks in tx and returns the chunks
// of kept (meant to stay unchanged) that a concurrent writer removed
// meanwhile, which the caller must write before it writes anything.
func (s *PgvecStore) lockKept(ctx context.Context, tx pgx.Tx, locks []int64, kept []*pgvecRow) ([]*pgvecRow, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k`, locks); err != nil {
		return nil, fmt.Errorf("lock sources: %w", err)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	ids := make([]string, len(kept))
	for i, r := range kept {
		ids[i] = r.id
	}
	rows, err := tx.Query(ctx, `SELECT id FROM `+pgvecIdent(s.names.table)+` WHERE id = ANY($1) AND embedder = $2`, ids, s.embName)
	if err != nil {
		return nil, fmt.Errorf("check kept chunks: %w", err)
	}
	there, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("check kept chunks: %w", err)
	}
	if len(there) == len(kept) {
		return nil, nil
	}
	have := make(map[string]bool, len(there))
	for _, id := range there {
		have[id] = true
	}
	var missing []*pgvecRow
	for _, r := range kept {
		if !have[r.id] {
			missing = append(missing, r)
		}
	}
	return missing, nil
}

// replaceLoop is a source replacement's transaction, retried (with the
// chunks meant to stay unchanged that a concurrent writer removed meanwhile
// embedded and added to *todo) until it commits with every kept chunk
// present; *deleted gets the number of stale chunks deleted.
func (s *PgvecStore) replaceLoop(ctx context.Context, urls, sources, keep []string, locks []int64, todoP *[]*pgvecRow, kept []*pgvecRow, deleted *int) error {
	t := pgvecIdent(s.names.table)
	todo := *todoP
	defer func() { *todoP = todo }()
	for attempt := 1; ; attempt++ {
		var missing []*pgvecRow
		err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			if err := s.lockLanguage(ctx, tx); err != nil {
				return err
			}
			// Under the lock: chunks meant to stay unchanged that a
			// concurrent writer removed in the meantime must be written.
			var err error
			if missing, err = s.lockKept(ctx, tx, locks, kept); err != nil || len(missing) > 0 {
				return err // nothing written: retried below
			}
			if err := s.write(ctx, tx, todo); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE (url = ANY($1) OR source = ANY($2)) AND id <> ALL($3)`, urls, sources, keep)
			if err != nil {
				return fmt.Errorf("delete stale chunks: %w", err)
			}
			*deleted = int(tag.RowsAffected())
			if s.replaceHook != nil {
				return s.replaceHook(ctx)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		if attempt == pgvecReplaceAttempts {
			return fmt.Errorf("concurrent writers kept removing chunks of this source, gave up after %d attempts", attempt)
		}
		kept = slices.DeleteFunc(kept, func(r *pgvecRow) bool { return slices.Contains(missing, r) })
		if err := s.embedWithProgress(ctx, missing, nil); err != nil {
			return err
		}
		todo = append(todo, missing...)
	}
}

// embedWithProgress fills the vectors of rows, pgvecEmbedBatch at a time:
// stored vectors of equal text first, then the embedder. progress, when not
// nil, gets the number of rows done after each batch.
func (s *PgvecStore) embedWithProgress(ctx context.Context, rows []*pgvecRow, progress func(done, total int)) error {
	for start := 0; start < len(rows); start += pgvecEmbedBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := rows[start:min(start+pgvecEmbedBatch, len(rows))]
		if _, err := s.lookup(ctx, batch); err != nil {
			return err
		}
		if _, err := s.embed(ctx, batch); err != nil {
			return err
		}
		if progress != nil {
			progress(start+len(batch), len(rows))
		}
	}
	return ctx.Err()
}

// pgvecScopeLocks returns the advisory lock keys of a source replacement:
// one per URL and source of the scope and of the rows written, in the
// chunk table's key space, sorted so that writers take them in one order
// (no deadlock). Distinct names may share a key (a 64-bit hash): that
// only makes two writers wait for each other.
func pgvecScopeLocks(table string, urls, sources []string, rows []pgvecRow) []int64 {
	seen := make(map[int64]bool)
	add := func(kind, v string) {
		if v == "" {
			return
		}
		seen[pgvecLockKey(table+"\x00"+kind+"\x00"+v)] = true
	}
	for _, u := range urls {
		add("url", u)
	}
	for _, src := range sources {
		add("source", src)
	}
	for i := range rows {
		add("url", metaString(rows[i].doc.Metadata, MetaURL))
		add("source", metaString(rows[i].doc.Metadata, MetaSource))
	}
	keys := make([]int64, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// countScope implements scopeCounter (see ingest.go): the number of chunks
// whose "url" is in scope.urls or whose "source" is in scope.sources, read
// from the B-tree indexes.
func (s *PgvecStore) countScope(ctx context.Context, scope replaceScope) (int, error) {
	if err := s.checkOpen("count scope"); err != nil {
		return 0, err
	}
	urls, sources := scope.urls, scope.sources
	if urls == nil {
		urls = []string{}
	}
	if sources == nil {
		sources = []string{}
	}
	var n int64
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)+` WHERE url = ANY($1) OR source = ANY($2)`, urls, sources).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgvector count scope: %w", err)
	}
	return int(n), nil
}
