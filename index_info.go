package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// IndexInfo is what an index records about how it was built: the embedder
// whose vectors it holds, their dimension, when the record was made and
// the fusion settings the embedder implies, so that every process opening
// the index, and Search with nil options, use the same settings.
type IndexInfo struct {
	Embedder string    `json:"embedder"`
	Dim      int       `json:"dim"`
	Created  time.Time `json:"created"`
	// Fusion, when not nil, is the fusion Search uses without options;
	// nil means FusionDefaults(Embedder).
	Fusion *FusionOptions `json:"fusion,omitempty"`
}

// indexInfoReader is a store that returns the IndexInfo it records; Search
// reads a store's recorded fusion through it (a store of an app's own
// making with this method, too).
type indexInfoReader interface {
	// IndexInfo returns the record; found is false when there is none.
	IndexInfo(ctx context.Context) (info IndexInfo, found bool, err error)
}

// indexRecorder is a store that records its IndexInfo in itself:
// SQLiteStore (a row of its meta table), PgvecStore (a column of the
// stores' table askyourdocs_pgvec_stores) and LocalvecStore (a file
// beside its database, <database>.info.json, since Genkit's file format
// has no room for it). A store records itself at its first write that
// adds chunks (writeDocs), and Reembed replaces the record; recording is
// not exported (it named plumbing, issue 38), reading is (IndexInfo).
type indexRecorder interface {
	indexInfoReader
	// recordIndexInfo records info unless a record exists, as one step
	// across processes, and returns the record in effect and whether it
	// existed before.
	recordIndexInfo(ctx context.Context, info IndexInfo) (current IndexInfo, existed bool, err error)
}

// The ready-made stores record their IndexInfo.
var (
	_ indexRecorder = (*SQLiteStore)(nil)
	_ indexRecorder = (*LocalvecStore)(nil)
	_ indexRecorder = (*PgvecStore)(nil)
)

// indexInfoCache holds a store's record once read or made: records are
// made once (recordIndexInfo never replaces one), so a found record stays
// valid;
// only a re-embedding migration replaces it, storing the new one here (other
// open stores on the index keep the old one until reopened).
type indexInfoCache struct{ p atomic.Pointer[IndexInfo] }

// get returns the cached record, or reads it with read and caches it when
// found.
func (c *indexInfoCache) get(read func() (IndexInfo, bool, error)) (IndexInfo, bool, error) {
	if p := c.p.Load(); p != nil {
		return *p, true, nil
	}
	info, found, err := read()
	if err == nil && found {
		c.p.Store(&info)
	}
	return info, found, err
}

// set caches info, a record read or made.
func (c *indexInfoCache) set(info IndexInfo) { c.p.Store(&info) }

// decodeIndexInfo parses a stored record.
func decodeIndexInfo(raw []byte) (IndexInfo, error) {
	var info IndexInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return info, fmt.Errorf("decode index record: %w", err)
	}
	return info, nil
}

// sqliteIndexInfoKey is the meta row holding an SQLiteStore's IndexInfo
// (JSON text).
const sqliteIndexInfoKey = "index_info"

func (s *SQLiteStore) embedder() ai.Embedder { return s.emb }

// IndexInfo returns the IndexInfo recorded in the store; found is false
// when there is none.
func (s *SQLiteStore) IndexInfo(ctx context.Context) (IndexInfo, bool, error) {
	if err := s.checkOpen("index info"); err != nil {
		return IndexInfo{}, false, err
	}
	info, found, err := s.info.get(func() (IndexInfo, bool, error) { return sqliteReadIndexInfo(ctx, s.db) })
	if err != nil {
		return info, false, fmt.Errorf("sqlite index info: %w", err)
	}
	return info, found, nil
}

func sqliteReadIndexInfo(ctx context.Context, q sqliteQuerier) (IndexInfo, bool, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT CAST(value AS TEXT) FROM meta WHERE key = ?`, sqliteIndexInfoKey).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return IndexInfo{}, false, nil
	}
	if err != nil {
		return IndexInfo{}, false, err
	}
	info, err := decodeIndexInfo([]byte(raw))
	return info, err == nil, err
}

// recordIndexInfo implements indexRecorder: it records info unless a
// record exists and returns the record in effect and whether it existed
// before. It runs in one write transaction.
func (s *SQLiteStore) recordIndexInfo(ctx context.Context, info IndexInfo) (IndexInfo, bool, error) {
	if err := s.checkOpen("record index info"); err != nil {
		return IndexInfo{}, false, err
	}
	raw, err := json.Marshal(info)
	if err != nil {
		return IndexInfo{}, false, fmt.Errorf("sqlite record index info: %w", err)
	}
	current, existed := info, false
	err = s.write(ctx, func(conn *sql.Conn) error {
		got, found, err := sqliteReadIndexInfo(ctx, conn)
		if err != nil || found {
			current, existed = got, found
			return err
		}
		_, err = conn.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)`, sqliteIndexInfoKey, string(raw))
		return err
	})
	if err != nil {
		return IndexInfo{}, false, fmt.Errorf("sqlite record index info: %w", err)
	}
	s.info.set(current)
	return current, existed, nil
}

