package engine

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// feedbackChildEnv configures TestFeedbackProcessChild: "<path> <prefix> <n>".
const feedbackChildEnv = "ASKYOURDOCS_FEEDBACK_CHILD"

// TestFeedbackProcessChild is the child process of
// TestFeedbackStoreProcesses: it appends n entries <prefix>-<i> to the log
// at path and rates every second one "up" right away.
func TestFeedbackProcessChild(t *testing.T) {
	spec := os.Getenv(feedbackChildEnv)
	if spec == "" {
		t.Skip("child process of TestFeedbackStoreProcesses")
	}
	var path, prefix string
	var n int
	if _, err := fmt.Sscanf(spec, "%s %s %d", &path, &prefix, &n); err != nil {
		t.Fatalf("bad %s %q: %v", feedbackChildEnv, spec, err)
	}
	s := newFeedbackTestStore(path)
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if err := s.Append(feedbackTestEntry{ID: id, Question: "q " + id}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if found, err := s.Rate(id, RatingUp); err != nil || !found {
				t.Fatalf("Rate %s: %v %v", id, found, err)
			}
		}
		// Every entry of the other process is readable through Get once
		// it is in the file: a rating of one of them must find it.
		if _, _, err := s.Get(id); err != nil {
			t.Fatal(err)
		}
	}
}

// Three processes appending to and rating in one file at the same time:
// every entry and every rating is there afterwards, and the file is one
// valid JSON array.
func TestFeedbackStoreProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "feedback.json")
	const procs, each = 3, 60
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFeedbackProcessChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s p%d %d", feedbackChildEnv, path, p, each))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child %d: %v\n%s", p, err, out)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw []feedbackTestEntry
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("the file is not a JSON array: %v", err)
	}
	if len(raw) != procs*each {
		t.Fatalf("file has %d entries, want %d", len(raw), procs*each)
	}
	s := newFeedbackTestStore(path)
	for p := range procs {
		for i := range each {
			id := fmt.Sprintf("p%d-%d", p, i)
			e, found, err := s.Get(id)
			want := ""
			if i%2 == 0 {
				want = RatingUp
			}
			if err != nil || !found || e.Rating != want {
				t.Fatalf("Get(%s) = %+v, %v, %v; want rating %q", id, e, found, err, want)
			}
		}
	}
}

