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
	"time"
)

// Thumbs ratings accepted by FeedbackStore.Rate (docs/compat.md).
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

// FeedbackLog is what FeedbackStore and the database logs (FeedbackDB)
// have in common: an app written against it runs on a file, on its SQLite
// database or on PostgreSQL.
type FeedbackLog[E any] interface {
	Append(e E) error
	Rate(id, rating string) (found bool, err error)
	All() ([]E, error)
	Get(id string) (e E, found bool, err error)
}

// FeedbackStore is a log of an app's question/answer interactions, entries of
// the app's own type E, kept in a JSON file and rated later (thumbs up or
// down). The file is one JSON array with one entry per line, so it can be
// read directly as an eval dataset source.
//
// Append costs the same whatever the log's size: it writes the new line in
// place of the closing bracket and fsyncs, without reading the file. Rate
// rewrites the file atomically (temporary file, fsync, rename). Processes
// sharing the file take an advisory lock on <file>.lock for every call and
// each picks up what the others appended by reading only the new lines.
// An append cut short by a crash was never acknowledged: its partial last
// line is ignored and overwritten by the next Append. An older file of the
// same array in another layout (the indented one) is read as it is and
// rewritten one entry per line by the first change. Any other file that is
// not a JSON array of E, or holds two entries with the same ID, is never
// overwritten: methods return an error wrapping ErrFeedbackCorrupt or
// ErrFeedbackDuplicateID. Edit the file only while no store uses it.
//
// All methods are safe for concurrent use, also across processes; see
// docs/app-blocks.md for the format and the figures.
type FeedbackStore[E any] struct {
	path      string
	id        func(E) string
	setRating func(*E, string)

	mu sync.Mutex // serialises calls within the process; the file lock across processes
	c  feedbackCache
}

// feedbackCache is what a FeedbackStore knows of its file between calls: the
// file it last read or wrote and where each entry's line is.
type feedbackCache struct {
	valid  bool
	exists bool // the file exists and holds the line format
	legacy bool // the file is a JSON array in another layout: rewrite before appending
	gen    uint64
	fi     fs.FileInfo
	// end is the offset of the closing "]" line, or of a torn last line.
	end   int64
	n     int // entries
	lines map[string]feedbackLine
}

// feedbackLine locates one entry's JSON in the file.
type feedbackLine struct{ off, n int64 }

// NewFeedbackStore returns the feedback log kept in the file at path; it
// does no I/O (a missing file is created by the first Append, an empty file
// counts as an empty log). id returns an entry's ID (as given by the app,
// for example from NewRandomHexID(16)); setRating stores a rating ("up",
// "down", or "" to clear it) in an entry, in whatever field and shape the
// app's type uses.
//
// An empty path or a nil function makes every method fail with
// ErrFeedbackInvalid.
//
// Deprecated: Use OpenFeedbackStore, the same store, which reports a
// misconfigured store or a corrupt file at startup rather than at the first
// Append.
func NewFeedbackStore[E any](path string, id func(E) string, setRating func(*E, string)) *FeedbackStore[E] {
	return &FeedbackStore[E]{path: path, id: id, setRating: setRating}
}

// OpenFeedbackStore returns the feedback log kept in the file at path,
// after checking its arguments and reading the file once, so a
// misconfigured store or a corrupt file is reported at startup rather than
// by the first Append; the file is not modified (a missing file is created
// by the first Append, an empty file counts as an empty log). id returns an
// entry's ID (as given by the app, for example from NewRandomHexID(16));
// setRating stores a rating ("up", "down", or "" to clear it) in an entry,
// in whatever field and shape the app's type uses. Errors wrap
// ErrFeedbackInvalid, ErrFeedbackCorrupt or ErrFeedbackDuplicateID (or are
// the file's read error).
func OpenFeedbackStore[E any](path string, id func(E) string, setRating func(*E, string)) (*FeedbackStore[E], error) {
	s := &FeedbackStore[E]{path: path, id: id, setRating: setRating}
	if err := s.locked(false, func() error { return s.refresh() }); err != nil {
		return nil, fmt.Errorf("open feedback log: %w", err)
	}
	return s, nil
}

// Append adds e to the log and writes it to disk (fsynced) before it
// returns; when it fails the log keeps its old entries. The entry's ID must
// be non-empty and not yet in the log.
func (s *FeedbackStore[E]) Append(e E) error {
	err := s.locked(true, func() error {
		if err := s.refresh(); err != nil {
			return err
		}
		eid := s.id(e)
		if eid == "" {
			return fmt.Errorf("%w: entry has an empty ID", ErrFeedbackInvalid)
		}
		if _, dup := s.c.lines[eid]; dup {
			return fmt.Errorf("%s: %w", eid, ErrFeedbackDuplicateID)
		}
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode feedback entry %s: %w", eid, err)
		}
		if !s.c.exists || s.c.legacy {
			entries, err := s.readAll()
			if err != nil {
				return err
			}
			return s.rewrite(append(entries, e))
		}
		return s.appendLine(eid, line)
	})
	if err != nil {
		return fmt.Errorf("append feedback: %w", err)
	}
	return nil
}

