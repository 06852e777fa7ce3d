package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgvecReplaceAttempts bounds how often a source replacement retries after a
// concurrent writer removed chunks it meant to keep unchanged.
const pgvecReplaceAttempts = 5

// replaceSource implements sourceReplacer (see ingest.go) through the one
// write path (writeDocs): it makes the chunks in scope equal to docs.
//
// Chunks already stored with the same ID (same source, url, text and
// metadata, embedded by the same embedder) are kept as they are; the others
// are embedded first (reusing stored vectors of equal text, 100 documents
// per call, progress reported per batch), with no transaction open. Then
// one transaction takes an advisory lock per URL and source of the scope
// and of docs, writes the new chunks and deletes the scope's chunks that
// are not in docs, and commits (applyWrite). Readers, and the next run
// after a crash or a kill at any moment, see the source wholly old or
// wholly new; concurrent replacements of one source serialise on the
// locks, so the last to commit wins whole. On any error, including a
// cancelled ctx, the old chunks are left as they were.
func (s *PgvecStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	return s.writeScope(ctx, writeNow, scope, docs, progress)
}

// writeBatch implements batchStore: the write held for the run's batch.
func (s *PgvecStore) writeBatch(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	return s.writeScope(ctx, writeHeld, scope, docs, progress)
}

// writeScope is a source replacement (or, mode writeHeld, one held for a
// Bulk run) through writeDocs, after the open and dimension checks.
func (s *PgvecStore) writeScope(ctx context.Context, mode writeMode, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	op := mode.op()
	if err := s.checkOpen(op); err != nil {
		return 0, 0, err
	}
	if len(docs) > 0 {
		if err := s.checkDim(ctx, op); err != nil {
			return 0, 0, err
		}
	}
	written, deleted, err = writeDocs(ctx, s, mode, scope, docs, progress)
	if err != nil {
		return 0, 0, fmt.Errorf("pgvector %s: %w", op, err)
	}
	return written, deleted, nil
}

// pgvecWriteRows are a PgvecStore's prepared rows (writeRows).
type pgvecWriteRows []*pgvecRow

func (r pgvecWriteRows) count() int                { return len(r) }
func (r pgvecWriteRows) rowID(i int) string        { return r[i].id }
func (r pgvecWriteRows) rowText(i int) string      { return r[i].textHash }
func (r pgvecWriteRows) rowDoc(i int) *ai.Document { return r[i].doc }
func (r pgvecWriteRows) rowVec(i int) []float32    { return r[i].vec }
func (r pgvecWriteRows) setVec(i int, v []float32) { r[i].vec = v }

// prepareRows implements writeBackend.
func (s *PgvecStore) prepareRows(docs []*ai.Document) (writeRows, error) {
	prepared, err := pgvecPrepare(docs)
	if err != nil {
		return nil, err
	}
	rows := make(pgvecWriteRows, len(prepared))
	for i := range prepared {
		rows[i] = &prepared[i]
	}
	return rows, nil
}

// storedIDs implements writeBackend: the IDs stored with the store's
// embedder, pgvecLookupBatch per query.
func (s *PgvecStore) storedIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool)
	for start := 0; start < len(ids); start += pgvecLookupBatch {
		rows, err := s.Pool.Query(ctx, `SELECT id FROM `+pgvecIdent(s.names.table)+` WHERE id = ANY($1) AND embedder = $2`,
			ids[start:min(start+pgvecLookupBatch, len(ids))], s.embName)
		if err != nil {
			return nil, fmt.Errorf("look up stored chunks: %w", err)
		}
		there, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("look up stored chunks: %w", err)
		}
		for _, id := range there {
			out[id] = true
		}
	}
	return out, nil
}

// deleteBatch implements batchStore: the store's delete, after the
// sources the run holds commit (a held source of the URL must not come
// back after its deletion).
func (s *PgvecStore) deleteBatch(ctx context.Context, key, value string) (int, error) {
	if err := s.flushBulkNow(ctx); err != nil {
		return 0, err
	}
	if key == MetaSource {
		return s.DeleteBySource(ctx, value)
	}
	return s.DeleteByURL(ctx, value)
}

// countStale implements writeBackend.
func (s *PgvecStore) countStale(ctx context.Context, scope replaceScope, keep map[string]bool) (int, error) {
	urls, sources := scope.lists()
	ids := make([]string, 0, len(keep))
	for id := range keep {
		ids = append(ids, id)
	}
	var n int64
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)+
		` WHERE (url = ANY($1) OR source = ANY($2)) AND id <> ALL($3)`, urls, sources, ids).Scan(&n); err != nil {
		return 0, fmt.Errorf("count stale chunks: %w", err)
	}
	return int(n), nil
}

// storedVectors implements writeBackend: the vectors of stored texts (by
// text hash, embedded by the store's embedder), pgvecLookupBatch hashes per
// query, and the store's dimension.
func (s *PgvecStore) storedVectors(ctx context.Context, rows writeRows, idx []int) (int, error) {
	r := rows.(pgvecWriteRows)
	var hashes []string
	seen := make(map[string]bool)
	for _, i := range idx {
		if h := r[i].textHash; !seen[h] {
			seen[h] = true
			hashes = append(hashes, h)
		}
	}
	vecs := make(map[string][]float32)
	for start := 0; start < len(hashes); start += pgvecLookupBatch {
		res, err := s.Pool.Query(ctx, `SELECT DISTINCT ON (text_hash) text_hash, embedding FROM `+pgvecIdent(s.names.table)+
			` WHERE text_hash = ANY($1) AND embedder = $2`, hashes[start:min(start+pgvecLookupBatch, len(hashes))], s.embName)
		if err != nil {
			return 0, fmt.Errorf("look up stored vectors: %w", err)
		}
		for res.Next() {
			var h string
			var v pgvector.Vector
			if err := res.Scan(&h, &v); err != nil {
				res.Close()
				return 0, fmt.Errorf("look up stored vectors: %w", err)
			}
			vecs[h] = v.Slice()
		}
		res.Close()
		if err := res.Err(); err != nil {
			return 0, fmt.Errorf("look up stored vectors: %w", err)
		}
	}
	for _, i := range idx {
		if v, ok := vecs[r[i].textHash]; ok {
			r[i].vec = v
		}
	}
	return s.dim, nil
}

