package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Thumbs ratings accepted by FeedbackStore.Rate.
const (
	RatingDown = -1 // thumbs down
	RatingNone = 0  // no rating (clears an earlier one)
	RatingUp   = 1  // thumbs up
)

// Errors returned by FeedbackStore.
var (
	// ErrFeedbackCorrupt is returned by NewFeedbackStore when the file exists
	// but is not a JSON array of entries (corrupt, truncated or edited into
	// an invalid state). The file is left untouched.
	ErrFeedbackCorrupt = errors.New("feedback file is corrupt")
	// ErrFeedbackNotFound is returned by Rate for an ID no entry has.
	ErrFeedbackNotFound = errors.New("feedback entry not found")
	// ErrFeedbackDuplicateID is returned by Append for an entry whose ID is
	// already in the log, and by NewFeedbackStore for a file holding two
	// entries with the same ID.
	ErrFeedbackDuplicateID = errors.New("duplicate feedback entry ID")
	// ErrFeedbackInvalid is returned by Append for an entry without an ID
	// and by Rate for a rating other than RatingDown, RatingNone, RatingUp.
	ErrFeedbackInvalid = errors.New("invalid feedback")
)

// FeedbackStore is a log of an app's question/answer interactions, entries of
// the app's own type E, kept in a JSON file and rated later (thumbs up or
// down). The file holds one JSON array of entries, indented, so it can be
// read directly as an eval dataset source.
//
// Every change rewrites the whole file atomically: the new content goes to a
// temporary file in the same directory, which is fsynced and renamed over the
// old one, and the directory is fsynced. A crash at any point leaves either
// the old or the new file, never a partial one, so no acknowledged entry is
// ever lost. A FeedbackStore assumes it is the only writer of its file.
//
// All methods are safe for concurrent use; writes are serialised.
type FeedbackStore[E any] struct {
	path      string
	id        func(E) string
	setRating func(*E, int)

	mu      sync.Mutex
	entries []E
	index   map[string]int // ID -> position in entries
}

// NewFeedbackStore opens (or prepares to create) the feedback log at path.
// id returns an entry's ID (as given by the app, for example from
// NewRandomHexID); setRating stores a rating (RatingDown, RatingNone or
// RatingUp) in an entry, in whatever field and shape the app's type uses.
//
// A missing file is created by the first Append; an empty file counts as an
// empty log. A file that is not a JSON array of E, or that holds two entries
// with the same ID, gives an error wrapping ErrFeedbackCorrupt or
// ErrFeedbackDuplicateID, and the file is not touched.
func NewFeedbackStore[E any](path string, id func(E) string, setRating func(e *E, rating int)) (*FeedbackStore[E], error) {
	if path == "" {
		return nil, fmt.Errorf("open feedback log: %w: empty path", ErrFeedbackInvalid)
	}
	if id == nil || setRating == nil {
		return nil, fmt.Errorf("open feedback log %s: %w: id and setRating functions are required", path, ErrFeedbackInvalid)
	}
	s := &FeedbackStore[E]{path: path, id: id, setRating: setRating, index: make(map[string]int)}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("open feedback log: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(data, &s.entries); err != nil {
		return nil, fmt.Errorf("open feedback log %s: %w: %w", path, ErrFeedbackCorrupt, err)
	}
	for i, e := range s.entries {
		eid := id(e)
		if eid == "" {
			continue // cannot be rated, but is kept as it is
		}
		if prev, dup := s.index[eid]; dup {
			return nil, fmt.Errorf("open feedback log %s: %w: %q at entries %d and %d", path, ErrFeedbackDuplicateID, eid, prev, i)
		}
		s.index[eid] = i
	}
	return s, nil
}

// Path returns the file the store writes.
func (s *FeedbackStore[E]) Path() string { return s.path }

// Append adds e to the log and writes the file before it returns; when the
// write fails the entry is not added. The entry's ID must be non-empty and
// not yet in the log.
func (s *FeedbackStore[E]) Append(e E) error {
	eid := s.id(e)
	if eid == "" {
		return fmt.Errorf("append feedback: %w: entry has an empty ID", ErrFeedbackInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.index[eid]; dup {
		return fmt.Errorf("append feedback %s: %w", eid, ErrFeedbackDuplicateID)
	}
	s.entries = append(s.entries, e)
	if err := s.writeLocked(); err != nil {
		var zero E
		s.entries[len(s.entries)-1] = zero
		s.entries = s.entries[:len(s.entries)-1]
		return fmt.Errorf("append feedback %s: %w", eid, err)
	}
	s.index[eid] = len(s.entries) - 1
	return nil
}

// Rate sets the rating of the entry with the given ID (RatingDown, RatingNone
// or RatingUp) through the store's setRating function and writes the file
// before it returns; when the write fails the rating is not changed. An
// unknown ID gives an error wrapping ErrFeedbackNotFound.
func (s *FeedbackStore[E]) Rate(id string, rating int) error {
	if rating != RatingDown && rating != RatingNone && rating != RatingUp {
		return fmt.Errorf("rate feedback %s: %w: rating %d (want -1, 0 or 1)", id, ErrFeedbackInvalid, rating)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[id]
	if !ok {
		return fmt.Errorf("rate feedback %s: %w", id, ErrFeedbackNotFound)
	}
	old := s.entries[i]
	s.setRating(&s.entries[i], rating)
	if err := s.writeLocked(); err != nil {
		s.entries[i] = old
		return fmt.Errorf("rate feedback %s: %w", id, err)
	}
	return nil
}

// Get returns the entry with the given ID, and false if there is none.
func (s *FeedbackStore[E]) Get(id string) (E, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[id]
	if !ok {
		var zero E
		return zero, false
	}
	return s.entries[i], true
}

// Entries returns all entries in the order they were appended, for example
// to build an eval dataset from logged usage. The slice is a copy; entries
// holding pointers, maps or slices share those with the store.
func (s *FeedbackStore[E]) Entries() []E {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]E(nil), s.entries...)
}

// Len returns the number of entries.
func (s *FeedbackStore[E]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// writeLocked replaces the file atomically with the current entries.
func (s *FeedbackStore[E]) writeLocked() error {
	entries := s.entries
	if entries == nil {
		entries = []E{}
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("encode feedback log: %w", err)
	}
	data = append(data, '\n')
	return durableWriteFile(s.path, data, 0o600)
}

// durableWriteFile writes data to path through a temporary file in the same
// directory that is fsynced and renamed over path; the directory is fsynced
// afterwards so the rename itself is durable.
func durableWriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Not every platform can fsync a directory; the rename is done
		// either way, so a failure here is not reported.
		_ = d.Sync()
		d.Close()
	}
	return nil
}