func (s *LocalvecStore) embedder() ai.Embedder { return s.emb }

// infoPath is the file beside the database holding the IndexInfo.
func (s *LocalvecStore) infoPath() string { return s.path + ".info.json" }

// IndexInfo returns the IndexInfo recorded in the store; found is false
// when there is none.
func (s *LocalvecStore) IndexInfo(context.Context) (IndexInfo, bool, error) {
	if err := s.checkOpen(); err != nil {
		return IndexInfo{}, false, fmt.Errorf("localvec index info: %w", err)
	}
	return s.info.get(func() (IndexInfo, bool, error) {
		raw, err := os.ReadFile(s.infoPath())
		if errors.Is(err, fs.ErrNotExist) {
			return IndexInfo{}, false, nil
		}
		if err != nil {
			return IndexInfo{}, false, fmt.Errorf("localvec index info: %w", err)
		}
		info, err := decodeIndexInfo(raw)
		if err != nil {
			return info, false, fmt.Errorf("localvec index info %s: %w", s.infoPath(), err)
		}
		return info, true, nil
	})
}

// recordIndexInfo implements indexRecorder: it records info unless a
// record exists and returns the record in effect and whether it existed
// before. It runs under the store's write locks (beginWrite), writing the
// file atomically.
func (s *LocalvecStore) recordIndexInfo(ctx context.Context, info IndexInfo) (IndexInfo, bool, error) {
	release, err := s.beginWrite()
	if err != nil {
		return IndexInfo{}, false, fmt.Errorf("localvec record index info: %w", err)
	}
	defer release()
	return s.recordIndexInfoLocked(ctx, info)
}

// recordIndexInfoLocked is recordIndexInfo with the write locks held (a
// write through writeDocs holds them).
func (s *LocalvecStore) recordIndexInfoLocked(ctx context.Context, info IndexInfo) (IndexInfo, bool, error) {
	if got, found, err := s.IndexInfo(ctx); err != nil || found {
		return got, found, err
	}
	raw, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return IndexInfo{}, false, fmt.Errorf("localvec record index info: %w", err)
	}
	if err := writeFileAtomic(s.infoPath(), append(raw, '\n')); err != nil {
		return IndexInfo{}, false, fmt.Errorf("localvec record index info: %w", err)
	}
	s.info.set(info)
	return info, false, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers see the old file or the new one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Sync(), tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func (s *PgvecStore) embedder() ai.Embedder { return s.Embedder }

// IndexInfo returns the IndexInfo recorded in the store; found is false
// when there is none.
func (s *PgvecStore) IndexInfo(ctx context.Context) (IndexInfo, bool, error) {
	if err := s.checkOpen("index info"); err != nil {
		return IndexInfo{}, false, err
	}
	info, found, err := s.info.get(func() (IndexInfo, bool, error) { return pgvecReadIndexInfo(ctx, s.Pool, s.name) })
	if err != nil {
		return info, false, fmt.Errorf("pgvector index info: %w", err)
	}
	return info, found, nil
}

// pgvecQueryRower is what pools, connections and transactions share.
type pgvecQueryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func pgvecReadIndexInfo(ctx context.Context, q pgvecQueryRower, name string) (IndexInfo, bool, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT index_info FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && raw == nil) {
		return IndexInfo{}, false, nil
	}
	if err != nil {
		return IndexInfo{}, false, err
	}
	info, err := decodeIndexInfo(raw)
	return info, err == nil, err
}

// recordIndexInfo implements indexRecorder: it records info unless a
// record exists and returns the record in effect and whether it existed
// before. It runs under the stores' schema lock.
func (s *PgvecStore) recordIndexInfo(ctx context.Context, info IndexInfo) (IndexInfo, bool, error) {
	raw, err := json.Marshal(info)
	if err != nil {
		return IndexInfo{}, false, fmt.Errorf("pgvector record index info: %w", err)
	}
	current, existed := info, false
	err = s.withSchemaLock(ctx, func(ctx context.Context, tx pgx.Tx) error {
		got, found, err := pgvecReadIndexInfo(ctx, tx, s.name)
		if err != nil || found {
			current, existed = got, found
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE `+pgvecIdent(pgvecMetaTable)+` SET index_info = $2 WHERE store = $1`, s.name, raw)
		return err
	})
	if err != nil {
		return IndexInfo{}, false, fmt.Errorf("record index info: %w", err)
	}
	s.info.set(current)
	return current, existed, nil
}

// recordWritten implements writeBackend.
func (s *SQLiteStore) recordWritten(ctx context.Context, info IndexInfo) error {
	_, _, err := s.recordIndexInfo(ctx, info)
	return err
}

// recordWritten implements writeBackend: writeDocs runs with the store's
// write locks held.
func (s *LocalvecStore) recordWritten(ctx context.Context, info IndexInfo) error {
	_, _, err := s.recordIndexInfoLocked(ctx, info)
	return err
}

// recordWritten implements writeBackend.
func (s *PgvecStore) recordWritten(ctx context.Context, info IndexInfo) error {
	_, _, err := s.recordIndexInfo(ctx, info)
	return err
}