// writeEmbedder implements writeBackend.
func (s *PgvecStore) writeEmbedder() ai.Embedder { return s.Embedder }

// fillRows sets the vectors of rows (writeDocs's lookup and embedding),
// without progress.
func (s *PgvecStore) fillRows(ctx context.Context, rows []*pgvecRow) error {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	return fillVectors(ctx, s, pgvecWriteRows(rows), idx, nil)
}

// lists returns the scope's URLs and sources, empty rather than nil (for
// = ANY($n)).
func (sc replaceScope) lists() (urls, sources []string) {
	urls, sources = sc.urls, sc.sources
	if urls == nil {
		urls = []string{}
	}
	if sources == nil {
		sources = []string{}
	}
	return urls, sources
}

// applyWrite implements writeBackend. A write through a Bulk run's writer
// is held and committed with the run's next batch (addBulkSource);
// otherwise replaceTx writes it, through writeAdding (which takes the bulk
// path for a write large against the rows present).
func (s *PgvecStore) applyWrite(ctx context.Context, p *writePlan) (written, deleted int, err error) {
	rows := p.rows.(pgvecWriteRows)
	pick := func(idx []int) []*pgvecRow {
		out := make([]*pgvecRow, len(idx))
		for j, i := range idx {
			out[j] = rows[i]
		}
		return out
	}
	todo, kept := pick(p.add), pick(p.kept)
	urls, sources := p.scope.lists()
	var locks []int64
	if !p.scope.empty() {
		// A source replacement locks its URLs and sources, and re-checks
		// under the locks the rows it keeps. An Index (no scope) replaces
		// nothing and takes no locks: its rows may name thousands of URLs,
		// more advisory locks than the server's lock table holds.
		locks = pgvecScopeLocks(s.names.table, urls, sources, rows)
	} else {
		kept = nil
	}
	if p.held {
		run := s.bulkRun()
		if run == nil {
			return 0, 0, errBatchEnded
		}
		src := &pgvecBulkSource{urls: urls, sources: sources, keep: p.keepIDs, todo: todo, kept: kept, locks: locks}
		if err := s.addBulkSource(ctx, run, src); err != nil {
			return 0, 0, err
		}
		return len(todo), p.stale, nil
	}
	w := &pgvecReplace{scope: p.scope, keep: p.keepIDs, locks: locks, todo: todo, kept: kept}
	deferred, err := s.writeAdding(ctx, todo, func() error { return s.replaceTx(ctx, w) })
	if err != nil {
		return 0, 0, err
	}
	if !deferred {
		s.compactTerms(ctx, w.todo)
	}
	return len(w.todo), w.deleted, nil
}

// pgvecReplace is one write's transaction state: what it keeps, the rows
// it writes (growing when a concurrent writer removed kept rows) and the
// stale chunks it deleted.
type pgvecReplace struct {
	scope      replaceScope
	keep       []string
	locks      []int64
	todo, kept []*pgvecRow
	deleted    int
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

// replaceTx is a write's transaction, retried (with the chunks meant to
// stay unchanged that a concurrent writer removed meanwhile embedded and
// added to w.todo) until it commits with every kept chunk present.
func (s *PgvecStore) replaceTx(ctx context.Context, w *pgvecReplace) error {
	t := pgvecIdent(s.names.table)
	urls, sources := w.scope.lists()
	for attempt := 1; ; attempt++ {
		var missing []*pgvecRow
		err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			if err := s.lockLanguage(ctx, tx); err != nil {
				return err
			}
			// Under the lock: chunks meant to stay unchanged that a
			// concurrent writer removed in the meantime must be written.
			var err error
			if missing, err = s.lockKept(ctx, tx, w.locks, w.kept); err != nil || len(missing) > 0 {
				return err // nothing written: retried below
			}
			if err := s.writeRows(ctx, tx, w.todo, s.bulkLoading()); err != nil {
				return err
			}
			w.deleted = 0
			if !w.scope.empty() {
				tag, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE (url = ANY($1) OR source = ANY($2)) AND id <> ALL($3)`, urls, sources, w.keep)
				if err != nil {
					return fmt.Errorf("delete stale chunks: %w", err)
				}
				w.deleted = int(tag.RowsAffected())
			}
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
		w.kept = slices.DeleteFunc(w.kept, func(r *pgvecRow) bool { return slices.Contains(missing, r) })
		if err := s.fillRows(ctx, missing); err != nil {
			return err
		}
		w.todo = append(w.todo, missing...)
	}
}

// pgvecScopeLocks returns the advisory lock keys of a source replacement:
// one per URL and source of the scope and of the rows written, in the
// chunk table's key space, sorted so that writers take them in one order
// (no deadlock). Distinct names may share a key (a 64-bit hash): that
// only makes two writers wait for each other.
func pgvecScopeLocks(table string, urls, sources []string, rows []*pgvecRow) []int64 {
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
	urls, sources := scope.lists()
	var n int64
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)+` WHERE url = ANY($1) OR source = ANY($2)`, urls, sources).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgvector count scope: %w", err)
	}
	return int(n), nil
}
