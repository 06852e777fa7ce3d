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

// Thumbs ratings accepted by FeedbackStore.Rate, as the original engine
// spells them.
const (
	RatingUp   = "up"   // thumbs up
	RatingDown = "down" // thumbs down
	RatingNone = ""     // no rating (clears an earlier one)
)

// Errors returned by FeedbackStore.
var (
	// ErrFeedbackCorrupt is returned when the file exists but is not a JSON
	// array of entries (corrupt, truncated or edited into an invalid state).
	// The file is left untouched.
	ErrFeedbackCorrupt = errors.New("feedback file is corrupt")
	// ErrFeedbackDuplicateID is returned by Append for an entry whose ID is
	// already in the log, and when the file holds two entries with the same
	// ID.
	ErrFeedbackDuplicateID = errors.New("duplicate feedback entry ID")
	// ErrFeedbackInvalid is returned by Append for an entry without an ID,
	// by Rate for a rating other than "up", "down" or "", and by every
	// method of a store made without a path or without its functions.
	ErrFeedbackInvalid = errors.New("invalid feedback")
)

// FeedbackStore is a log of an app's question/answer interactions, entries of
// the app's own type E, kept in a JSON file and rated later (thumbs up or
// down). The file holds one JSON array of entries, indented, so it can be
// read directly as an eval dataset source.
//
// The file is the only state: every method reads it, so All always returns
// what is on disk. Every change rewrites the whole file atomically: the new
// content goes to a temporary file in the same directory, which is fsynced
// and renamed over the old one, and the directory is fsynced. A crash at any
// point leaves either the old or the new file, never a partial one, so no
// acknowledged entry is ever lost. A file that is not a JSON array of E, or
// that holds two entries with the same ID, is never overwritten: methods
// return an error wrapping ErrFeedbackCorrupt or ErrFeedbackDuplicateID. A
// FeedbackStore assumes it is the only writer of its file.
//
// All methods are safe for concurrent use; they are serialised.
type FeedbackStore[E any] struct {
	path      string
	id        func(E) string
	setRating func(*E, string)

	mu sync.Mutex // serialises read-modify-write cycles on the file
}

// NewFeedbackStore returns the feedback log kept in the file at path; it
// does no I/O (a missing file is created by the first Append, an empty file
// counts as an empty log). id returns an entry's ID (as given by the app,
// for example from NewRandomHexID(16)); setRating stores a rating ("up",
// "down", or "" to clear it) in an entry, in whatever field and shape the
// app's type uses.
//
// An empty path or a nil function makes every method fail with
// ErrFeedbackInvalid; use OpenFeedbackStore to get such errors, and those
// of an unreadable or corrupt file, at once.
func NewFeedbackStore[E any](path string, id func(E) string, setRating func(*E, string)) *FeedbackStore[E] {
	return &FeedbackStore[E]{path: path, id: id, setRating: setRating}
}

// OpenFeedbackStore is NewFeedbackStore that also checks its arguments and
// reads the file once, so a misconfigured store or a corrupt file is
// reported at startup rather than by the first Append. Errors wrap
// ErrFeedbackInvalid, ErrFeedbackCorrupt or ErrFeedbackDuplicateID (or are
// the file's read error); the file is not modified.
func OpenFeedbackStore[E any](path string, id func(E) string, setRating func(*E, string)) (*FeedbackStore[E], error) {
	s := NewFeedbackStore(path, id, setRating)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, err := s.readLocked(); err != nil {
		return nil, fmt.Errorf("open feedback log: %w", err)
	}
	return s, nil
}

// Path returns the file the store reads and writes.
func (s *FeedbackStore[E]) Path() string { return s.path }

// readLocked checks the store's configuration and reads the file: the
// entries and an index from ID to position (entries without an ID are kept
// but not indexed).
func (s *FeedbackStore[E]) readLocked() ([]E, map[string]int, error) {
	if s.path == "" {
		return nil, nil, fmt.Errorf("%w: empty path", ErrFeedbackInvalid)
	}
	if s.id == nil || s.setRating == nil {
		return nil, nil, fmt.Errorf("%s: %w: id and setRating functions are required", s.path, ErrFeedbackInvalid)
	}
	index := make(map[string]int)
	data, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, index, nil
	case err != nil:
		return nil, nil, fmt.Errorf("read feedback log: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, index, nil
	}
	var entries []E
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %w", s.path, ErrFeedbackCorrupt, err)
	}
	for i, e := range entries {
		eid := s.id(e)
		if eid == "" {
			continue // cannot be rated, but is kept as it is
		}
		if prev, dup := index[eid]; dup {
			return nil, nil, fmt.Errorf("%s: %w: %q at entries %d and %d", s.path, ErrFeedbackDuplicateID, eid, prev, i)
		}
		index[eid] = i
	}
	return entries, index, nil
}

// Append adds e to the log and writes the file before it returns; when the
// read or the write fails the file keeps its old content. The entry's ID
// must be non-empty and not yet in the log.
func (s *FeedbackStore[E]) Append(e E) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, index, err := s.readLocked()
	if err != nil {
		return fmt.Errorf("append feedback: %w", err)
	}
	eid := s.id(e)
	if eid == "" {
		return fmt.Errorf("append feedback: %w: entry has an empty ID", ErrFeedbackInvalid)
	}
	if _, dup := index[eid]; dup {
		return fmt.Errorf("append feedback %s: %w", eid, ErrFeedbackDuplicateID)
	}
	if err := s.writeLocked(append(entries, e)); err != nil {
		return fmt.Errorf("append feedback %s: %w", eid, err)
	}
	return nil
}

// Rate sets the rating of the entry with the given ID through the store's
// setRating function and writes the file before it returns. rating is
// RatingUp ("up"), RatingDown ("down") or RatingNone ("", clears the
// rating); anything else gives an error wrapping ErrFeedbackInvalid. found
// is false, with a nil error and the file untouched, when no entry has the
// ID. When the write fails the file keeps its old content.
func (s *FeedbackStore[E]) Rate(id, rating string) (found bool, err error) {
	if rating != RatingUp && rating != RatingDown && rating != RatingNone {
		return false, fmt.Errorf("rate feedback %s: %w: rating %q (want \"up\", \"down\" or \"\")", id, ErrFeedbackInvalid, rating)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, index, err := s.readLocked()
	if err != nil {
		return false, fmt.Errorf("rate feedback %s: %w", id, err)
	}
	i, ok := index[id]
	if !ok || id == "" {
		return false, nil
	}
	s.setRating(&entries[i], rating)
	if err := s.writeLocked(entries); err != nil {
		return true, fmt.Errorf("rate feedback %s: %w", id, err)
	}
	return true, nil
}

// All reads the file and returns all entries in the order they were
// appended, for example to build an eval dataset from logged usage. A
// missing or empty file gives no entries and no error.
func (s *FeedbackStore[E]) All() ([]E, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, _, err := s.readLocked()
	if err != nil {
		return nil, fmt.Errorf("read feedback: %w", err)
	}
	return entries, nil
}

// Get reads the file and returns the entry with the given ID; found is
// false when no entry has it.
func (s *FeedbackStore[E]) Get(id string) (e E, found bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, index, err := s.readLocked()
	if err != nil {
		return e, false, fmt.Errorf("get feedback %s: %w", id, err)
	}
	i, ok := index[id]
	if !ok || id == "" {
		return e, false, nil
	}
	return entries[i], true, nil
}

// writeLocked replaces the file atomically with entries.
func (s *FeedbackStore[E]) writeLocked(entries []E) error {
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
