package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LocalvecStore coordinates processes sharing one database file with an
// advisory lock on <file>.lock (flock on Unix, LockFileEx on Windows):
// every write (an Index, delete or IndexSource call, or a whole
// Bulk run, IndexInBatches included) holds it exclusively from before it reads
// the data it changes until the file is written, after reloading the file
// if another process changed it. So concurrent writers wait for each other
// and none loses the other's documents. Temporary files are written only
// under the lock, so a process that gets the lock without waiting knows
// that leftover temporary files are stale and removes them. Readers take
// no lock: the file is replaced by an atomic rename, and before every
// query a store reloads the file if it changed (size, modification time or
// identity) since it last read or wrote it.

// lockPath returns the path of the store's lock file.
func (s *LocalvecStore) lockPath() string { return s.path + ".lock" }

// lockWrite takes the file lock for one write operation, unless a
// Bulk run of this store already holds it, and reloads the
// file if another process changed it. The returned function releases what
// lockWrite took. Called with writeMu held.
func (s *LocalvecStore) lockWrite() (release func(), err error) {
	if s.lockF != nil {
		return func() {}, nil
	}
	f, _, err := lockFile(s.lockPath(), true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", s.lockPath(), err)
	}
	s.lockF = f
	release = func() {
		unlockFile(s.lockF)
		s.lockF = nil
	}
	if err := s.reloadIfChanged(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// reloadIfChanged reloads the database file if it is not the one this store
// last read or wrote. Called with writeMu held and no unsaved changes.
func (s *LocalvecStore) reloadIfChanged() error {
	fi, err := os.Stat(s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat database: %w", err)
	}
	if sameLocalvecFile(fi, s.fileInfo) {
		return nil
	}
	rows, err := loadLocalvecFile(s.path)
	if err != nil {
		return fmt.Errorf("reload changed database: %w", err)
	}
	s.mu.Lock()
	s.rows = rows
	s.mu.Unlock()
	s.fileInfo = fi
	return nil
}

// sameLocalvecFile reports whether a and b (either may be nil: no file)
// describe the same, unchanged file.
func sameLocalvecFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// refreshForRead reloads the file before a query if another process
// changed it. It does nothing while a writer of this store is busy or has
// unsaved changes: that writer holds the file lock, so the file cannot
// have changed under it.
func (s *LocalvecStore) refreshForRead() error {
	if !s.writeMu.TryLock() {
		return nil
	}
	defer s.writeMu.Unlock()
	if s.sessions > 0 || s.dirty || s.checkOpen() != nil {
		return nil
	}
	return s.reloadIfChanged()
}

// noteWritten records the file this store just wrote.
func (s *LocalvecStore) noteWritten() {
	if fi, err := os.Stat(s.path); err == nil {
		s.fileInfo = fi
	}
}

// removeStaleTemps removes temporary files of interrupted writes, but only
// when the file lock is free at this moment: then no process is writing
// one. Otherwise they are left for a later open.
func removeStaleTemps(path string) {
	f, ok, err := lockFile(path+".lock", false)
	if err != nil || !ok {
		return
	}
	defer unlockFile(f)
	matches, _ := filepath.Glob(globEscape(path) + ".*.tmp")
	for _, m := range matches {
		os.Remove(m)
	}
}
