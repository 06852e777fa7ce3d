package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// feedbackTestEntry is an app-shaped entry: its own citation type and a
// string rating field.
type feedbackTestEntry struct {
	ID        string                 `json:"id"`
	Question  string                 `json:"question"`
	Answer    string                 `json:"answer"`
	Citations []feedbackTestCitation `json:"citations,omitempty"`
	Rating    string                 `json:"rating,omitempty"`
}

type feedbackTestCitation struct {
	URL string `json:"url"`
}

func newFeedbackTestStore(path string) *FeedbackStore[feedbackTestEntry] {
	return NewFeedbackStore(path,
		func(e feedbackTestEntry) string { return e.ID },
		func(e *feedbackTestEntry, rating string) { e.Rating = rating })
}

// feedbackAll is All that fails the test on an error.
func feedbackAll(t *testing.T, s *FeedbackStore[feedbackTestEntry]) []feedbackTestEntry {
	t.Helper()
	all, err := s.All()
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	return all
}

// feedbackRate is Rate that fails the test on an error or an unknown ID.
func feedbackRate(t *testing.T, s *FeedbackStore[feedbackTestEntry], id, rating string) {
	t.Helper()
	found, err := s.Rate(id, rating)
	if err != nil || !found {
		t.Fatalf("Rate(%s, %q) = %v, %v", id, rating, found, err)
	}
}

func TestFeedbackStoreAppendRateReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.json")
	s := newFeedbackTestStore(path)
	if got := feedbackAll(t, s); len(got) != 0 {
		t.Fatalf("new store has %d entries", len(got))
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("NewFeedbackStore or All created the file: %v", err)
	}
	a := feedbackTestEntry{ID: NewRandomHexID(16), Question: "Wie hoch ist die Gebühr?", Answer: "12 €", Citations: []feedbackTestCitation{{URL: "https://example.com/a"}}}
	b := feedbackTestEntry{ID: NewRandomHexID(16), Question: "Who signs?", Answer: "The dean."}
	for _, e := range []feedbackTestEntry{a, b} {
		if err := s.Append(e); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	feedbackRate(t, s, a.ID, "up")
	feedbackRate(t, s, b.ID, "down")
	if got, ok, err := s.Get(a.ID); !ok || err != nil || got.Rating != "up" {
		t.Fatalf("Get(a) = %+v, %v, %v", got, ok, err)
	}

	// The file is a plain JSON array of the app's entries.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("file is not a JSON array: %v\n%s", err, data)
	}
	if len(raw) != 2 || raw[0]["rating"] != "up" || raw[1]["rating"] != "down" || raw[0]["question"] != a.Question {
		t.Fatalf("file content = %s", data)
	}

	re, err := OpenFeedbackStore(path, func(e feedbackTestEntry) string { return e.ID },
		func(e *feedbackTestEntry, rating string) { e.Rating = rating })
	if err != nil {
		t.Fatalf("OpenFeedbackStore: %v", err)
	}
	got := feedbackAll(t, re)
	if len(got) != 2 || got[0].ID != a.ID || got[1].ID != b.ID || got[0].Citations[0].URL != "https://example.com/a" {
		t.Fatalf("reopened entries = %+v", got)
	}
	feedbackRate(t, re, b.ID, "") // "" clears
	if got, _, _ := re.Get(b.ID); got.Rating != "" {
		t.Fatalf("rating not cleared: %+v", got)
	}
	entries, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if len(entries) != 2 || entries[0] != path || entries[1] != path+".lock" {
		t.Fatalf("directory holds %v, want only the log and its lock file (no temporary files left)", entries)
	}
}

// All reads the file: a change made by another store on the same file (or
// by hand) shows at once.
func TestFeedbackStoreAllReadsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fb.json")
	s := newFeedbackTestStore(path)
	if err := s.Append(feedbackTestEntry{ID: "a", Question: "q"}); err != nil {
		t.Fatal(err)
	}
	edited := `[{"id": "a", "question": "q", "rating": "down"}, {"id": "b", "question": "added by hand"}]`
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	got := feedbackAll(t, s)
	if len(got) != 2 || got[0].Rating != "down" || got[1].Question != "added by hand" {
		t.Fatalf("All after an edit = %+v", got)
	}
	feedbackRate(t, s, "b", "up")
	if got := feedbackAll(t, newFeedbackTestStore(path)); got[1].Rating != "up" || got[0].Rating != "down" {
		t.Fatalf("after Rate = %+v", got)
	}
}

func TestFeedbackStoreErrors(t *testing.T) {
	s := newFeedbackTestStore(filepath.Join(t.TempDir(), "fb.json"))
	if err := s.Append(feedbackTestEntry{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	// An unknown ID is not an error: found is false.
	if found, err := s.Rate("nope", "up"); found || err != nil {
		t.Errorf("Rate(unknown) = %v, %v; want false, nil", found, err)
	}
	if found, err := s.Rate("", "up"); found || err != nil {
		t.Errorf("Rate(\"\") = %v, %v; want false, nil", found, err)
	}
	_, rateErr := s.Rate("x", "great")
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"rate with an unknown rating", rateErr, ErrFeedbackInvalid},
		{"append duplicate ID", s.Append(feedbackTestEntry{ID: "x"}), ErrFeedbackDuplicateID},
		{"append empty ID", s.Append(feedbackTestEntry{Question: "?"}), ErrFeedbackInvalid},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if got := feedbackAll(t, s); len(got) != 1 || got[0].Rating != "" {
		t.Fatalf("failed calls changed the log: %+v", got)
	}

	// A store without path or functions fails on use (NewFeedbackStore
	// cannot return an error) and at once with OpenFeedbackStore.
	bad := NewFeedbackStore[feedbackTestEntry]("", nil, nil)
	if err := bad.Append(feedbackTestEntry{ID: "a"}); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("Append on a store without path: %v", err)
	}
	if _, err := bad.All(); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("All on a store without path: %v", err)
	}
	noFn := NewFeedbackStore[feedbackTestEntry](filepath.Join(t.TempDir(), "x.json"), nil, nil)
	if _, err := noFn.Rate("a", "up"); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("Rate on a store without functions: %v", err)
	}
	if _, err := OpenFeedbackStore[feedbackTestEntry]("", nil, nil); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("OpenFeedbackStore without path/functions: %v", err)
	}
}

