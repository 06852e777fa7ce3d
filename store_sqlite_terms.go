package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// sqliteTermsFunc is the SQL function the chunk_terms triggers call:
// askyourdocs_terms(text, language, breadcrumb[, headings]) returns the
// textAnalyzer terms of text, in order, then the terms and heading pairs
// of the heading field (breadcrumb and headings, each a string, else
// ignored: bm25JoinHeading) as many times as bm25HeadingTerms weighs
// them, every term encoded by sqliteEncodeTerm and separated by spaces: the document FTS5 indexes for keyword ranking,
// the same term counts and length LocalvecStore's BM25F index gives the
// chunk.
const sqliteTermsFunc = "askyourdocs_terms"

// sqliteTermsCall is the sqliteTermsFunc call for a chunks row named new:
// its text, the recorded language and the breadcrumb and merged headings
// from the stored document's metadata.
const sqliteTermsCall = sqliteTermsFunc + `(new.text, (SELECT value FROM meta WHERE key = 'language'), json_extract(CAST(new.doc AS TEXT), '$.metadata.` + MetaBreadcrumb + `'), json_extract(CAST(new.doc AS TEXT), '$.metadata.` + MetaHeadings + `'))`

// sqliteTermsSchema creates the keyword index: chunk_terms is a
// contentless FTS5 table whose row rowid holds the encoded analyzer terms
// of chunk rid, so its column length is the chunk's length in terms and
// bm25() ranks by them. The triggers keep it in step with chunks inside
// every write transaction, whichever statement writes the chunks, and
// delete a chunk's quantised vector with it.
const sqliteTermsSchema = `
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_terms USING fts5 (terms, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 0 tokenchars '_'");
CREATE TRIGGER IF NOT EXISTS chunks_terms_ai AFTER INSERT ON chunks BEGIN
	INSERT INTO chunk_terms (rowid, terms) VALUES (new.rid, ` + sqliteTermsCall + `);
END;
CREATE TRIGGER IF NOT EXISTS chunks_terms_ad AFTER DELETE ON chunks BEGIN
	DELETE FROM chunk_terms WHERE rowid = old.rid;
	DELETE FROM qvecs WHERE rid = old.rid;
END;
`

var (
	sqliteRegisterOnce sync.Once
	sqliteRegisterErr  error
)

// sqliteRegisterFuncs registers the terms function with the driver, once
// per process (it applies to connections opened afterwards).
func sqliteRegisterFuncs() error {
	sqliteRegisterOnce.Do(func() {
		sqliteRegisterErr = sqlite.RegisterDeterministicScalarFunction(sqliteTermsFunc, -1, sqliteTermsSQL)
	})
	return sqliteRegisterErr
}

// sqliteTermsSQL implements askyourdocs_terms(text, language, breadcrumb[,
// headings]).
func sqliteTermsSQL(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) != 3 && len(args) != 4 {
		return nil, fmt.Errorf("%s: %d arguments, want 3 or 4", sqliteTermsFunc, len(args))
	}
	var text, lang string
	switch v := args[0].(type) {
	case string:
		text = v
	case []byte:
		text = string(v)
	case nil:
		return "", nil
	default:
		return nil, fmt.Errorf("%s: text is %T, want TEXT", sqliteTermsFunc, v)
	}
	if l, ok := args[1].(string); ok {
		lang = l
	}
	crumb, _ := args[2].(string)
	var heads string
	if len(args) == 4 {
		heads, _ = args[3].(string)
	}
	if terms, ok := sqliteHeldTerms(lang, text, crumb, heads); ok {
		return terms, nil // computed ahead by a Bulk run
	}
	an, err := sharedAnalyzer(lang)
	if err != nil {
		return nil, err
	}
	return sqliteEncodeTerms(an, text, bm25JoinHeading(crumb, heads)), nil
}

// sqliteEncodeTerms returns the encoded terms of text, then those of
// heading (the heading field) as bm25HeadingTerms counts them, each as
// many times as its weight, separated by spaces.
func sqliteEncodeTerms(an *textAnalyzer, text, heading string) string {
	var b strings.Builder
	b.Grow(len(text) + (bm25HeadingWeight+2)*len(heading))
	write := func(term string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		sqliteWriteTerm(&b, term)
	}
	an.tokens(text, func(_, term string) { write(term) })
	bm25HeadingTerms(an, heading, func(term string, w int) {
		for range w {
			write(term)
		}
	})
	return b.String()
}

// sqliteEncodeTerm returns term as one token of FTS5's unicode61 tokenizer
// with '_' as a token character: a term of ASCII letters and digits alone
// is itself, any other ("c++", "-22", "//", "straße") is "_" followed by
// the hex of its bytes, so the tokenizer neither splits, folds nor drops
// it, and two different terms never encode alike (terms never contain '_').
func sqliteEncodeTerm(term string) string {
	var b strings.Builder
	sqliteWriteTerm(&b, term)
	return b.String()
}