// Rate sets the rating of the entry with the given ID through the store's
// setRating function and rewrites the file before it returns. rating is
// RatingUp ("up"), RatingDown ("down") or RatingNone ("", clears the
// rating); anything else gives an error wrapping ErrFeedbackInvalid. found
// is false, with a nil error and the file untouched, when no entry has the
// ID. When the write fails the file keeps its old content.
func (s *FeedbackStore[E]) Rate(id, rating string) (found bool, err error) {
	if rating != RatingUp && rating != RatingDown && rating != RatingNone {
		return false, fmt.Errorf("rate feedback %s: %w: rating %q (want \"up\", \"down\" or \"\")", id, ErrFeedbackInvalid, rating)
	}
	err = s.locked(true, func() error {
		if err := s.refresh(); err != nil {
			return err
		}
		if _, ok := s.c.lines[id]; !ok || id == "" {
			return nil
		}
		found = true
		entries, err := s.readAll()
		if err != nil {
			return err
		}
		for i := range entries {
			if s.id(entries[i]) == id {
				s.setRating(&entries[i], rating)
				break
			}
		}
		return s.rewrite(entries)
	})
	if err != nil {
		return found, fmt.Errorf("rate feedback %s: %w", id, err)
	}
	return found, nil
}

// All reads the file and returns all entries in the order they were
// appended, for example to build an eval dataset from logged usage. A
// missing or empty file gives no entries and no error.
func (s *FeedbackStore[E]) All() ([]E, error) {
	var entries []E
	err := s.locked(false, func() (err error) {
		entries, err = s.readAll()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read feedback: %w", err)
	}
	return entries, nil
}

// Get returns the entry with the given ID, reading only its line (and any
// lines other processes appended since the last call); found is false when
// no entry has it.
func (s *FeedbackStore[E]) Get(id string) (e E, found bool, err error) {
	err = s.locked(false, func() error {
		if err := s.refresh(); err != nil {
			return err
		}
		ln, ok := s.c.lines[id]
		if !ok || id == "" {
			return nil
		}
		if s.c.legacy {
			entries, err := s.readAll()
			if err != nil {
				return err
			}
			for _, x := range entries {
				if s.id(x) == id {
					e, found = x, true
				}
			}
			return nil
		}
		f, err := os.Open(s.path)
		if err != nil {
			return fmt.Errorf("read feedback log: %w", err)
		}
		defer f.Close()
		buf := make([]byte, ln.n)
		if _, err := f.ReadAt(buf, ln.off); err != nil {
			return fmt.Errorf("read feedback log: %w", err)
		}
		if err := json.Unmarshal(buf, &e); err != nil || s.id(e) != id {
			// The file changed in a way the cache did not see (edited by
			// hand): read it again from the start.
			s.c.valid = false
			return fmt.Errorf("%s: %w: entry %s is not where it was", s.path, ErrFeedbackCorrupt, id)
		}
		found = true
		return nil
	})
	if err != nil {
		var zero E
		return zero, false, fmt.Errorf("get feedback %s: %w", id, err)
	}
	return e, found, nil
}

// locked runs fn with the store's mutex and the file lock held. A reader
// (write false) that cannot create the lock file (a read-only or missing
// directory) reads without it: no writer can be at work there.
func (s *FeedbackStore[E]) locked(write bool, fn func() error) error {
	if s.path == "" {
		return fmt.Errorf("%w: empty path", ErrFeedbackInvalid)
	}
	if s.id == nil || s.setRating == nil {
		return fmt.Errorf("%s: %w: id and setRating functions are required", s.path, ErrFeedbackInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lf, _, err := lockFile(s.path+".lock", true)
	if err != nil {
		if write {
			return fmt.Errorf("lock feedback log: %w", err)
		}
		s.c.valid = false
		defer func() { s.c.valid = false }()
		return fn()
	}
	defer unlockFile(lf)
	gen := feedbackReadGen(lf)
	if gen != s.c.gen {
		s.c.valid = false // another process rewrote the file
		s.c.gen = gen
	}
	err = fn()
	if s.c.gen != gen {
		// fn rewrote the file: tell the other processes.
		feedbackWriteGen(lf, s.c.gen)
	}
	return err
}

// The lock file holds the rewrite generation at this offset (after the
// byte LockFileEx locks on Windows).
const feedbackGenOffset = 8

func feedbackReadGen(lf *os.File) uint64 {
	var b [8]byte
	if n, _ := lf.ReadAt(b[:], feedbackGenOffset); n < len(b) {
		return 0
	}
	var g uint64
	for _, x := range b {
		g = g<<8 | uint64(x)
	}
	return g
}

func feedbackWriteGen(lf *os.File, g uint64) {
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = byte(g)
		g >>= 8
	}
	// A failure leaves the old generation: other processes then reload on
	// the size and modification time check instead.
	_, _ = lf.WriteAt(b[:], feedbackGenOffset)
}

// refresh brings the cache up to date with the file: nothing when the file
// is unchanged, the new lines when it only grew, else a full read.
func (s *FeedbackStore[E]) refresh() error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.c = feedbackCache{valid: true, gen: s.c.gen, lines: map[string]feedbackLine{}}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read feedback log: %w", err)
	}
	if s.c.valid && s.c.exists && !s.c.legacy && s.c.fi != nil && os.SameFile(fi, s.c.fi) {
		if fi.Size() == s.c.fi.Size() && fi.ModTime().Equal(s.c.fi.ModTime()) {
			return nil
		}
		if fi.Size() > s.c.fi.Size() && s.readTail(fi) {
			return nil
		}
	}
	_, err = s.readAll()
	return err
}

