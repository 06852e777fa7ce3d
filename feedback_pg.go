package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PgFeedbackStore is FeedbackStore's log in a PostgreSQL table (for
// example on PgvecStore.Pool), shared by every process and machine that
// uses the database: appends are single-row inserts, ratings one-row
// updates under a row lock, whatever the log's size. Entries are stored as
// JSON in insertion order.
//
// All methods are safe for concurrent use, also across processes. Each
// call is bounded by 30 s. Errors wrap the same sentinels as
// FeedbackStore's.
type PgFeedbackStore[E any] struct {
	pool      *pgxpool.Pool
	table     string
	id        func(E) string
	setRating func(*E, string)
}

// NewPgFeedbackStore creates the table (and <table>_imports, see
// ImportOnce) when missing, under an advisory lock so processes starting
// together do not race, and returns the store over pool. table is a
// lower-case identifier; id and setRating are NewFeedbackStore's. The
// store does not own pool.
func NewPgFeedbackStore[E any](ctx context.Context, pool *pgxpool.Pool, table string, id func(E) string, setRating func(*E, string)) (*PgFeedbackStore[E], error) {
	if err := feedbackDBCheck(table, id, setRating); err != nil {
		return nil, fmt.Errorf("new postgres feedback store: %w", err)
	}
	if pool == nil {
		return nil, fmt.Errorf("new postgres feedback store: %w: pool is nil", ErrFeedbackInvalid)
	}
	s := &PgFeedbackStore[E]{pool: pool, table: table, id: id, setRating: setRating}
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
func (s *PgFeedbackStore[E]) Append(e E) error {
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
func (s *PgFeedbackStore[E]) Rate(id, rating string) (found bool, err error) {
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
func (s *PgFeedbackStore[E]) All() ([]E, error) {
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
func (s *PgFeedbackStore[E]) Get(id string) (e E, found bool, err error) {
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
func (s *PgFeedbackStore[E]) Len(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count feedback: %w", err)
	}
	return n, nil
}

// Ping checks that the database answers and the table exists.
func (s *PgFeedbackStore[E]) Ping(ctx context.Context) error {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+s.table+` LIMIT 1) t`).Scan(&n); err != nil {
		return fmt.Errorf("feedback table %s: %w", s.table, err)
	}
	return nil
}

// ImportOnce adds entries in one transaction unless the same entries from
// the same source were imported before (see SQLiteFeedbackStore.ImportOnce);
// it returns how many it added.
func (s *PgFeedbackStore[E]) ImportOnce(ctx context.Context, source string, entries []E) (int, error) {
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