// sqliteWriteTerm writes the encoding of term to b.
func sqliteWriteTerm(b *strings.Builder, term string) {
	plain := term != ""
	for i := 0; i < len(term) && plain; i++ {
		c := term[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
	}
	if plain {
		b.WriteString(term)
		return
	}
	b.WriteByte('_')
	b.WriteString(hex.EncodeToString([]byte(term)))
}

// sqliteMigrateTerms brings a database up to the current schema inside
// initSchema's write transaction (which serialises processes opening one
// database at once): a version 1 database (FTS5 trigram index) gets the
// chunk_terms index, built from its chunks, and loses the trigram index; a
// version 2 one (terms of the text alone) gets the breadcrumb terms too; a
// version 3 one (breadcrumb terms) gets the merged headings' terms and the
// heading pairs too (MetaHeadings; chunks indexed before version 4 have no
// merged headings, re-indexing their sources adds them); a version 4 one
// gets whole identifiers and CamelCase parts (rebuilt); a version 6 one
// the cut column (store_sqlite_compact.go); and when language is set and differs from the one recorded, chunk_terms
// is rebuilt in it. It returns the language in force.
func sqliteMigrateTerms(ctx context.Context, conn *sql.Conn, path string, version int, language string) (string, error) {
	var recorded string
	if err := conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'language'`).Scan(&recorded); err != nil {
		return "", fmt.Errorf("read keyword language: %w", err)
	}
	rebuild := false
	if version == 1 {
		// The trigger chunks_ad deleted qvecs too; chunks_terms_ad does now.
		for _, stmt := range []string{
			`DROP TRIGGER IF EXISTS chunks_ai`,
			`DROP TRIGGER IF EXISTS chunks_ad`,
			`DROP TABLE IF EXISTS chunks_fts`,
			`UPDATE meta SET value = 2 WHERE key = 'schema'`,
		} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return "", fmt.Errorf("migrate schema 1 to 2: %w", err)
			}
		}
		rebuild = true
		slog.Info("sqlite store: migrating keyword index from trigrams to analyzer terms (schema 1 to 2)", "path", path, "language", recorded)
	}
	if version < 5 {
		// Version 2 indexed the text alone; version 3 adds the breadcrumb
		// terms (BM25F), version 4 the merged headings' terms and the
		// heading pairs, version 5 whole identifiers and CamelCase parts
		// (text_analyze_ident.go), so the insert trigger and the index are
		// redone.
		for _, stmt := range []string{
			`DROP TRIGGER IF EXISTS chunks_terms_ai`,
			sqliteTermsSchema,
			`UPDATE meta SET value = 5 WHERE key = 'schema'`,
		} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return "", fmt.Errorf("migrate schema %d to 5: %w", version, err)
			}
		}
		if !rebuild {
			slog.Info("sqlite store: rebuilding keyword index with the heading field and whole identifiers", "path", path, "from", version, "to", 5, "language", recorded)
		}
		rebuild = true
	}
	if version < 6 {
		// Version 6 only adds the sparse vector form: nothing to redo.
		if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = 6 WHERE key = 'schema'`); err != nil {
			return "", fmt.Errorf("migrate schema %d to 6: %w", version, err)
		}
	}
	if version < 7 {
		// Version 7 adds the cut column; the rows stored so far keep
		// their whole documents (cut NULL), new rows store the text once.
		var has int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('chunks') WHERE name = 'cut'`).Scan(&has); err != nil {
			return "", fmt.Errorf("migrate schema %d to 7: %w", version, err)
		}
		stmts := []string{`UPDATE meta SET value = 7 WHERE key = 'schema'`}
		if has == 0 {
			stmts = append([]string{`ALTER TABLE chunks ADD COLUMN cut INTEGER`}, stmts...)
		}
		for _, stmt := range stmts {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return "", fmt.Errorf("migrate schema %d to 7: %w", version, err)
			}
		}
	}
	if version < 9 {
		// The analyzer changed: version 8 cuts CJK runs into bigrams and
		// reads text in NFKC, version 9 reads an acronym's plural
		// ("BIGNUMs", "URLs") as one word. The terms are redone.
		if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = 9 WHERE key = 'schema'`); err != nil {
			return "", fmt.Errorf("migrate schema %d to 9: %w", version, err)
		}
		if !rebuild {
			slog.Info("sqlite store: rebuilding keyword index for the analyzer of schema 9", "path", path, "from", version, "to", 9, "language", recorded)
		}
		rebuild = true
	}
	if language != "" {
		an, err := newTextAnalyzer(language)
		if err != nil {
			return "", err
		}
		if an.language() != recorded {
			slog.Info("sqlite store: rebuilding keyword index for a new language", "path", path, "from", recorded, "to", an.language())
			if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'language'`, an.language()); err != nil {
				return "", fmt.Errorf("record keyword language: %w", err)
			}
			recorded, rebuild = an.language(), true
		}
	}
	if !rebuild {
		return recorded, nil
	}
	n, err := sqliteRebuildTerms(ctx, conn)
	if err != nil {
		return "", err
	}
	slog.Info("sqlite store: keyword index built", "path", path, "chunks", n, "language", recorded)
	return recorded, nil
}

// sqliteRebuildTerms rebuilds chunk_terms from the chunks in the recorded
// language (inside the caller's write transaction) and returns the number
// of chunks analysed.
func sqliteRebuildTerms(ctx context.Context, conn *sql.Conn) (int64, error) {
	if _, err := conn.ExecContext(ctx, `INSERT INTO chunk_terms (chunk_terms) VALUES ('delete-all')`); err != nil {
		return 0, fmt.Errorf("clear keyword index: %w", err)
	}
	res, err := conn.ExecContext(ctx, `INSERT INTO chunk_terms (rowid, terms) SELECT rid, `+sqliteTermsCall+` FROM chunks AS new ORDER BY rid`)
	if err != nil {
		return 0, fmt.Errorf("build keyword index: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