// Two stores on one file in one process see each other's appends and
// ratings, the way two processes do.
func TestFeedbackStoreSharedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fb.json")
	a, b := newFeedbackTestStore(path), newFeedbackTestStore(path)
	for i := range 5 {
		if err := a.Append(feedbackTestEntry{ID: fmt.Sprintf("a%d", i)}); err != nil {
			t.Fatal(err)
		}
		if err := b.Append(feedbackTestEntry{ID: fmt.Sprintf("b%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Append(feedbackTestEntry{ID: "a3"}); err == nil {
		t.Fatal("b appended an ID a had appended")
	}
	feedbackRate(t, b, "a2", RatingDown)
	feedbackRate(t, a, "b4", RatingUp)
	if e, ok, err := a.Get("a2"); err != nil || !ok || e.Rating != RatingDown {
		t.Fatalf("a.Get(a2) after b rated it = %+v %v %v", e, ok, err)
	}
	if e, ok, err := b.Get("b4"); err != nil || !ok || e.Rating != RatingUp {
		t.Fatalf("b.Get(b4) after a rated it = %+v %v %v", e, ok, err)
	}
	if got := feedbackAll(t, b); len(got) != 10 || got[0].ID != "a0" || got[9].ID != "b4" {
		t.Fatalf("All = %+v", got)
	}
}

// An append cut short by a crash leaves a partial last line: reads ignore
// it, the next Append writes over it, and the file is a valid array again.
func TestFeedbackStoreTornAppend(t *testing.T) {
	for _, torn := range []string{`,{"id":"half","quest`, ",", `,{"id":"x"}`, "\x00\x00\x00", ""} {
		t.Run(fmt.Sprintf("%q", torn), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fb.json")
			s := newFeedbackTestStore(path)
			for _, id := range []string{"a", "b"} {
				if err := s.Append(feedbackTestEntry{ID: id, Question: id}); err != nil {
					t.Fatal(err)
				}
			}
			data, _ := os.ReadFile(path)
			data = append(bytes.TrimSuffix(data, []byte("]\n")), torn...)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			re := newFeedbackTestStore(path)
			got := feedbackAll(t, re)
			if len(got) != 2 || got[1].ID != "b" {
				t.Fatalf("All with a torn tail = %+v", got)
			}
			if err := re.Append(feedbackTestEntry{ID: "c"}); err != nil {
				t.Fatal(err)
			}
			data, _ = os.ReadFile(path)
			var raw []feedbackTestEntry
			if err := json.Unmarshal(data, &raw); err != nil || len(raw) != 3 || raw[2].ID != "c" {
				t.Fatalf("after the repairing Append: %v %+v\n%s", err, raw, data)
			}
		})
	}
	// Damage before a good line is not a torn append: corrupt, untouched.
	path := filepath.Join(t.TempDir(), "fb.json")
	bad := "[\n{\"id\":\"a\"}\n,{\"id\":\n,{\"id\":\"c\"}\n]\n"
	os.WriteFile(path, []byte(bad), 0o600)
	if err := newFeedbackTestStore(path).Append(feedbackTestEntry{ID: "d"}); err == nil {
		t.Fatal("Append on a file damaged in the middle succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != bad {
		t.Fatal("damaged file was modified")
	}
}

// A file in the old indented layout is read as it is, and the first change
// rewrites it one entry per line with nothing lost.
func TestFeedbackStoreMigratesIndentedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.json")
	old := make([]feedbackTestEntry, 50)
	for i := range old {
		old[i] = feedbackTestEntry{ID: fmt.Sprintf("old%d", i), Question: "Wie hoch?\n" + strings.Repeat("x", i), Answer: "12 €",
			Citations: []feedbackTestCitation{{URL: "https://example.com/" + fmt.Sprint(i)}}}
	}
	old[7].Rating = RatingDown
	data, _ := json.MarshalIndent(old, "", "  ")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFeedbackStore(path, func(e feedbackTestEntry) string { return e.ID },
		func(e *feedbackTestEntry, rating string) { e.Rating = rating })
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Fatal("OpenFeedbackStore modified the file")
	}
	if e, ok, err := s.Get("old7"); err != nil || !ok || e.Rating != RatingDown {
		t.Fatalf("Get(old7) on the old layout = %+v %v %v", e, ok, err)
	}
	if err := s.Append(feedbackTestEntry{ID: "new"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if lines := bytes.Count(got, []byte("\n")); lines != 53 {
		t.Fatalf("rewritten file has %d lines, want 53 (brackets and one per entry)", lines)
	}
	all := feedbackAll(t, newFeedbackTestStore(path))
	if len(all) != 51 || all[50].ID != "new" {
		t.Fatalf("after migration: %d entries", len(all))
	}
	for i := range old {
		a, _ := json.Marshal(old[i])
		b, _ := json.Marshal(all[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("entry %d changed: %s -> %s", i, a, b)
		}
	}
}

// feedbackBenchEntry is about the size of serve's entries (1.4 KB).
func feedbackBenchEntry(id string) feedbackTestEntry {
	return feedbackTestEntry{ID: id, Question: "How long before the start can I cancel a booking and still get a full refund?",
		Answer: strings.Repeat("The booking can be cancelled free of charge up to 48 hours before the start. ", 16),
		Citations: []feedbackTestCitation{{URL: "uploads/3f2a/handbook.pdf"}, {URL: "uploads/9c1d/faq.docx"},
			{URL: "https://example.com/terms#cancellation"}}}
}

// BenchmarkFeedbackAppend measures one answer's feedback write (Append,
// durable) on logs that already hold 0, 10,000 and 100,000 entries of
// 1.4 KB (15 and 149 MB as a file), for the JSON file, an SQLite table and
// (with a test database) a PostgreSQL table. Each iteration appends one
// entry to each of the three logs in turn, so disk noise from other
// processes falls on all sizes alike; it reports each size's median and
// mean µs per append and the median relative to the empty log
// (x-vs-empty; the size must not matter, so about 1).
//
//	go test -run '^$' -bench FeedbackAppend -benchtime 300x .
func BenchmarkFeedbackAppend(b *testing.B) {
	id := func(e feedbackTestEntry) string { return e.ID }
	set := func(e *feedbackTestEntry, r string) { e.Rating = r }
	seed := func(n int) []feedbackTestEntry {
		out := make([]feedbackTestEntry, n)
		for i := range out {
			out[i] = feedbackBenchEntry(fmt.Sprintf("seed%d", i))
		}
		return out
	}
	b.Run("file", func(b *testing.B) {
		feedbackBenchAppend(b, func(n int) FeedbackLog[feedbackTestEntry] {
			path := filepath.Join(b.TempDir(), "feedback.json")
			var buf bytes.Buffer
			buf.WriteString("[\n")
			for i, e := range seed(n) {
				if i > 0 {
					buf.WriteByte(',')
				}
				line, _ := json.Marshal(e)
				buf.Write(line)
				buf.WriteByte('\n')
			}
			buf.WriteString("]\n")
			// Written durably, so that the first fsync of the benchmark
			// does not flush the seed.
			if err := durableWriteFile(path, buf.Bytes(), 0o600); err != nil {
				b.Fatal(err)
			}
			return NewFeedbackStore(path, id, set)
		})
	})
	b.Run("sqlite", func(b *testing.B) {
		feedbackBenchAppend(b, func(n int) FeedbackLog[feedbackTestEntry] {
			db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "app.db")+
				"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			s, err := NewSQLiteFeedbackStore(b.Context(), db, "feedback", id, set)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.ImportOnce(b.Context(), "seed", seed(n)); err != nil {
				b.Fatal(err)
			}
			return s
		})
	})
	b.Run("postgres", func(b *testing.B) {
		pool, err := pgxpool.New(b.Context(), pgTestDSN(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		feedbackBenchAppend(b, func(n int) FeedbackLog[feedbackTestEntry] {
			table := fmt.Sprintf("feedback_bench_%d_%d", n, time.Now().UnixNano()%1e9)
			b.Cleanup(func() { pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+table+", "+table+"_imports") })
			s, err := NewPgFeedbackStore(b.Context(), pool, table, id, set)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.ImportOnce(b.Context(), "seed", seed(n)); err != nil {
				b.Fatal(err)
			}
			return s
		})
	})
}

// feedbackBenchAppend runs BenchmarkFeedbackAppend on the logs open makes.
func feedbackBenchAppend(b *testing.B, open func(n int) FeedbackLog[feedbackTestEntry]) {
	sizes := []int{0, 10_000, 100_000}
	logs := make([]FeedbackLog[feedbackTestEntry], len(sizes))
	for k, n := range sizes {
		logs[k] = open(n)
		if err := logs[k].Append(feedbackBenchEntry("warm-up")); err != nil { // indexes a file
			b.Fatal(err)
		}
	}
	took := make([][]time.Duration, len(sizes))
	for i := 0; b.Loop(); i++ {
		for k, s := range logs {
			t0 := time.Now()
			if err := s.Append(feedbackBenchEntry(fmt.Sprintf("bench%d", i))); err != nil {
				b.Fatal(err)
			}
			took[k] = append(took[k], time.Since(t0))
		}
	}
	medians := make([]float64, len(sizes))
	for k, n := range sizes {
		d := took[k]
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		medians[k] = float64(d[len(d)/2].Microseconds())
		b.ReportMetric(medians[k], fmt.Sprintf("µs-median@%d", n))
		b.ReportMetric(float64(sum.Microseconds())/float64(len(d)), fmt.Sprintf("µs-mean@%d", n))
	}
	for k, n := range sizes[1:] {
		b.ReportMetric(medians[k+1]/medians[0], fmt.Sprintf("x-vs-empty@%d", n))
	}
}
