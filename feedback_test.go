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

func openFeedbackTestStore(t *testing.T, path string) (*FeedbackStore[feedbackTestEntry], error) {
	t.Helper()
	return NewFeedbackStore(path,
		func(e feedbackTestEntry) string { return e.ID },
		func(e *feedbackTestEntry, rating int) {
			switch rating {
			case RatingUp:
				e.Rating = "up"
			case RatingDown:
				e.Rating = "down"
			default:
				e.Rating = ""
			}
		})
}

func mustOpenFeedback(t *testing.T, path string) *FeedbackStore[feedbackTestEntry] {
	t.Helper()
	s, err := openFeedbackTestStore(t, path)
	if err != nil {
		t.Fatalf("NewFeedbackStore(%s): %v", path, err)
	}
	return s
}

func TestFeedbackStoreAppendRateReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.json")
	s := mustOpenFeedback(t, path)
	if s.Len() != 0 {
		t.Fatalf("new store has %d entries", s.Len())
	}
	a := feedbackTestEntry{ID: NewRandomHexID(), Question: "Wie hoch ist die Gebühr?", Answer: "12 €", Citations: []feedbackTestCitation{{URL: "https://example.com/a"}}}
	b := feedbackTestEntry{ID: NewRandomHexID(), Question: "Who signs?", Answer: "The dean."}
	for _, e := range []feedbackTestEntry{a, b} {
		if err := s.Append(e); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	if err := s.Rate(a.ID, RatingUp); err != nil {
		t.Fatalf("Rate: %v", err)
	}
	if err := s.Rate(b.ID, RatingDown); err != nil {
		t.Fatalf("Rate: %v", err)
	}
	if got, _ := s.Get(a.ID); got.Rating != "up" {
		t.Fatalf("Get(a).Rating = %q", got.Rating)
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

	re := mustOpenFeedback(t, path)
	got := re.Entries()
	if len(got) != 2 || got[0].ID != a.ID || got[1].ID != b.ID || got[0].Citations[0].URL != "https://example.com/a" {
		t.Fatalf("reopened entries = %+v", got)
	}
	if err := re.Rate(b.ID, RatingNone); err != nil {
		t.Fatal(err)
	}
	if got, _ := re.Get(b.ID); got.Rating != "" {
		t.Fatalf("rating not cleared: %+v", got)
	}
	entries, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if len(entries) != 1 {
		t.Fatalf("directory holds %v, want only the log (no temporary files left)", entries)
	}
}

func TestFeedbackStoreErrors(t *testing.T) {
	s := mustOpenFeedback(t, filepath.Join(t.TempDir(), "fb.json"))
	if err := s.Append(feedbackTestEntry{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"rate unknown ID", s.Rate("nope", RatingUp), ErrFeedbackNotFound},
		{"rate out of range", s.Rate("x", 5), ErrFeedbackInvalid},
		{"append duplicate ID", s.Append(feedbackTestEntry{ID: "x"}), ErrFeedbackDuplicateID},
		{"append empty ID", s.Append(feedbackTestEntry{Question: "?"}), ErrFeedbackInvalid},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if s.Len() != 1 {
		t.Fatalf("failed calls changed the log: %d entries", s.Len())
	}
	if _, err := NewFeedbackStore[feedbackTestEntry]("", nil, nil); !errors.Is(err, ErrFeedbackInvalid) {
		t.Fatalf("NewFeedbackStore without path/functions: %v", err)
	}
}

// A failed write leaves memory and disk as they were.
func TestFeedbackStoreWriteFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "fb.json")
	s := mustOpenFeedback(t, path) // directory does not exist: writes fail
	if err := s.Append(feedbackTestEntry{ID: "a"}); err == nil {
		t.Fatal("Append into a missing directory succeeded")
	}
	if s.Len() != 0 {
		t.Fatal("entry kept in memory although the write failed")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(feedbackTestEntry{ID: "a"}); err != nil {
		t.Fatalf("Append once the directory exists: %v", err)
	}
	// Replace the directory by a file: the rating write fails and is undone.
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Rate("a", RatingUp); err == nil {
		t.Fatal("Rate with an unwritable file succeeded")
	}
	if e, _ := s.Get("a"); e.Rating != "" {
		t.Fatalf("rating kept in memory although the write failed: %+v", e)
	}
}

// Corrupt, truncated or mistyped files are refused with a clear error and
// left byte-for-byte as they were.
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
			s, err := openFeedbackTestStore(t, path)
			if !errors.Is(err, tt.want) || s != nil {
				t.Fatalf("NewFeedbackStore = %v, %v; want error %v", s, err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
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
		if s := mustOpenFeedback(t, path); s.Len() != 0 {
			t.Fatal("entries from an empty file")
		}
	})
}

// Concurrent appends and ratings from 50 goroutines all survive, in memory
// and on disk.
func TestFeedbackStoreConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fb.json")
	s := mustOpenFeedback(t, path)
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
				if err := s.Rate(id, rating); err != nil {
					t.Errorf("Rate %s: %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	re := mustOpenFeedback(t, path)
	if re.Len() != goroutines*each {
		t.Fatalf("reopened log has %d entries, want %d", re.Len(), goroutines*each)
	}
	for g := range goroutines {
		for i := range each {
			id := fmt.Sprintf("g%d-%d", g, i)
			e, ok := re.Get(id)
			want := "up"
			if i%2 == 1 {
				want = "down"
			}
			if !ok || e.Rating != want || e.Question != id {
				t.Fatalf("entry %s after reopen = %+v (found %v), want rating %q", id, e, ok, want)
			}
		}
	}
}
