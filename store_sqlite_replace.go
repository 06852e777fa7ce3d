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

// replaceSource implements sourceReplacer. Chunks already stored with the
// same ID (same source, url, text and metadata) are kept; a new chunk whose
// text equals a stored chunk's reuses that vector; the others are embedded
// in batches of 100, with no transaction open. Then one write transaction
// inserts the new chunks and deletes the scope's chunks that are not in
// docs (as the scope is at that moment, so a concurrent writer's changes
// are respected): readers see the old version or the new one, never a mix.
// Any error, a cancelled ctx included, leaves the database unchanged.
// Nothing is written at all when the source is unchanged.
func (s *SQLiteStore) replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error) {
	if err := s.checkOpen("replace source"); err != nil {
		return 0, 0, err
	}
	// In a Bulk run, a held replacement of the same scope commits first:
	// the diff below must see it.
	if err := s.flushBulkFor(ctx, scope, false); err != nil {
		return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
	}
	rows, err := sqlitePrepare(docs)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
	}
	keep := make(map[string]bool, len(rows))
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		if !keep[r.id] {
			keep[r.id] = true
			ids = append(ids, r.id)
		}
	}
	have, err := s.existingIDs(ctx, s.db, ids)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
	}
	var todo []sqliteRow
	for _, r := range rows {
		if !have[r.id] {
			have[r.id] = true
			todo = append(todo, r)
		}
	}
	stale, err := s.staleInScope(ctx, s.db, scope, keep)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
	}
	if len(todo) == 0 && len(stale) == 0 {
		return 0, 0, nil // unchanged: no transaction, no new generation
	}
	if err := s.fillVectors(ctx, todo, progress); err != nil {
		return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
	}
	if held, err := s.bulkHold(ctx, sqliteBulkSource{scope: scope, keep: keep, todo: todo}); held {
		if err != nil {
			return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
		}
		return len(todo), len(stale), nil
	}
	err = s.write(ctx, func(conn *sql.Conn) error {
		// The scope again, inside the transaction: another process may
		// have changed it while this one embedded.
		stale, err := s.staleInScope(ctx, conn, scope, keep)
		if err != nil {
			return err
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
		return 0, 0, fmt.Errorf("sqlite replace source: %w", err)
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

// fillVectors sets the vector of every row in todo: from a stored chunk
// (or one a Bulk run holds) with the same text where there is one, else by
// embedding (batches of
// indexBatchSize, progress after each).
func (s *SQLiteStore) fillVectors(ctx context.Context, todo []sqliteRow, progress func(done, total int)) error {
	dim, err := s.storedDim(ctx, s.db)
	if err != nil {
		return err
	}
	var embed []int
	stmt, err := s.db.PrepareContext(ctx, `SELECT vec FROM chunks WHERE text_hash = ? LIMIT 1`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range todo {
		if v, ok := s.bulkHeldVector(todo[i].textHash); ok {
			todo[i].vec = v
			continue
		}
		var b []byte
		switch err := stmt.QueryRowContext(ctx, todo[i].textHash).Scan(&b); err {
		case nil:
			if todo[i].vec = sqliteDecodeVec(b); todo[i].vec == nil {
				return fmt.Errorf("look up a vector by text: malformed vector of %d bytes", len(b))
			}
		case sql.ErrNoRows:
			embed = append(embed, i)
		default:
			return fmt.Errorf("look up a vector by text: %w", err)
		}
	}
	done := len(todo) - len(embed)
	if progress != nil && len(todo) > 0 {
		progress(done, len(todo))
	}
	for start := 0; start < len(embed); start += indexBatchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := embed[start:min(start+indexBatchSize, len(embed))]
		batch := make([]*ai.Document, len(part))
		for j, i := range part {
			batch[j] = todo[i].doc
		}
		vecs, err := embedChecked(ctx, s.emb, batch, dim)
		if err != nil {
			return err
		}
		for j, i := range part {
			todo[i].vec = vecs[j]
		}
		if dim == 0 {
			dim = len(vecs[0])
		}
		done += len(part)
		if progress != nil {
			progress(done, len(todo))
		}
	}
	return ctx.Err()
}
