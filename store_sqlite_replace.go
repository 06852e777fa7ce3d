package engine

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/firebase/genkit/go/ai"
)

// sqliteScopeWhere returns the WHERE clause and arguments selecting the
// chunks in scope ("0" for an empty scope).
func sqliteScopeWhere(scope replaceScope) (string, []any) {
	var where string
	var args []any
	if len(scope.urls) > 0 {
		where = "url IN (" + sqlitePlaceholders(len(scope.urls)) + ")"
		for _, u := range scope.urls {
			args = append(args, u)
		}
	}
	if len(scope.sources) > 0 {
		if where != "" {
			where += " OR "
		}
		where += "source IN (" + sqlitePlaceholders(len(scope.sources)) + ")"
		for _, src := range scope.sources {
			args = append(args, src)
		}
	}
	if where == "" {
		return "0", nil
	}
	return where, args
}

// countScope implements scopeCounter: the number of chunks in scope.
func (s *SQLiteStore) countScope(ctx context.Context, scope replaceScope) (int, error) {
	if err := s.checkOpen("count scope"); err != nil {
		return 0, err
	}
	where, args := sqliteScopeWhere(scope)
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite count scope: %w", err)
	}
	return n, nil
}

// replaceSource implements sourceReplacer through the one write path
// (writeDocs): chunks already stored with the same ID (same source, url,
// text and metadata) are kept; a new chunk whose text equals a stored
// chunk's reuses that vector; the others are embedded in batches of 100,
// with no transaction open. Then one write transaction inserts the new
// chunks and deletes the scope's chunks that are not in docs (as the scope
// is at that moment, so a concurrent writer's changes are respected):
// readers see the old version or the new one, never a mix (the writer of a
// Bulk run holds it for its batch instead: SQLiteStore.Bulk). Any error, a
// cancelled ctx included, leaves the database unchanged. Nothing is
// written at all when the source is unchanged.
func (s *SQLiteStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	return s.writeScope(ctx, writeNow, scope, docs, progress)
}

// writeBatch implements batchStore: the write held for the run's batch.
func (s *SQLiteStore) writeBatch(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	return s.writeScope(ctx, writeHeld, scope, docs, progress)
}

// writeScope is a source replacement (or, mode writeHeld, one held for a
// Bulk run) through writeDocs. A held replacement of the same scope
// commits first: the plan must see it.
func (s *SQLiteStore) writeScope(ctx context.Context, mode writeMode, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	if err := s.checkOpen(mode.op()); err != nil {
		return 0, 0, err
	}
	if err := s.flushBulkFor(ctx, scope, false); err != nil {
		return 0, 0, fmt.Errorf("sqlite %s: %w", mode.op(), err)
	}
	written, deleted, err = writeDocs(ctx, s, mode, scope, docs, progress)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite %s: %w", mode.op(), err)
	}
	return written, deleted, nil
}

// sqliteWriteRows are an SQLiteStore's prepared rows (writeRows).
type sqliteWriteRows []sqliteRow

func (r sqliteWriteRows) count() int                { return len(r) }
func (r sqliteWriteRows) rowID(i int) string        { return r[i].id }
func (r sqliteWriteRows) rowText(i int) string      { return r[i].textHash }
func (r sqliteWriteRows) rowDoc(i int) *ai.Document { return r[i].doc }
func (r sqliteWriteRows) rowVec(i int) []float32    { return r[i].vec }
func (r sqliteWriteRows) setVec(i int, v []float32) { r[i].vec = v }

// prepareRows implements writeBackend.
func (s *SQLiteStore) prepareRows(docs []*ai.Document) (writeRows, error) {
	rows, err := sqlitePrepare(docs)
	return sqliteWriteRows(rows), err
}

// storedIDs implements writeBackend.
func (s *SQLiteStore) storedIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	return s.existingIDs(ctx, s.db, ids)
}

// countStale implements writeBackend.
func (s *SQLiteStore) countStale(ctx context.Context, scope replaceScope, keep map[string]bool) (int, error) {
	stale, err := s.staleInScope(ctx, s.db, scope, keep)
	return len(stale), err
}

