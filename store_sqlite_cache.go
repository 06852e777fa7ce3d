package engine

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// The vector cache file (<database>.vectors) holds a matrix as of one
// generation: a 32-byte header (magic, generation, dimension, rows), the
// row IDs (int64), the scales (float32, padded to 8 bytes) and the int8
// matrix, all in the machine's byte order (the magic's last four bytes
// record it). It is only a cache: any process can rebuild it from the
// database, a file that does not match is ignored, and it is replaced
// atomically (temporary file and rename) by a process holding the
// database's write lock, so cache writers never meet.
const sqliteCacheMagic = "AYDV"

// sqliteCacheHeader is the size of the cache file header.
const sqliteCacheHeader = 32

// sqliteByteOrderMark is written in native byte order after the magic.
const sqliteByteOrderMark uint32 = 0x01020304

// cachePath returns the path of the store's vector cache file.
func (s *SQLiteStore) cachePath() string { return s.path + ".vectors" }

// loadSQLiteVectorCache maps the cache file at path and returns the matrix
// in it (aliasing the mapping); any inconsistency is an error.
func loadSQLiteVectorCache(path string) (sqliteMatrix, error) {
	b, unmap, err := mapFile(path)
	if err != nil {
		return sqliteMatrix{}, err
	}
	fail := func(format string, args ...any) (sqliteMatrix, error) {
		unmap()
		return sqliteMatrix{}, fmt.Errorf("vector cache %s: "+format, append([]any{path}, args...)...)
	}
	if len(b) < sqliteCacheHeader || string(b[:4]) != sqliteCacheMagic ||
		binary.NativeEndian.Uint32(b[4:8]) != sqliteByteOrderMark {
		return fail("not a vector cache of this machine")
	}
	gen := int64(binary.NativeEndian.Uint64(b[8:16]))
	dim := int(binary.NativeEndian.Uint64(b[16:24]))
	n := int(binary.NativeEndian.Uint64(b[24:32]))
	if dim < 0 || n < 0 || dim > 1<<20 || n > 1<<32 {
		return fail("bad header")
	}
	scalesAt := sqliteCacheHeader + 8*n
	qAt := scalesAt + (4*n+7)&^7
	if len(b) != qAt+n*dim {
		return fail("size %d, want %d", len(b), qAt+n*dim)
	}
	m := sqliteMatrix{loaded: true, gen: gen, dim: dim, unmap: unmap}
	if n > 0 {
		m.rids = unsafe.Slice((*int64)(unsafe.Pointer(&b[sqliteCacheHeader])), n)
		m.scales = unsafe.Slice((*float32)(unsafe.Pointer(&b[scalesAt])), n)
		m.q = unsafe.Slice((*int8)(unsafe.Pointer(&b[qAt])), n*dim)
	}
	return m, nil
}

// writeSQLiteVectorCache writes m to a temporary file beside path and
// renames it over path.
func writeSQLiteVectorCache(path string, m *sqliteMatrix) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	n := len(m.rids)
	hdr := make([]byte, sqliteCacheHeader)
	copy(hdr, sqliteCacheMagic)
	binary.NativeEndian.PutUint32(hdr[4:], sqliteByteOrderMark)
	binary.NativeEndian.PutUint64(hdr[8:], uint64(m.gen))
	binary.NativeEndian.PutUint64(hdr[16:], uint64(m.dim))
	binary.NativeEndian.PutUint64(hdr[24:], uint64(n))
	w.Write(hdr)
	if n > 0 {
		w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&m.rids[0])), 8*n))
		w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&m.scales[0])), 4*n))
		w.Write(make([]byte, (4*n+7)&^7-4*n))
		w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&m.q[0])), len(m.q)))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// saveVectorCache brings the cache file up to the database's current
// generation, holding the database's write lock (so no other process
// writes chunks or the cache meanwhile; temporary cache files left by a
// killed process are removed under the same lock, where no live writer can
// own one).
func (s *SQLiteStore) saveVectorCache(ctx context.Context) error {
	return s.write(ctx, func(conn *sql.Conn) error {
		return s.saveVectorCacheLocked(ctx, conn)
	})
}

func (s *SQLiteStore) saveVectorCacheLocked(ctx context.Context, conn *sql.Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.refresh(ctx, conn); err != nil {
		return err
	}
	if c, err := loadSQLiteVectorCache(s.cachePath()); err == nil {
		current := c.gen == s.mat.gen && c.dim == s.mat.dim
		c.release()
		if current {
			return nil
		}
	}
	matches, _ := filepath.Glob(globEscape(s.cachePath()) + ".*.tmp")
	for _, p := range matches {
		os.Remove(p)
	}
	return writeSQLiteVectorCache(s.cachePath(), &s.mat)
}

// trySaveVectorCache saves the cache file if the database's write lock is
// free right now; a busy database (another process indexing) skips it, as
// that process will save the cache when it closes.
func (s *SQLiteStore) trySaveVectorCache(ctx context.Context) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	var timeout int
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		return
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", timeout))
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return
	}
	err = s.saveVectorCacheLocked(ctx, conn)
	if _, cerr := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); cerr != nil {
		err = errors.Join(err, cerr)
	}
	_ = err // best effort: the cache is only an optimisation
}
