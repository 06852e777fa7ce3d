package main

import (
	"context"
	"fmt"
	"time"
)

// sourceChecksTable holds, per indexed source, when an index run (or a
// watch) last read it and when its indexed text last changed: what
// `sources` and the web app show. It lives in the store's own database.
const sourceChecksTable = "askyourdocs_source_checks"

// sourceCheck is one source's record.
type sourceCheck struct {
	URL     string
	Checked time.Time
	// Changed is when the source's chunks last changed (new, edited,
	// emptied); zero when never seen to change.
	Changed time.Time
}

// sourceCheckAt returns the record of a source read at now: changed says
// whether its chunks changed then.
func sourceCheckAt(url string, now time.Time, changed bool) sourceCheck {
	c := sourceCheck{URL: url, Checked: now.UTC()}
	if changed {
		c.Changed = c.Checked
	}
	return c
}

// saveChecks records checks (a zero Changed keeps the one recorded) and
// forgets gone (sources that left the index).
func (s *sqliteStore) saveChecks(ctx context.Context, checks []sourceCheck, gone []string) error {
	db := s.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+sourceChecksTable+
		` (url TEXT PRIMARY KEY, checked TEXT NOT NULL, changed TEXT NOT NULL DEFAULT '')`); err != nil {
		return fmt.Errorf("source checks: %w", err)
	}
	for _, c := range checks {
		changed := ""
		if !c.Changed.IsZero() {
			changed = c.Changed.Format(time.RFC3339Nano)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO `+sourceChecksTable+` (url, checked, changed) VALUES (?, ?, ?)
			ON CONFLICT (url) DO UPDATE SET checked = excluded.checked,
			changed = CASE WHEN excluded.changed = '' THEN `+sourceChecksTable+`.changed ELSE excluded.changed END`,
			c.URL, c.Checked.Format(time.RFC3339Nano), changed); err != nil {
			return fmt.Errorf("source checks: %w", err)
		}
	}
	for _, u := range gone {
		if _, err := db.ExecContext(ctx, `DELETE FROM `+sourceChecksTable+` WHERE url = ?`, u); err != nil {
			return fmt.Errorf("source checks: %w", err)
		}
	}
	return nil
}

// loadChecks returns the recorded checks by URL (none before the first
// index run that recorded them).
func (s *sqliteStore) loadChecks(ctx context.Context) (map[string]sourceCheck, error) {
	out := map[string]sourceCheck{}
	rows, err := s.DB().QueryContext(ctx, `SELECT url, checked, changed FROM `+sourceChecksTable)
	if err != nil {
		return out, nil // no table yet: nothing recorded
	}
	defer rows.Close()
	for rows.Next() {
		var u, checked, changed string
		if err := rows.Scan(&u, &checked, &changed); err != nil {
			return out, fmt.Errorf("source checks: %w", err)
		}
		c := sourceCheck{URL: u}
		c.Checked, _ = time.Parse(time.RFC3339Nano, checked)
		c.Changed, _ = time.Parse(time.RFC3339Nano, changed)
		out[u] = c
	}
	return out, rows.Err()
}

// saveChecks is sqliteStore's, in the PostgreSQL database, per store name.
func (s *pgStore) saveChecks(ctx context.Context, checks []sourceCheck, gone []string) error {
	if _, err := s.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+sourceChecksTable+
		` (name text NOT NULL, url text NOT NULL, checked timestamptz NOT NULL, changed timestamptz, PRIMARY KEY (name, url))`); err != nil {
		return fmt.Errorf("source checks: %w", err)
	}
	for _, c := range checks {
		var changed *time.Time
		if !c.Changed.IsZero() {
			changed = &c.Changed
		}
		if _, err := s.Pool.Exec(ctx, `INSERT INTO `+sourceChecksTable+` AS c (name, url, checked, changed) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name, url) DO UPDATE SET checked = EXCLUDED.checked, changed = coalesce(EXCLUDED.changed, c.changed)`,
			s.name, c.URL, c.Checked, changed); err != nil {
			return fmt.Errorf("source checks: %w", err)
		}
	}
	for _, u := range gone {
		if _, err := s.Pool.Exec(ctx, `DELETE FROM `+sourceChecksTable+` WHERE name = $1 AND url = $2`, s.name, u); err != nil {
			return fmt.Errorf("source checks: %w", err)
		}
	}
	return nil
}

// loadChecks is sqliteStore's, from the PostgreSQL database.
func (s *pgStore) loadChecks(ctx context.Context) (map[string]sourceCheck, error) {
	out := map[string]sourceCheck{}
	rows, err := s.Pool.Query(ctx, `SELECT url, checked, changed FROM `+sourceChecksTable+` WHERE name = $1`, s.name)
	if err != nil {
		return out, nil // no table yet
	}
	defer rows.Close()
	for rows.Next() {
		var c sourceCheck
		var changed *time.Time
		if err := rows.Scan(&c.URL, &c.Checked, &changed); err != nil {
			return out, fmt.Errorf("source checks: %w", err)
		}
		if changed != nil {
			c.Changed = *changed
		}
		out[c.URL] = c
	}
	return out, rows.Err()
}
