package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgFeedbackStore is the FeedbackDB NewPgFeedbackStore returns: appends
// are single-row inserts, ratings one-row updates under a row lock,
// whatever the log's size; entries are stored as JSON in insertion order.
type pgFeedbackStore[E any] struct {
	pool      *pgxpool.Pool
	table     string
	id        func(E) string
	setRating func(*E, string)
}

// NewPgFeedbackStore creates the table (and <table>_imports, see
// FeedbackDB.ImportOnce) when missing, under an advisory lock so processes
// starting together do not race, and returns the feedback log kept in it,
// for example on PgvecStore.Pool, shared by every process and machine that
// uses the database. table is a lower-case identifier; id and setRating
// are NewFeedbackStore's. The log does not own pool. Its methods are safe
// for concurrent use, also across processes.
func NewPgFeedbackStore[E any](ctx context.Context, pool *pgxpool.Pool, table string, id func(E) string, setRating func(*E, string)) (FeedbackDB[E], error) {
	if err := feedbackDBCheck(table, id, setRating); err != nil {
		return nil, fmt.Errorf("new postgres feedback store: %w", err)
	}
	if pool == nil {
		return nil, fmt.Errorf("new postgres feedback store: %w: pool is nil", ErrFeedbackInvalid)
	}
	s := &pgFeedbackStore[E]{pool: pool, table: table, id: id, setRating: setRating}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('askyourdocs feedback schema'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (seq bigserial PRIMARY KEY, id text UNIQUE, entry text NOT NULL, created timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS `+table+`_imports (source text PRIMARY KEY, entries int NOT NULL, imported timestamptz NOT NULL DEFAULT now())`)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("new postgres feedback store %s: create tables: %w", table, err)
	}
	return s, nil
}

// Append inserts e; its ID must be non-empty and not yet in the log.
func (s *pgFeedbackStore[E]) Append(e E) error {
	eid, data, err := feedbackEncode(e, s.id)
	if err != nil {
		return fmt.Errorf("append feedback: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `INSERT INTO `+s.table+` (id, entry, created) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		eid, string(data), feedbackNow())
	if err != nil {
		return fmt.Errorf("append feedback %s: %w", eid, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("append feedback %s: %w", eid, ErrFeedbackDuplicateID)
	}
	return nil
}

// Rate sets the rating of the entry with the given ID (see FeedbackStore.Rate)
// in one transaction holding the row's lock; found is false when no entry
// has the ID.
func (s *pgFeedbackStore[E]) Rate(id, rating string) (found bool, err error) {
	if err := feedbackCheckRating(id, rating); err != nil {
		return false, err
	}
	if id == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var data string
		err := tx.QueryRow(ctx, `SELECT entry FROM `+s.table+` WHERE id = $1 FOR UPDATE`, id).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		out, err := feedbackRerate([]byte(data), rating, s.setRating)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE `+s.table+` SET entry = $1 WHERE id = $2`, string(out), id)
		return err
	})
	if err != nil {
		return found, fmt.Errorf("rate feedback %s: %w", id, err)
	}
	return found, nil
}

// All returns every entry in the order they were appended.
func (s *pgFeedbackStore[E]) All() ([]E, error) {
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT entry FROM `+s.table+` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read feedback: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (E, error) {
		var data string
		var e E
		if err := r.Scan(&data); err != nil {
			return e, err
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return e, fmt.Errorf("%w: %w", ErrFeedbackCorrupt, err)
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read feedback: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Get returns the entry with the given ID; found is false when none has it.
func (s *pgFeedbackStore[E]) Get(id string) (e E, found bool, err error) {
	if id == "" {
		return e, false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	var data string
	err = s.pool.QueryRow(ctx, `SELECT entry FROM `+s.table+` WHERE id = $1`, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, false, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("get feedback %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return e, false, fmt.Errorf("get feedback %s: %w: %w", id, ErrFeedbackCorrupt, err)
	}
	return e, true, nil
}

// Len returns the number of entries.
func (s *pgFeedbackStore[E]) Len(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count feedback: %w", err)
	}
	return n, nil
}

// Ping checks that the database answers and the table exists.
func (s *pgFeedbackStore[E]) Ping(ctx context.Context) error {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+s.table+` LIMIT 1) t`).Scan(&n); err != nil {
		return fmt.Errorf("feedback table %s: %w", s.table, err)
	}
	return nil
}

// ImportOnce is FeedbackDB's, in one transaction.
func (s *pgFeedbackStore[E]) ImportOnce(ctx context.Context, source string, entries []E) (int, error) {
	ids, raw, err := feedbackEncodeAll(entries, s.id)
	if err != nil {
		return 0, fmt.Errorf("import feedback: %w", err)
	}
	key := feedbackImportKey(source, raw)
	added := 0
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO `+s.table+`_imports (source, entries) VALUES ($1, $2) ON CONFLICT (source) DO NOTHING`, key, len(entries))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil // imported before
		}
		now := feedbackNow()
		for i := range raw {
			var id any
			if ids[i] != "" {
				id = ids[i]
			}
			tag, err := tx.Exec(ctx, `INSERT INTO `+s.table+` (id, entry, created) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, id, string(raw[i]), now)
			if err != nil {
				return err
			}
			added += int(tag.RowsAffected())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("import feedback from %s: %w", source, err)
	}
	return added, nil
}
