package engine

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
)

// A new SQLite database opened without SQLiteOptions.KeywordLanguage
// follows the language of its documents: while the meta table holds the
// key 'language_auto', a write transaction that inserts chunks into a
// database grown to twice the size of the last count (the first write,
// then about 2, 4, 8 ... times as many chunks; 'language_checked') counts
// the chunks' detected languages (the stored ones and the new ones,
// metaLanguage) and records keywordLanguageFor's choice as the database's
// language, rebuilding chunk_terms when the choice changes and chunks are
// stored. Once the database holds sqliteLanguageSettleChunks chunks the
// key is deleted and the language stays. Searches read the recorded
// language while the key is there, so every process sees a change.

// sqliteLanguageSettleChunks is how many chunks a database holds when its
// keyword language stops following its documents: a whole manual (a
// translated one's first files may be its untranslated pages), while a
// change still rebuilds the terms of a bounded number of chunks. Counting
// at each doubling reads each chunk about twice in all.
const sqliteLanguageSettleChunks = 10000

// sqliteInitLanguageAuto sets up the language rule in initSchema's
// transaction: start adds the 'language_auto' key (a new database
// without a language), fixed deletes it (a language the app chose). It
// reports whether the key is there.
func sqliteInitLanguageAuto(ctx context.Context, conn *sql.Conn, start, fixed bool) (bool, error) {
	switch {
	case start:
		if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO meta (key, value) VALUES ('language_auto', 1)`); err != nil {
			return false, fmt.Errorf("record keyword language rule: %w", err)
		}
	case fixed:
		if _, err := conn.ExecContext(ctx, `DELETE FROM meta WHERE key = 'language_auto'`); err != nil {
			return false, fmt.Errorf("record keyword language rule: %w", err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = 'language_auto'`).Scan(&n); err != nil {
		return false, fmt.Errorf("read keyword language rule: %w", err)
	}
	return n > 0, nil
}

// keywordAnalyzer returns the analyzer of the database's keyword
// language: the one read at open, or, while the language follows the
// documents, the one recorded now.
func (s *SQLiteStore) keywordAnalyzer(ctx context.Context) (*textAnalyzer, error) {
	if !s.langAuto.Load() {
		return s.an.Load(), nil
	}
	var lang string
	var auto int
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'language'), (SELECT count(*) FROM meta WHERE key = 'language_auto')`).Scan(&lang, &auto)
	if err != nil {
		return nil, fmt.Errorf("read keyword language: %w", err)
	}
	an, err := sharedAnalyzer(lang)
	if err != nil {
		return nil, fmt.Errorf("keyword language of the database: %w", err)
	}
	s.an.Store(an)
	if auto == 0 {
		s.langAuto.Store(false)
	}
	return an, nil
}

// settleLanguage applies the language rule in a write transaction about to
// insert rows (see above). It does nothing once the rule has ended.
func (s *SQLiteStore) settleLanguage(ctx context.Context, conn *sql.Conn, rows []sqliteRow) error {
	if !s.langAuto.Load() {
		return nil
	}
	var auto, checked, stored int
	if err := conn.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM meta WHERE key = 'language_auto'),
		coalesce((SELECT value FROM meta WHERE key = 'language_checked'), 0), (SELECT count(*) FROM chunks)`).Scan(&auto, &checked, &stored); err != nil {
		return fmt.Errorf("read keyword language rule: %w", err)
	}
	if auto == 0 {
		return nil // another process ended it; searches read the language
	}
	total := stored + len(rows)
	if checked > 0 && total < 2*checked && total < sqliteLanguageSettleChunks {
		return nil
	}
	counts := map[string]int{}
	res, err := conn.QueryContext(ctx, `SELECT json_extract(CAST(doc AS TEXT), '$.metadata.`+metaLanguage+`'), count(*) FROM chunks GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("count the chunks' languages: %w", err)
	}
	for res.Next() {
		var code sql.NullString
		var n int
		if err := res.Scan(&code, &n); err != nil {
			res.Close()
			return fmt.Errorf("count the chunks' languages: %w", err)
		}
		if code.Valid && code.String != "" {
			counts[code.String] += n
		}
	}
	if err := res.Close(); err != nil {
		return fmt.Errorf("count the chunks' languages: %w", err)
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("count the chunks' languages: %w", err)
	}
	for i := range rows {
		if code := documentLanguage(rows[i].doc); code != "" {
			counts[code]++
		}
	}
	lang := keywordLanguageFor(counts)
	var recorded string
	if err := conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'language'`).Scan(&recorded); err != nil {
		return fmt.Errorf("read keyword language: %w", err)
	}
	if lang != recorded {
		if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'language'`, lang); err != nil {
			return fmt.Errorf("record keyword language: %w", err)
		}
		if stored > 0 {
			if _, err := sqliteRebuildTerms(ctx, conn); err != nil {
				return err
			}
		}
		slog.Info("sqlite store: keyword language follows the documents", "path", s.path, "from", recorded, "to", lang, "chunks", total)
	}
	var err2 error
	if total >= sqliteLanguageSettleChunks {
		_, err2 = conn.ExecContext(ctx, `DELETE FROM meta WHERE key IN ('language_auto', 'language_checked')`)
	} else {
		_, err2 = conn.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('language_checked', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, total)
	}
	if err2 != nil {
		return fmt.Errorf("record keyword language rule: %w", err2)
	}
	return nil
}
