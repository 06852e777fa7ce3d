package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// feedbackDB is serve's feedback log: a table in the index's own database
// (the SQLite file of --data, or the PostgreSQL database of --pg), so every
// serve process on that database shares it.
type feedbackDB = askyourdocs.FeedbackDB[feedbackEntry]

// legacyFeedbackFile is where serve kept its feedback log before it moved
// into the database; it is imported once and renamed to
// legacyFeedbackFile + importedSuffix.
const (
	legacyFeedbackFile = "feedback.json"
	importedSuffix     = ".imported"
)

// feedbackTable returns the table of the feedback log of the store named
// name: askyourdocs_feedback for the default store, <name>_feedback (as an
// identifier) for another.
func feedbackTable(name string) string {
	if name == "" || name == storeName {
		return "askyourdocs_feedback"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	t := b.String()
	if len(t) > 40 {
		t = t[:40]
	}
	if t[0] >= '0' && t[0] <= '9' {
		t = "s" + t
	}
	return t + "_feedback"
}

func feedbackID(e feedbackEntry) string                 { return e.ID }
func setFeedbackRating(e *feedbackEntry, rating string) { e.Rating = rating }

// openServeFeedback opens the feedback log in b's database and imports
// <dataDir>/feedback.json into it once.
func openServeFeedback(ctx context.Context, b *backend, dataDir string, logOut io.Writer) (feedbackDB, error) {
	var (
		fb    feedbackDB
		err   error
		where string
	)
	switch st := b.store.(type) {
	case *sqliteStore:
		fb, err = askyourdocs.NewSQLiteFeedbackStore(ctx, st.DB(), feedbackTable(""), feedbackID, setFeedbackRating)
		where = st.path()
	case *pgStore:
		fb, err = askyourdocs.NewPgFeedbackStore(ctx, st.Pool, feedbackTable(st.name), feedbackID, setFeedbackRating)
		where = "PostgreSQL table " + feedbackTable(st.name)
	default:
		return nil, fmt.Errorf("serve: %s has no database for the feedback log", b.store.describe())
	}
	if err != nil {
		return nil, fmt.Errorf("serve: feedback log: %w", err)
	}
	if err := importLegacyFeedback(ctx, fb, filepath.Join(dataDir, legacyFeedbackFile), where, logOut); err != nil {
		return nil, err
	}
	return fb, nil
}

// importLegacyFeedback imports the JSON feedback log at path into fb (once:
// ImportOnce skips what it imported before, so a crash before the rename
// imports nothing twice) and renames the file.
func importLegacyFeedback(ctx context.Context, fb feedbackDB, path, where string, logOut io.Writer) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	old, err := askyourdocs.OpenFeedbackStore(path, feedbackID, setFeedbackRating)
	if err != nil {
		return fmt.Errorf("serve: import the old feedback log: %w", err)
	}
	entries, err := old.All()
	if err != nil {
		return fmt.Errorf("serve: import the old feedback log: %w", err)
	}
	abs, _ := filepath.Abs(path)
	n, err := fb.ImportOnce(ctx, abs, entries)
	if err != nil {
		return fmt.Errorf("serve: import the old feedback log: %w", err)
	}
	dst := path + importedSuffix
	if _, err := os.Stat(dst); err == nil {
		dst = fmt.Sprintf("%s.%d%s", path, os.Getpid(), importedSuffix)
	}
	if err := os.Rename(path, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Another serve process may have renamed it a moment ago.
		return fmt.Errorf("serve: rename the imported feedback log: %w", err)
	}
	os.Remove(path + ".lock")
	fmt.Fprintf(logOut, "askyourdocs serve: imported %d of %d answers from %s into %s; the file is kept as %s\n",
		n, len(entries), path, where, dst)
	return nil
}