// readTail reads the lines another process appended since the cache was
// made; false (cache unchanged) when the new part is not clean complete
// entry lines followed by the closing bracket.
func (s *FeedbackStore[E]) readTail(fi fs.FileInfo) bool {
	f, err := os.Open(s.path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, fi.Size()-s.c.end)
	if _, err := f.ReadAt(buf, s.c.end); err != nil {
		return false
	}
	var p feedbackParse[E]
	p.s = s
	p.n = s.c.n
	p.ids = map[string]feedbackLine{}
	if err := p.lines(buf, s.c.end, false); err != nil || p.torn >= 0 || !p.closed {
		return false
	}
	for id := range p.ids {
		if _, dup := s.c.lines[id]; dup {
			return false
		}
	}
	for id, ln := range p.ids {
		s.c.lines[id] = ln
	}
	s.c.n, s.c.end, s.c.fi = p.n, p.end, fi
	return true
}

// readAll reads the whole file, rebuilds the cache and returns the entries.
func (s *FeedbackStore[E]) readAll() ([]E, error) {
	s.c.valid = false
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.c = feedbackCache{valid: true, gen: s.c.gen, lines: map[string]feedbackLine{}}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read feedback log: %w", err)
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("read feedback log: %w", err)
	}
	c := feedbackCache{valid: true, gen: s.c.gen, fi: fi, lines: map[string]feedbackLine{}}
	if len(bytes.TrimSpace(data)) == 0 {
		// An empty file: the first Append writes it whole.
		s.c = c
		return nil, nil
	}
	var p feedbackParse[E]
	p.s, p.ids, p.keep = s, c.lines, true
	lineErr := p.lines(data, 0, true)
	if lineErr == nil {
		c.exists, c.n, c.end = true, p.n, p.end
		s.c = c
		return p.entries, nil
	}
	if errors.Is(lineErr, ErrFeedbackDuplicateID) {
		return nil, lineErr
	}
	// Not the line layout: the whole file must be one JSON array of E.
	var entries []E
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", s.path, ErrFeedbackCorrupt, err)
	}
	for i, e := range entries {
		eid := s.id(e)
		if eid == "" {
			continue // cannot be rated, but is kept as it is
		}
		if _, dup := c.lines[eid]; dup {
			return nil, fmt.Errorf("%s: %w: %q twice (entry %d)", s.path, ErrFeedbackDuplicateID, eid, i)
		}
		c.lines[eid] = feedbackLine{off: -1}
	}
	c.legacy, c.n = true, len(entries)
	s.c = c
	return entries, nil
}

// feedbackParse reads the line layout: "[", one entry per line (every one
// after the first starting with a comma), "]".
type feedbackParse[E any] struct {
	s       *FeedbackStore[E]
	n       int // entries so far
	ids     map[string]feedbackLine
	keep    bool // collect entries
	entries []E
	end     int64 // offset of the closing bracket or torn line
	closed  bool  // the closing bracket was seen
	torn    int64 // offset of a torn last line, or -1
}

// errFeedbackLayout says a file is not in the line layout (it may still be
// a JSON array in another layout).
var errFeedbackLayout = errors.New("not the one-entry-per-line layout")