// writeEmbedder implements writeBackend.
func (s *SQLiteStore) writeEmbedder() ai.Embedder { return s.emb }

// applyWrite implements writeBackend. A write through a Bulk run's writer
// is held (bulkHold) and committed with its batch; otherwise one write
// transaction deletes the scope's chunks not kept (as the scope is then:
// another process may have changed it since the plan), inserts the new
// rows and advances the generation.
func (s *SQLiteStore) applyWrite(ctx context.Context, p *writePlan) (written, deleted int, err error) {
	rows := p.rows.(sqliteWriteRows)
	todo := make([]sqliteRow, len(p.add))
	for j, i := range p.add {
		todo[j] = rows[i]
	}
	if p.held {
		if err := s.bulkHold(ctx, sqliteBulkSource{scope: p.scope, keep: p.keep, todo: todo}); err != nil {
			return 0, 0, err
		}
		return len(todo), p.stale, nil
	}
	err = s.write(ctx, func(conn *sql.Conn) error {
		var stale []int64
		if !p.scope.empty() {
			var err error
			if stale, err = s.staleInScope(ctx, conn, p.scope, p.keep); err != nil {
				return err
			}
		}
		for _, rid := range stale {
			if _, err := conn.ExecContext(ctx, `DELETE FROM chunks WHERE rid = ?`, rid); err != nil {
				return fmt.Errorf("delete stale chunk: %w", err)
			}
		}
		n, err := s.insertRows(ctx, conn, todo)
		if err != nil {
			return err
		}
		written, deleted = n, len(stale)
		if n+len(stale) == 0 {
			return nil
		}
		return bumpGeneration(ctx, conn)
	})
	if err != nil {
		return 0, 0, err
	}
	if written+deleted > 0 {
		s.wrote.Store(true)
	}
	return written, deleted, nil
}

// staleInScope returns the row IDs of the scope's chunks whose IDs are not
// in keep.
func (s *SQLiteStore) staleInScope(ctx context.Context, q sqliteQuerier, scope replaceScope, keep map[string]bool) ([]int64, error) {
	where, args := sqliteScopeWhere(scope)
	rows, err := q.QueryContext(ctx, `SELECT rid, id FROM chunks WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list the source's chunks: %w", err)
	}
	defer rows.Close()
	var stale []int64
	for rows.Next() {
		var rid int64
		var id string
		if err := rows.Scan(&rid, &id); err != nil {
			return nil, err
		}
		if !keep[id] {
			stale = append(stale, rid)
		}
	}
	return stale, rows.Err()
}

// storedVectors implements writeBackend: for each row, the vector of a
// stored chunk (or of one a Bulk run holds) with the same text, and the
// store's dimension.
func (s *SQLiteStore) storedVectors(ctx context.Context, rows writeRows, idx []int) (int, error) {
	dim, err := s.storedDim(ctx, s.db)
	if err != nil {
		return 0, err
	}
	r := rows.(sqliteWriteRows)
	stmt, err := s.db.PrepareContext(ctx, `SELECT vec FROM chunks WHERE text_hash = ? LIMIT 1`)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	looked := make(map[string][]float32) // text hash -> vector (nil: none)
	for _, i := range idx {
		h := r[i].textHash
		if v, ok := looked[h]; ok {
			r[i].vec = v
			continue
		}
		if v, ok := s.bulkHeldVector(h); ok {
			r[i].vec, looked[h] = v, v
			continue
		}
		var b []byte
		switch err := stmt.QueryRowContext(ctx, h).Scan(&b); err {
		case nil:
			if r[i].vec = sqliteDecodeVec(b); r[i].vec == nil {
				return 0, fmt.Errorf("look up a vector by text: malformed vector of %d bytes", len(b))
			}
		case sql.ErrNoRows:
		default:
			return 0, fmt.Errorf("look up a vector by text: %w", err)
		}
		looked[h] = r[i].vec
	}
	return dim, nil
}
