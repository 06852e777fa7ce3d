package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// feedbackLogs returns one FeedbackLog of each kind, empty: the JSON file,
// an SQLite table and (with a test database) a PostgreSQL table.
func feedbackLogs(t *testing.T) map[string]FeedbackLog[feedbackTestEntry] {
	t.Helper()
	id := func(e feedbackTestEntry) string { return e.ID }
	set := func(e *feedbackTestEntry, r string) { e.Rating = r }
	logs := map[string]FeedbackLog[feedbackTestEntry]{
		"file": NewFeedbackStore(filepath.Join(t.TempDir(), "feedback.json"), id, set),
	}
	db := feedbackTestSQLite(t)
	sq, err := NewSQLiteFeedbackStore(t.Context(), db, "feedback", id, set)
	if err != nil {
		t.Fatal(err)
	}
	logs["sqlite"] = sq
	pool := feedbackTestPool(t)
	table := fmt.Sprintf("feedback_test_%d", time.Now().UnixNano()%1e12)
	pg, err := NewPgFeedbackStore(t.Context(), pool, table, id, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+table+", "+table+"_imports")
	})
	logs["postgres"] = pg
	return logs
}

// feedbackTestSQLite opens a new SQLite database as SQLiteStore does.
func feedbackTestSQLite(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "app.db")+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// feedbackTestPool connects to the test database (or skips; fails with
// ASKYOURDOCS_REQUIRE_DB=1).
func feedbackTestPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgTestDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Every kind of feedback log behaves as FeedbackStore's contract says.
func TestFeedbackLogConformance(t *testing.T) {
	for name, log := range feedbackLogs(t) {
		t.Run(name, func(t *testing.T) {
			if all, err := log.All(); err != nil || len(all) != 0 {
				t.Fatalf("empty log: All = %v, %v", all, err)
			}
			for _, id := range []string{"a", "b", "c"} {
				if err := log.Append(feedbackTestEntry{ID: id, Question: "q " + id, Answer: "Gebühr: 12 €"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := log.Append(feedbackTestEntry{ID: "b"}); !errors.Is(err, ErrFeedbackDuplicateID) {
				t.Errorf("duplicate Append: %v", err)
			}
			if err := log.Append(feedbackTestEntry{}); !errors.Is(err, ErrFeedbackInvalid) {
				t.Errorf("Append without ID: %v", err)
			}
			if _, err := log.Rate("a", "great"); !errors.Is(err, ErrFeedbackInvalid) {
				t.Errorf("Rate with a bad rating: %v", err)
			}
			for _, id := range []string{"nope", ""} {
				if found, err := log.Rate(id, RatingUp); found || err != nil {
					t.Errorf("Rate(%q) = %v, %v", id, found, err)
				}
				if _, found, err := log.Get(id); found || err != nil {
					t.Errorf("Get(%q) = %v, %v", id, found, err)
				}
			}
			for id, r := range map[string]string{"a": RatingUp, "b": RatingDown, "c": RatingUp} {
				if found, err := log.Rate(id, r); !found || err != nil {
					t.Fatalf("Rate(%s) = %v, %v", id, found, err)
				}
			}
			if found, err := log.Rate("c", RatingNone); !found || err != nil {
				t.Fatalf("clearing Rate = %v, %v", found, err)
			}
			if e, found, err := log.Get("b"); !found || err != nil || e.Rating != RatingDown || e.Answer != "Gebühr: 12 €" {
				t.Fatalf("Get(b) = %+v, %v, %v", e, found, err)
			}
			all, err := log.All()
			if err != nil || len(all) != 3 {
				t.Fatalf("All = %+v, %v", all, err)
			}
			for i, want := range []struct{ id, rating string }{{"a", "up"}, {"b", "down"}, {"c", ""}} {
				if all[i].ID != want.id || all[i].Rating != want.rating {
					t.Errorf("All[%d] = %+v, want %+v", i, all[i], want)
				}
			}

			// 20 goroutines append and rate at once: nothing is lost.
			var wg sync.WaitGroup
			for g := range 20 {
				wg.Go(func() {
					for i := range 5 {
						id := fmt.Sprintf("g%d-%d", g, i)
						if err := log.Append(feedbackTestEntry{ID: id}); err != nil {
							t.Error(err)
							return
						}
						if found, err := log.Rate(id, RatingDown); !found || err != nil {
							t.Errorf("Rate %s: %v %v", id, found, err)
						}
					}
				})
			}
			wg.Wait()
			all, err = log.All()
			if err != nil || len(all) != 103 {
				t.Fatalf("after the concurrent part: %d entries, %v", len(all), err)
			}
			for _, e := range all[3:] {
				if e.Rating != RatingDown {
					t.Fatalf("entry %+v lost its rating", e)
				}
			}
		})
	}
}

// ImportOnce adds an old log's entries once: again with the same entries
// it adds nothing, and IDs already there are skipped.
func TestFeedbackImportOnce(t *testing.T) {
	type importer interface {
		FeedbackLog[feedbackTestEntry]
		ImportOnce(ctx context.Context, source string, entries []feedbackTestEntry) (int, error)
	}
	for name, log := range feedbackLogs(t) {
		imp, ok := log.(importer)
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if err := imp.Append(feedbackTestEntry{ID: "x", Rating: RatingUp}); err != nil {
				t.Fatal(err)
			}
			old := []feedbackTestEntry{{ID: "x", Question: "dup"}, {ID: "o1"}, {Question: "no ID"}, {ID: "o2", Rating: RatingDown}}
			for round, want := range []int{3, 0} {
				n, err := imp.ImportOnce(t.Context(), "/data/feedback.json", old)
				if err != nil || n != want {
					t.Fatalf("round %d: ImportOnce = %d, %v; want %d", round, n, err, want)
				}
			}
			all, err := imp.All()
			if err != nil || len(all) != 4 || all[0].Question != "" || all[0].Rating != RatingUp || all[2].Question != "no ID" || all[3].Rating != RatingDown {
				t.Fatalf("All after import = %+v, %v", all, err)
			}
			// Other entries from the same path are a new import.
			if n, err := imp.ImportOnce(t.Context(), "/data/feedback.json", []feedbackTestEntry{{ID: "o3"}}); err != nil || n != 1 {
				t.Fatalf("a changed file: ImportOnce = %d, %v", n, err)
			}
		})
	}
}

// Two SQLite handles on one database file (two processes): each sees the
// other's entries and ratings.
func TestSQLiteFeedbackStoreTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db") + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)"
	id := func(e feedbackTestEntry) string { return e.ID }
	set := func(e *feedbackTestEntry, r string) { e.Rating = r }
	var stores [2]FeedbackDB[feedbackTestEntry]
	for i := range stores {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if stores[i], err = NewSQLiteFeedbackStore(t.Context(), db, "feedback", id, set); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for k := range 50 {
				if err := s.Append(feedbackTestEntry{ID: fmt.Sprintf("s%d-%d", i, k)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if found, err := stores[1].Rate("s0-7", RatingUp); !found || err != nil {
		t.Fatalf("rating the other handle's entry: %v %v", found, err)
	}
	for _, s := range stores {
		n, err := s.Len(t.Context())
		if err != nil || n != 100 {
			t.Fatalf("Len = %d, %v", n, err)
		}
		if e, _, _ := s.Get("s0-7"); e.Rating != RatingUp {
			t.Fatalf("rating not visible: %+v", e)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFeedbackDBArguments(t *testing.T) {
	id := func(e feedbackTestEntry) string { return e.ID }
	set := func(e *feedbackTestEntry, r string) { e.Rating = r }
	db := feedbackTestSQLite(t)
	for _, table := range []string{"", "Feedback", "x; DROP TABLE y", "a-b"} {
		if _, err := NewSQLiteFeedbackStore(t.Context(), db, table, id, set); !errors.Is(err, ErrFeedbackInvalid) {
			t.Errorf("table %q: %v", table, err)
		}
	}
	if _, err := NewSQLiteFeedbackStore[feedbackTestEntry](t.Context(), db, "ok", nil, set); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("nil id function: %v", err)
	}
	if _, err := NewSQLiteFeedbackStore(t.Context(), nil, "ok", id, set); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("nil db: %v", err)
	}
	if _, err := NewPgFeedbackStore(t.Context(), nil, "ok", id, set); !errors.Is(err, ErrFeedbackInvalid) {
		t.Errorf("nil pool: %v", err)
	}
}
