package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ImportLocalvec copies the documents and vectors of the localvec database
// file at path (written by LocalvecStore or Genkit's localvec plugin) into
// the store, without embedding anything, in one transaction, and returns
// how many chunks it added. Chunks already present (same chunk ID) are
// skipped, so importing twice adds nothing. The vectors must have the
// store's dimension (else an error wrapping ErrDimensionMismatch). A
// missing file is an error wrapping fs.ErrNotExist. The import records no
// IndexInfo (the file does not say which embedder made its vectors); the
// store's next write that adds chunks records its embedder.
func (s *SQLiteStore) ImportLocalvec(ctx context.Context, path string) (int, error) {
	if err := s.checkOpen("import localvec"); err != nil {
		return 0, err
	}
	if err := s.flushBulkFor(ctx, replaceScope{}, true); err != nil {
		return 0, fmt.Errorf("sqlite import localvec: %w", err)
	}
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("sqlite import localvec: %w", err)
	}
	src, err := loadLocalvecFile(path)
	if err != nil {
		return 0, fmt.Errorf("sqlite import localvec: %w", err)
	}
	if len(src.docs) == 0 {
		return 0, nil
	}
	rows, err := sqlitePrepare(src.docs)
	if err != nil {
		return 0, fmt.Errorf("sqlite import localvec %s: %w", path, err)
	}
	for i := range rows {
		rows[i].vec = src.vec(i)
	}
	var n int
	err = s.write(ctx, func(conn *sql.Conn) error {
		var err error
		if n, err = s.insertRows(ctx, conn, rows); err != nil || n == 0 {
			return err
		}
		return bumpGeneration(ctx, conn)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite import localvec %s: %w", path, err)
	}
	if n > 0 {
		s.wrote.Store(true)
	}
	return n, nil
}

// ExportLocalvec writes all chunks of the store, with their vectors, as the
// localvec database dir/__db_<name>.json that Genkit's localvec plugin and
// LocalvecStore read (replacing that file atomically), and returns its path
// and the number of documents written. Chunks with identical documents
// (same text and metadata) become one entry, as in localvec. The export
// reads one snapshot of the database.
func (s *SQLiteStore) ExportLocalvec(ctx context.Context, dir, name string) (string, int, error) {
	if err := s.checkOpen("export localvec"); err != nil {
		return "", 0, err
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", 0, fmt.Errorf("sqlite export localvec: invalid name %q (want a non-empty file-name part)", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, fmt.Errorf("sqlite export localvec: %w", err)
	}
	var out localvecRows
	err := s.readTx(ctx, func(conn *sql.Conn) error {
		rows, err := conn.QueryContext(ctx, `SELECT url, source, text, doc, cut, vec FROM chunks ORDER BY rid`)
		if err != nil {
			return err
		}
		defer rows.Close()
		var add []localvecNewRow
		seen := make(map[string]bool)
		for rows.Next() {
			var url, source, text string
			var doc, vec []byte
			var cut sql.NullInt64
			if err := rows.Scan(&url, &source, &text, &doc, &cut, &vec); err != nil {
				return err
			}
			d, err := sqliteDecodeChunk(doc, url, source, text, cut)
			if err != nil {
				return err
			}
			id, err := localvecDocID(d)
			if err != nil {
				return err
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			v := sqliteDecodeVec(vec)
			if v == nil {
				return fmt.Errorf("chunk %s: malformed vector of %d bytes", id, len(vec))
			}
			add = append(add, localvecNewRow{id: id, doc: d, vec: v})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		out.append(add)
		return nil
	})
	if err != nil {
		return "", 0, fmt.Errorf("sqlite export localvec: %w", err)
	}
	path := filepath.Join(dir, "__db_"+name+".json")
	if err := out.writeFile(path, nil, nil); err != nil {
		return "", 0, fmt.Errorf("sqlite export localvec: %w", err)
	}
	return path, len(out.ids), nil
}
