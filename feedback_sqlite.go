package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// sqliteFeedbackStore is the FeedbackDB NewSQLiteFeedbackStore returns:
// appends are single-row inserts, ratings one-row updates, whatever the
// log's size; entries are stored as JSON in insertion order.
type sqliteFeedbackStore[E any] struct {
	db        *sql.DB
	table     string
	id        func(E) string
	setRating func(*E, string)
}

// NewSQLiteFeedbackStore creates the table (and <table>_imports, see
// FeedbackDB.ImportOnce) in db when missing and returns the feedback log
// kept in it, for example on SQLiteStore.DB, so every process that opens
// the database shares it. table is a lower-case identifier; id and
// setRating are NewFeedbackStore's. The log does not own db: closing db is
// the caller's. Its methods are safe for concurrent use, also across
// processes (SQLite's write lock; the busy timeout of the handle applies).
func NewSQLiteFeedbackStore[E any](ctx context.Context, db *sql.DB, table string, id func(E) string, setRating func(*E, string)) (FeedbackDB[E], error) {
	if err := feedbackDBCheck(table, id, setRating); err != nil {
		return nil, fmt.Errorf("new sqlite feedback store: %w", err)
	}
	if db == nil {
		return nil, fmt.Errorf("new sqlite feedback store: %w: db is nil", ErrFeedbackInvalid)
	}
	s := &sqliteFeedbackStore[E]{db: db, table: table, id: id, setRating: setRating}
	schema := `CREATE TABLE IF NOT EXISTS ` + table + ` (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE, entry TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ` + table + `_imports (source TEXT PRIMARY KEY, entries INTEGER NOT NULL, imported TEXT NOT NULL)`
	if err := sqliteRetryBusy(ctx, feedbackDBTimeout, func() error {
		_, err := db.ExecContext(ctx, schema)
		return err
	}); err != nil {
		return nil, fmt.Errorf("new sqlite feedback store %s: create tables: %w", table, err)
	}
	return s, nil
}

// Append inserts e; its ID must be non-empty and not yet in the log.
func (s *sqliteFeedbackStore[E]) Append(e E) error {
	eid, data, err := feedbackEncode(e, s.id)
	if err != nil {
		return fmt.Errorf("append feedback: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	res, err := s.db.ExecContext(ctx, `INSERT INTO `+s.table+` (id, entry, created) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		eid, string(data), feedbackNow().Format("2006-01-02T15:04:05.000Z07:00"))
	if err != nil {
		return fmt.Errorf("append feedback %s: %w", eid, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("append feedback %s: %w", eid, ErrFeedbackDuplicateID)
	}
	return nil
}

// Rate sets the rating of the entry with the given ID (see FeedbackStore.Rate)
// in one write transaction; found is false when no entry has the ID.
func (s *sqliteFeedbackStore[E]) Rate(id, rating string) (found bool, err error) {
	if err := feedbackCheckRating(id, rating); err != nil {
		return false, err
	}
	if id == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	err = sqliteWriteTx(ctx, s.db, func(conn *sql.Conn) error {
		var data string
		err := conn.QueryRowContext(ctx, `SELECT entry FROM `+s.table+` WHERE id = ?`, id).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
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
		_, err = conn.ExecContext(ctx, `UPDATE `+s.table+` SET entry = ? WHERE id = ?`, string(out), id)
		return err
	})
	if err != nil {
		return found, fmt.Errorf("rate feedback %s: %w", id, err)
	}
	return found, nil
}

// All returns every entry in the order they were appended.
func (s *sqliteFeedbackStore[E]) All() ([]E, error) {
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	rows, err := s.db.QueryContext(ctx, `SELECT entry FROM `+s.table+` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read feedback: %w", err)
	}
	defer rows.Close()
	var out []E
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("read feedback: %w", err)
		}
		var e E
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return nil, fmt.Errorf("read feedback: %w: %w", ErrFeedbackCorrupt, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read feedback: %w", err)
	}
	return out, nil
}

// Get returns the entry with the given ID; found is false when none has it.
func (s *sqliteFeedbackStore[E]) Get(id string) (e E, found bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), feedbackDBTimeout)
	defer cancel()
	var data string
	err = s.db.QueryRowContext(ctx, `SELECT entry FROM `+s.table+` WHERE id = ?`, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) || id == "" {
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
func (s *sqliteFeedbackStore[E]) Len(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+s.table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count feedback: %w", err)
	}
	return n, nil
}

// Ping checks that the database answers and the table exists.
func (s *sqliteFeedbackStore[E]) Ping(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+s.table+` LIMIT 1)`).Scan(&n); err != nil {
		return fmt.Errorf("feedback table %s: %w", s.table, err)
	}
	return nil
}

// ImportOnce is FeedbackDB's, in one BEGIN IMMEDIATE transaction.
func (s *sqliteFeedbackStore[E]) ImportOnce(ctx context.Context, source string, entries []E) (int, error) {
	ids, raw, err := feedbackEncodeAll(entries, s.id)
	if err != nil {
		return 0, fmt.Errorf("import feedback: %w", err)
	}
	key := feedbackImportKey(source, raw)
	now := feedbackNow().Format("2006-01-02T15:04:05.000Z07:00")
	added := 0
	err = sqliteWriteTx(ctx, s.db, func(conn *sql.Conn) error {
		res, err := conn.ExecContext(ctx, `INSERT INTO `+s.table+`_imports (source, entries, imported) VALUES (?, ?, ?) ON CONFLICT (source) DO NOTHING`,
			key, len(entries), now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // imported before
		}
		for i := range raw {
			var id any
			if ids[i] != "" {
				id = ids[i]
			}
			res, err := conn.ExecContext(ctx, `INSERT INTO `+s.table+` (id, entry, created) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
				id, string(raw[i]), now)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			added += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("import feedback from %s: %w", source, err)
	}
	return added, nil
}

// sqliteWriteTx runs fn in a BEGIN IMMEDIATE transaction on one connection
// of db and commits when fn returns nil.
func sqliteWriteTx(ctx context.Context, db *sql.DB, fn func(conn *sql.Conn) error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return sqliteConnWriteTx(ctx, conn, fn)
}

// sqliteConnWriteTx is sqliteWriteTx on conn.
func sqliteConnWriteTx(ctx context.Context, conn *sql.Conn, fn func(conn *sql.Conn) error) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin write transaction: %w", err)
	}
	defer func() {
		if err != nil {
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && !sqliteRolledBackItself(err, rerr) {
				err = errors.Join(err, fmt.Errorf("roll back: %w", rerr))
			}
		}
	}()
	if err := fn(conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
