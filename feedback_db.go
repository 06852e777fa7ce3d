package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// FeedbackDB is a FeedbackLog kept in a table of a database, as
// NewSQLiteFeedbackStore and NewPgFeedbackStore return it: every process
// using the database shares it. Its FeedbackLog methods take no context,
// like FeedbackStore's; each is bounded by 30 s. Errors wrap the same
// sentinels as FeedbackStore's. All methods are safe for concurrent use.
//
// Len returns the number of entries, Ping checks that the database answers
// and the table exists (for metrics and readiness). ImportOnce adds
// entries (for example FeedbackStore.All of an old feedback.json) in one
// transaction, unless the same entries from the same source were imported
// before; entries whose ID is already in the log are skipped, entries
// without an ID are kept. It returns how many it added.
type FeedbackDB[E any] interface {
	FeedbackLog[E]
	Len(ctx context.Context) (int, error)
	Ping(ctx context.Context) error
	ImportOnce(ctx context.Context, source string, entries []E) (int, error)
}

// feedbackDBTimeout bounds each call of a database-backed feedback store:
// their methods take no context, like FeedbackStore's.
const feedbackDBTimeout = 30 * time.Second

// feedbackTableRE is what a feedback table name may be: a plain lower-case
// identifier, so it can be put into SQL as it is.
var feedbackTableRE = lazyRegexp(`^[a-z_][a-z0-9_]{0,50}$`)

// feedbackDBCheck validates the arguments of a database-backed store.
func feedbackDBCheck[E any](table string, id func(E) string, setRating func(*E, string)) error {
	if !feedbackTableRE().MatchString(table) {
		return fmt.Errorf("%w: table name %q (want lower-case letters, digits and _, at most 51)", ErrFeedbackInvalid, table)
	}
	if id == nil || setRating == nil {
		return fmt.Errorf("%w: id and setRating functions are required", ErrFeedbackInvalid)
	}
	return nil
}

// feedbackEncode returns e's ID and JSON for Append: an empty ID is an error.
func feedbackEncode[E any](e E, id func(E) string) (string, []byte, error) {
	eid := id(e)
	if eid == "" {
		return "", nil, fmt.Errorf("%w: entry has an empty ID", ErrFeedbackInvalid)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return "", nil, fmt.Errorf("encode feedback entry %s: %w", eid, err)
	}
	return eid, data, nil
}

// feedbackRerate decodes a stored entry, sets its rating and encodes it.
func feedbackRerate[E any](data []byte, rating string, setRating func(*E, string)) ([]byte, error) {
	var e E
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("%w: stored entry: %w", ErrFeedbackCorrupt, err)
	}
	setRating(&e, rating)
	return json.Marshal(e)
}

// feedbackCheckRating is Rate's argument check.
func feedbackCheckRating(id, rating string) error {
	if rating != RatingUp && rating != RatingDown && rating != RatingNone {
		return fmt.Errorf("rate feedback %s: %w: rating %q (want \"up\", \"down\" or \"\")", id, ErrFeedbackInvalid, rating)
	}
	return nil
}

// feedbackImportKey names one import of entries (ImportOnce): the source
// and a digest of what it held, so the same file is imported once and a
// different file at the same path again.
func feedbackImportKey(source string, raw [][]byte) string {
	h := sha256.New()
	for _, r := range raw {
		h.Write(r)
		h.Write([]byte{0})
	}
	return source + "#" + hex.EncodeToString(h.Sum(nil)[:12])
}

// feedbackEncodeAll encodes entries for ImportOnce; entries without an ID
// are kept (stored without one: they cannot be rated).
func feedbackEncodeAll[E any](entries []E, id func(E) string) (ids []string, raw [][]byte, err error) {
	for i, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			return nil, nil, fmt.Errorf("encode feedback entry %d: %w", i, err)
		}
		ids = append(ids, id(e))
		raw = append(raw, data)
	}
	return ids, raw, nil
}
