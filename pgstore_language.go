package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// A new PgvecStore opened without PgvecOptions.TextSearchConfig follows the
// language of its documents, as a new SQLiteStore does
// (store_sqlite_language.go): while the store's row of the meta table has
// ts_auto set, every write transaction that stores chunks first takes that
// row's lock and, when the store has grown to twice the size of the last
// count (ts_checked), counts the detected languages of the stored chunks
// and of the new ones (metaLanguage) and records keywordLanguageFor's
// choice as the store's configuration, re-making the tsvector column and
// the postings when the choice changes. Once the store holds
// pgvecLanguageSettleChunks chunks ts_auto is cleared and the
// configuration stays. Searches read the configuration of the server they
// read from while ts_auto is set.

// pgvecLanguageSettleChunks is how many chunks a store holds when its text
// search configuration stops following its documents
// (sqliteLanguageSettleChunks, for the same reasons).
const pgvecLanguageSettleChunks = sqliteLanguageSettleChunks

// pgvecLanguage is a store's text search configuration and the analyzer of
// its posting table (nil for a custom configuration, ranked with the
// tsvector column).
type pgvecLanguage struct {
	name string
	an   *textAnalyzer
}

// setLang makes config the store's text search configuration.
func (s *PgvecStore) setLang(config string) {
	if l := s.lang.Load(); l != nil && l.name == config {
		return
	}
	s.lang.Store(&pgvecLanguage{name: config, an: pgvecAnalyzer(config)})
}

// curLang returns the store's text search configuration as last read.
func (s *PgvecStore) curLang() *pgvecLanguage { return s.lang.Load() }

// refreshLang reads the store's configuration again, on the server
// readPool(ctx) gives, while it follows the documents; after that it does
// nothing.
func (s *PgvecStore) refreshLang(ctx context.Context) error {
	if !s.langAuto.Load() {
		return nil
	}
	var config string
	var auto bool
	if err := s.readPool(ctx).QueryRow(ctx, `SELECT ts_config, ts_auto FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&config, &auto); err != nil {
		return fmt.Errorf("read text search configuration: %w", err)
	}
	s.setLang(config)
	if !auto {
		s.langAuto.Store(false)
	}
	return nil
}

// lockLanguage takes the lock of the store's row of the meta table first
// in a write transaction, while the configuration follows the documents:
// settleLanguage may re-make the tsvector column (an ACCESS EXCLUSIVE lock
// on the chunk table), so writers must queue for the row before they hold
// anything on the table, or two could wait for each other.
func (s *PgvecStore) lockLanguage(ctx context.Context, tx pgx.Tx) error {
	if !s.langAuto.Load() {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1 FOR UPDATE`, s.name); err != nil {
		return fmt.Errorf("lock text search configuration: %w", err)
	}
	return nil
}

// settleLanguage applies the language rule in tx, about to store rows, and
// returns the configuration the rows are analysed in.
func (s *PgvecStore) settleLanguage(ctx context.Context, tx pgx.Tx, rows []*pgvecRow) (*pgvecLanguage, error) {
	if !s.langAuto.Load() {
		return s.curLang(), nil
	}
	var config string
	var auto bool
	var checked int
	if err := tx.QueryRow(ctx, `SELECT ts_config, ts_auto, ts_checked FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1 FOR UPDATE`, s.name).Scan(&config, &auto, &checked); err != nil {
		return nil, fmt.Errorf("read text search configuration: %w", err)
	}
	if !auto {
		// Ended by another process, committed: this one follows.
		s.setLang(config)
		s.langAuto.Store(false)
		return s.curLang(), nil
	}
	var stored int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.names.table)).Scan(&stored); err != nil {
		return nil, fmt.Errorf("count chunks: %w", err)
	}
	total := stored + len(rows)
	if checked > 0 && total < 2*checked && total < pgvecLanguageSettleChunks {
		return &pgvecLanguage{name: config, an: pgvecAnalyzer(config)}, nil
	}
	counts := map[string]int{}
	res, err := tx.Query(ctx, `SELECT metadata->>'`+metaLanguage+`', count(*) FROM `+pgvecIdent(s.names.table)+` GROUP BY 1`)
	if err != nil {
		return nil, fmt.Errorf("count the chunks' languages: %w", err)
	}
	for res.Next() {
		var code *string
		var n int
		if err := res.Scan(&code, &n); err != nil {
			res.Close()
			return nil, fmt.Errorf("count the chunks' languages: %w", err)
		}
		if code != nil && *code != "" {
			counts[*code] += n
		}
	}
	res.Close()
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("count the chunks' languages: %w", err)
	}
	for _, r := range rows {
		if code := documentLanguage(r.doc); code != "" {
			counts[code]++
		}
	}
	lang := keywordLanguageFor(counts)
	if lang != config {
		if err := pgvecSwitchTextSearch(ctx, tx, s.names, lang, false); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET ts_config = $2, updated_at = now() WHERE store = $1`, s.name, lang); err != nil {
			return nil, fmt.Errorf("record text search configuration: %w", err)
		}
		slog.Info("pgvector store: text search configuration follows the documents", "store", s.name, "from", config, "to", lang, "chunks", total)
	}
	if _, err := tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET ts_checked = $2, ts_auto = $3 WHERE store = $1`,
		s.name, total, total < pgvecLanguageSettleChunks); err != nil {
		return nil, fmt.Errorf("record text search configuration: %w", err)
	}
	return &pgvecLanguage{name: lang, an: pgvecAnalyzer(lang)}, nil
}

// pgvecSwitchTextSearch re-makes the tsvector column for language and
// rebuilds the postings in it, inside tx. The column's index is made again
// when always is set or it existed (a Bulk run drops it and makes it when
// the run ends).
func pgvecSwitchTextSearch(ctx context.Context, tx pgx.Tx, n pgvecNames, language string, always bool) error {
	regconfig, err := pgvecRegconfig(language)
	if err != nil {
		return err
	}
	index := always
	if !index {
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgvecIdent(n.tsv)).Scan(&index); err != nil {
			return fmt.Errorf("look for index %s: %w", n.tsv, err)
		}
	}
	stmts := []string{
		`DROP INDEX IF EXISTS ` + pgvecIdent(n.fts),
		`ALTER TABLE ` + pgvecIdent(n.table) + ` DROP COLUMN IF EXISTS tsv`,
		pgvecTSVColumnSQL(n, regconfig),
	}
	if index {
		stmts = append(stmts, pgvecTSVIndexSQL(n))
	}
	for _, stmt := range stmts {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("rebuild full-text column for %s: %w", language, err)
		}
	}
	if err := pgvecRebuildTerms(ctx, tx, n, language); err != nil {
		return fmt.Errorf("rebuild keyword postings for %s: %w", language, err)
	}
	return nil
}