// A failed write leaves the file as it was.
func TestFeedbackStoreWriteFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "fb.json")
	s := newFeedbackTestStore(path) // directory does not exist: writes fail
	if err := s.Append(feedbackTestEntry{ID: "a"}); err == nil {
		t.Fatal("Append into a missing directory succeeded")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := feedbackAll(t, s); len(got) != 0 {
		t.Fatalf("failed Append left %+v", got)
	}
	if err := s.Append(feedbackTestEntry{ID: "a"}); err != nil {
		t.Fatalf("Append once the directory exists: %v", err)
	}
	// Make the directory read-only: the rating write fails, the file
	// keeps the old content.
	if err := os.Chmod(filepath.Join(dir, "sub"), 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "sub"), 0o700) })
	if f, err := os.CreateTemp(filepath.Join(dir, "sub"), "probe"); err == nil {
		f.Close()
		t.Skip("running as a user who can write into a read-only directory (root)")
	}
	found, err := s.Rate("a", "up")
	if err == nil || !found {
		t.Fatalf("Rate with an unwritable directory = %v, %v; want found and an error", found, err)
	}
	if e, _, _ := s.Get("a"); e.Rating != "" {
		t.Fatalf("rating stored although the write failed: %+v", e)
	}
}

// Corrupt, truncated or mistyped files are refused with a clear error and
// left byte-for-byte as they were, by OpenFeedbackStore and by every method.
func TestFeedbackStoreCorruptFile(t *testing.T) {
	valid := `[
  {"id": "a", "question": "q1", "answer": "x"},
  {"id": "b", "question": "q2", "answer": "y"}
]`
	tests := []struct {
		name, content string
		want          error
	}{
		{"truncated", valid[:len(valid)/2], ErrFeedbackCorrupt},
		{"garbage", "\x00\x01 not json", ErrFeedbackCorrupt},
		{"object instead of array", `{"id":"a"}`, ErrFeedbackCorrupt},
		{"wrong field type", `[{"id": 7}]`, ErrFeedbackCorrupt},
		{"trailing garbage", valid + "]", ErrFeedbackCorrupt},
		{"duplicate IDs", `[{"id":"a"},{"id":"a"}]`, ErrFeedbackDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fb.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := OpenFeedbackStore(path, func(e feedbackTestEntry) string { return e.ID },
				func(e *feedbackTestEntry, rating string) { e.Rating = rating })
			if !errors.Is(err, tt.want) || s != nil {
				t.Fatalf("OpenFeedbackStore = %v, %v; want error %v", s, err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			lazy := newFeedbackTestStore(path)
			_, allErr := lazy.All()
			_, rateErr := lazy.Rate("a", "up")
			appendErr := lazy.Append(feedbackTestEntry{ID: "new"})
			for name, err := range map[string]error{"All": allErr, "Rate": rateErr, "Append": appendErr} {
				if !errors.Is(err, tt.want) {
					t.Errorf("%s on a corrupt file: %v, want %v", name, err, tt.want)
				}
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.content {
				t.Fatal("corrupt file was modified")
			}
		})
	}
	t.Run("empty file is an empty log", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fb.json")
		if err := os.WriteFile(path, []byte("  \n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := feedbackAll(t, newFeedbackTestStore(path)); len(got) != 0 {
			t.Fatal("entries from an empty file")
		}
	})
}

// Concurrent appends and ratings from 50 goroutines all survive on disk.
func TestFeedbackStoreConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fb.json")
	s := newFeedbackTestStore(path)
	const goroutines, each = 50, 4
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("g%d-%d", g, i)
				if err := s.Append(feedbackTestEntry{ID: id, Question: id}); err != nil {
					t.Errorf("Append %s: %v", id, err)
					return
				}
				rating := RatingUp
				if i%2 == 1 {
					rating = RatingDown
				}
				if found, err := s.Rate(id, rating); err != nil || !found {
					t.Errorf("Rate %s: %v, %v", id, found, err)
				}
			}
		})
	}
	wg.Wait()
	all := feedbackAll(t, newFeedbackTestStore(path))
	if len(all) != goroutines*each {
		t.Fatalf("log has %d entries, want %d", len(all), goroutines*each)
	}
	byID := map[string]feedbackTestEntry{}
	for _, e := range all {
		byID[e.ID] = e
	}
	for g := range goroutines {
		for i := range each {
			id := fmt.Sprintf("g%d-%d", g, i)
			e, ok := byID[id]
			want := "up"
			if i%2 == 1 {
				want = "down"
			}
			if !ok || e.Rating != want || e.Question != id {
				t.Fatalf("entry %s = %+v (found %v), want rating %q", id, e, ok, want)
			}
		}
	}
}