// lines parses data, found at offset base in the file; head says data
// starts with the opening bracket line. A last line that is neither an
// entry nor the bracket is a torn append (p.torn); an invalid line before
// a valid one is an error.
func (p *feedbackParse[E]) lines(data []byte, base int64, head bool) error {
	p.torn = -1
	off := int64(0)
	next := func() (line []byte, at int64, complete, ok bool) {
		if off >= int64(len(data)) {
			return nil, 0, false, false
		}
		at = off
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			line, off = data[off:], int64(len(data))
			return line, at, false, true
		}
		line, off = data[off:off+int64(i)], off+int64(i)+1
		return line, at, true, true
	}
	if head {
		line, _, complete, ok := next()
		if !ok || !complete || string(line) != "[" {
			return errFeedbackLayout
		}
	}
	for {
		line, at, complete, ok := next()
		if !ok {
			if !p.closed && p.torn < 0 {
				// Torn exactly at a line end: the bracket is missing.
				p.torn, p.end = base+off, base+off
			}
			return nil
		}
		if p.closed {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return errFeedbackLayout
		}
		if string(line) == "]" {
			p.closed, p.end = true, base+at
			continue
		}
		js := line
		if p.n > 0 {
			if len(js) == 0 || js[0] != ',' {
				js = nil
			} else {
				js = js[1:]
			}
		}
		var e E
		if complete && len(js) > 0 && js[0] == '{' && json.Unmarshal(js, &e) == nil {
			if p.torn >= 0 {
				return errFeedbackLayout // damage before a good line: not a torn append
			}
			if eid := p.s.id(e); eid != "" {
				if _, dup := p.ids[eid]; dup {
					return fmt.Errorf("%s: %w: %q twice (entry %d)", p.s.path, ErrFeedbackDuplicateID, eid, p.n)
				}
				p.ids[eid] = feedbackLine{off: base + at + int64(len(line)-len(js)), n: int64(len(js))}
			}
			if p.keep {
				p.entries = append(p.entries, e)
			}
			p.n++
			continue
		}
		if p.n == 0 && head && p.torn < 0 && complete {
			return errFeedbackLayout // an indented first entry: another layout
		}
		if p.torn >= 0 || !feedbackTornStart(line) {
			return errFeedbackLayout
		}
		p.torn, p.end = base+at, base+at
	}
}

// feedbackTornStart reports whether line can be what an interrupted append
// left: the start of its own bytes (a comma or brace, over the old bracket),
// the bracket, or bytes the disk never got (NUL).
func feedbackTornStart(line []byte) bool {
	return len(line) > 0 && (line[0] == ',' || line[0] == '{' || line[0] == ']' || line[0] == 0)
}

// appendLine writes line as the last entry in place of the closing bracket
// (or of a torn last line) and fsyncs.
func (s *FeedbackStore[E]) appendLine(eid string, line []byte) error {
	f, err := os.OpenFile(s.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write feedback log: %w", err)
	}
	buf := make([]byte, 0, len(line)+4)
	lead := int64(0)
	if s.c.n > 0 {
		buf, lead = append(buf, ','), 1
	}
	buf = append(append(buf, line...), "\n]\n"...)
	s.c.valid = false // until the write is known to be complete
	_, err = f.WriteAt(buf, s.c.end)
	newSize := s.c.end + int64(len(buf))
	if err == nil && s.c.fi.Size() > newSize {
		err = f.Truncate(newSize)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write feedback log: %w", err)
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil // written; the next call reads the file again
	}
	s.c.lines[eid] = feedbackLine{off: s.c.end + lead, n: int64(len(line))}
	s.c.n++
	s.c.end = newSize - 2
	s.c.fi = fi
	s.c.valid = true
	return nil
}

// rewrite replaces the file atomically with entries in the line layout and
// rebuilds the cache from what it wrote.
func (s *FeedbackStore[E]) rewrite(entries []E) error {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	c := feedbackCache{valid: true, exists: true, gen: s.c.gen + 1, lines: make(map[string]feedbackLine, len(entries))}
	for i, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode feedback log: %w", err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		if eid := s.id(e); eid != "" {
			c.lines[eid] = feedbackLine{off: int64(buf.Len()), n: int64(len(line))}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	c.end, c.n = int64(buf.Len()), len(entries)
	buf.WriteString("]\n")
	s.c.valid = false
	if err := durableWriteFile(s.path, buf.Bytes(), 0o600); err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		s.c.gen++ // written: the other processes must reload
		return nil
	}
	c.fi = fi
	s.c = c
	return nil
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

// feedbackNow is the clock of the database-backed stores' created column.
var feedbackNow = func() time.Time { return time.Now().UTC() }
