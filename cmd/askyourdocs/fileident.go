package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// The metadata keys with which `index` records a file's identity on each
// of its chunks, so that serve's /files and /view hand out a file only
// while it is still the file that was indexed.
const (
	metaFileReal   = "fileReal"   // the file's path with symlinks resolved
	metaFileSize   = "fileSize"   // its size in bytes, decimal
	metaFileSHA256 = "fileSHA256" // the SHA-256 of its bytes, hex
)

// fileIdentity is what identifies an indexed file: where it really is,
// and its content.
type fileIdentity struct {
	real   string
	size   int64
	sha256 string
}

// readFileIdentity returns the identity of the file at path: its real
// path and the size and SHA-256 of what it holds now (read once,
// streaming).
func readFileIdentity(path string) (*fileIdentity, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return identityOf(f, real)
}

// identityOf hashes the open file f found at real.
func identityOf(f *os.File, real string) (*fileIdentity, error) {
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, err
	}
	return &fileIdentity{real: real, size: n, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// metadata adds the identity to a chunk's metadata.
func (id *fileIdentity) metadata(m map[string]any) {
	m[metaFileReal] = id.real
	m[metaFileSize] = strconv.FormatInt(id.size, 10)
	m[metaFileSHA256] = id.sha256
}

// errNotIndexedFile is the reason a file is not served: it is no longer the
// file that was indexed (or never was one).
var errNotIndexedFile = errors.New("not the file that was indexed")

// errFileChanged is errNotIndexedFile for a file at its indexed place whose
// content changed since (edited, not yet indexed again): /view shows the
// passage the index holds instead.
var errFileChanged = fmt.Errorf("%w: changed since it was indexed", errNotIndexedFile)

// openIndexedFile opens the indexed file p for /files and /view, only if it
// still is the file that was indexed: its real path is the one recorded at
// indexing (an index without the record: inside the folder it was indexed
// from, or p itself for a file indexed alone), not on a special
// filesystem, a regular file, and of the recorded size and SHA-256. The
// file is opened by its real path and checked again after opening, so a
// symlink swapped in between is caught. The returned file is at offset 0;
// the error wraps errNotIndexedFile with the reason (for the log) when the
// file is there but is not the indexed one.
func (s *server) openIndexedFile(ctx context.Context, p, source string) (*os.File, os.FileInfo, error) {
	rec := s.recordedIdentity(ctx, p)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case onSpecialFS(real):
		return nil, nil, fmt.Errorf("%w: %s resolves to %s, on a special filesystem", errNotIndexedFile, p, real)
	case rec != nil && real != rec.real:
		return nil, nil, fmt.Errorf("%w: %s resolves to %s, indexed as %s", errNotIndexedFile, p, real, rec.real)
	case rec == nil && !recordlessInside(p, source, real):
		return nil, nil, fmt.Errorf("%w: %s resolves to %s, outside %s it was indexed from", errNotIndexedFile, p, real, source)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file", errNotIndexedFile, real)
	}
	if err == nil {
		// The path may have been swapped between the check and the open.
		again, lerr := os.Stat(real)
		if lerr != nil || !os.SameFile(info, again) {
			err = fmt.Errorf("%w: %s changed while it was opened", errNotIndexedFile, real)
		}
	}
	if err == nil && rec != nil {
		err = rec.matches(f, info)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// matches checks the open file f against the recorded size and SHA-256
// and rewinds it.
func (rec *fileIdentity) matches(f *os.File, info os.FileInfo) error {
	if rec.size >= 0 && info.Size() != rec.size {
		return fmt.Errorf("%w: %s has %d bytes, %d when indexed", errFileChanged, rec.real, info.Size(), rec.size)
	}
	if rec.sha256 != "" {
		now, err := identityOf(f, rec.real)
		if err != nil {
			return err
		}
		if now.sha256 != rec.sha256 {
			return fmt.Errorf("%w: %s (its SHA-256 differs)", errFileChanged, rec.real)
		}
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// recordlessInside is the check for an index built before identities
// were recorded: the file's real path lies inside the real path of the
// folder it was indexed from, or, for a file indexed alone (source is the
// file), p has no symlink in it.
func recordlessInside(p, source, real string) bool {
	if source == "" || source == p {
		return real == filepath.Clean(p)
	}
	root, err := filepath.EvalSymlinks(source)
	return err == nil && within(root, real)
}

// recordedIdentity returns the identity `index` recorded on p's chunks, or
// nil when the index has none (built before identities were recorded).
func (s *server) recordedIdentity(ctx context.Context, p string) *fileIdentity {
	docs, err := s.b.store.SearchVector(ctx, p, 1, &askyourdocs.Filter{Metadata: map[string][]string{askyourdocs.MetaURL: {p}}})
	if err != nil || len(docs) == 0 {
		return nil
	}
	m := docs[0].Metadata
	real, _ := m[metaFileReal].(string)
	if real == "" {
		return nil
	}
	rec := &fileIdentity{real: real, size: -1}
	if v, ok := m[metaFileSize].(string); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			rec.size = n
		}
	}
	rec.sha256, _ = m[metaFileSHA256].(string)
	return rec
}
