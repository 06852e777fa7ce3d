package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// durableBackend opens stores on one database of a test.
type durableBackend struct {
	name string
	open func(t *testing.T, opts *DurableJobStoreOptions) DurableJobStore
}

// durableBackends returns an SQLite file and a fresh PostgreSQL database
// (pgTestDSN: skipped without one unless ASKYOURDOCS_REQUIRE_DB=1).
func durableBackends(t *testing.T) []durableBackend {
	path := filepath.Join(t.TempDir(), "jobs.sqlite")
	lite := durableBackend{"sqlite", func(t *testing.T, opts *DurableJobStoreOptions) DurableJobStore {
		s, err := NewDurableJobStoreSQLite(context.Background(), path, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}
	var dsn string
	parent := t
	pg := durableBackend{"pg", func(t *testing.T, opts *DurableJobStoreOptions) DurableJobStore {
		if dsn == "" {
			dsn = pgTestDatabase(parent, pgTestDSN(t))
		}
		s, err := NewDurableJobStorePg(context.Background(), dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}
	return []durableBackend{lite, pg}
}

// pgTestDatabase creates a database of the test's own on the server of
// dsn (River's tables are per database) and drops it when the test ends.
func pgTestDatabase(t *testing.T, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := "ayd_jobs_" + NewRandomHexID(6)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// echoKind returns its input after two progress messages.
func echoKind(ctx context.Context, in json.RawMessage, progress func(string)) (any, error) {
	var v struct{ Text string }
	if err := json.Unmarshal(in, &v); err != nil {
		return nil, err
	}
	progress("reading")
	progress("echoing " + v.Text)
	if v.Text == "fail" {
		return nil, errors.New("asked to fail")
	}
	if v.Text == "panic" {
		panic("asked to panic")
	}
	return map[string]string{"echo": v.Text}, nil
}

func waitDurable(t *testing.T, q JobQueue, id string) Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	j, err := q.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestDurableJobStoreRoundTrip(t *testing.T) {
	for _, b := range durableBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, nil)
			s.HandleKind("echo", echoKind)
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := s.EnqueueInput(ctx, "nope", nil); !errors.Is(err, ErrJobKindUnknown) {
				t.Fatalf("unknown kind: %v", err)
			}
			ids := map[string]string{}
			for _, text := range []string{"hello", "fail", "panic"} {
				j, err := s.EnqueueInput(ctx, "echo", map[string]string{"Text": text})
				if err != nil {
					t.Fatal(err)
				}
				if j.Status != JobPending || j.Kind != "echo" {
					t.Fatalf("enqueued %+v", j)
				}
				ids[text] = j.ID
			}
			ok := waitDurable(t, s, ids["hello"])
			if ok.Status != JobDone || ok.ProgressCount != 2 || ok.Progress != "echoing hello" ||
				strings.Join(ok.ProgressLog, "|") != "reading|echoing hello" || ok.StartedAt == nil || ok.EndedAt == nil {
				t.Fatalf("done job: %+v", ok)
			}
			if got, _ := json.Marshal(ok.Result); string(got) != `{"echo":"hello"}` {
				t.Fatalf("result %s", got)
			}
			if f := waitDurable(t, s, ids["fail"]); f.Status != JobFailed || f.Error != "asked to fail" || f.Result != nil || f.EndedAt == nil {
				t.Fatalf("failed job: %+v", f)
			}
			if p := waitDurable(t, s, ids["panic"]); p.Status != JobFailed || !strings.HasPrefix(p.Error, "panic: asked to panic") {
				t.Fatalf("panicked job: %+v", p)
			}
			list := s.List(0)
			if len(list) != 3 || list[0].ID != ids["panic"] || list[2].ID != ids["hello"] {
				t.Fatalf("list %+v", list)
			}
			// The HTTP contract: the original's keys.
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/api/jobs/"+ids["hello"], nil)
			req.SetPathValue("id", ids["hello"])
			JobStatusHandler(s).ServeHTTP(rec, req)
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
				t.Fatalf("status %d %s", rec.Code, rec.Body)
			}
			for _, k := range []string{"status", "progress", "error", "result"} {
				if _, ok := body[k]; !ok {
					t.Errorf("job JSON has no %q: %s", k, rec.Body)
				}
			}
			rec = httptest.NewRecorder()
			req.SetPathValue("id", "12345678")
			JobStatusHandler(s).ServeHTTP(rec, req)
			if rec.Code != http.StatusNotFound {
				t.Errorf("unknown job: %d", rec.Code)
			}
		})
	}
}

func TestDurableJobStoreCancel(t *testing.T) {
	for _, b := range durableBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, nil)
			started := make(chan struct{}, 1)
			s.HandleKind("block", func(ctx context.Context, _ json.RawMessage, progress func(string)) (any, error) {
				started <- struct{}{}
				<-ctx.Done()
				return nil, context.Cause(ctx)
			})
			ctx := context.Background()
			pending, err := s.EnqueueInput(ctx, "block", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Cancel(pending.ID); err != nil {
				t.Fatal(err)
			}
			if j, _ := s.Get(pending.ID); j.Status != JobCancelled || j.EndedAt == nil {
				t.Fatalf("cancelled pending job: %+v", j)
			}
			if err := s.Cancel(pending.ID); !errors.Is(err, ErrJobFinished) {
				t.Fatalf("second cancel: %v", err)
			}
			if err := s.Cancel("999999"); !errors.Is(err, ErrJobNotFound) {
				t.Fatalf("unknown: %v", err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			running, err := s.EnqueueInput(ctx, "block", nil)
			if err != nil {
				t.Fatal(err)
			}
			<-started
			if err := s.Cancel(running.ID); err != nil {
				t.Fatal(err)
			}
			if j := waitDurable(t, s, running.ID); j.Status != JobCancelled || !strings.Contains(j.Error, "cancel") || j.EndedAt == nil {
				t.Fatalf("cancelled running job: %+v", j)
			}
		})
	}
}

// A job enqueued by a process that stopped before running it runs in the
// next one, and its progress is readable from a third.
func TestDurableJobStoreSurvivesRestart(t *testing.T) {
	for _, b := range durableBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			a := b.open(t, nil)
			a.HandleKind("echo", echoKind)
			j, err := a.EnqueueInput(context.Background(), "echo", map[string]string{"Text": "later"})
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
			reader := b.open(t, nil)
			if got, ok := reader.Get(j.ID); !ok || got.Status != JobPending {
				t.Fatalf("after restart: %+v %v", got, ok)
			}
			worker := b.open(t, nil)
			worker.HandleKind("echo", echoKind)
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			if got := waitDurable(t, reader, j.ID); got.Status != JobDone || got.ProgressCount != 2 {
				t.Fatalf("seen from another store: %+v", got)
			}
		})
	}
}

// A running job whose process stops beating its heart is run again by
// another; with no attempts left it fails with the reason.
func TestDurableJobStoreAbandonedJob(t *testing.T) {
	for _, b := range durableBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			for _, attempts := range []int{2, 1} {
				t.Run(fmt.Sprint(attempts), func(t *testing.T) {
					release := make(chan struct{})
					defer close(release)
					ran := make(chan struct{}, 1)
					blocking := func(ctx context.Context, _ json.RawMessage, progress func(string)) (any, error) {
						ran <- struct{}{}
						progress("stuck")
						select {
						case <-release:
						case <-ctx.Done():
						}
						return nil, errors.New("the dead process came back")
					}
					// The "dead" process beats once, at Start.
					dead := b.open(t, &DurableJobStoreOptions{Heartbeat: time.Hour, MaxAttempts: attempts})
					dead.HandleKind("work", blocking)
					if err := dead.Start(); err != nil {
						t.Fatal(err)
					}
					j, err := dead.EnqueueInput(context.Background(), "work", nil)
					if err != nil {
						t.Fatal(err)
					}
					select {
					case <-ran:
					case <-time.After(30 * time.Second):
						t.Fatal("the first process never ran the job")
					}
					alive := b.open(t, &DurableJobStoreOptions{Heartbeat: 100 * time.Millisecond, DeadAfter: time.Second})
					alive.HandleKind("work", echoKind)
					if err := alive.Start(); err != nil {
						t.Fatal(err)
					}
					got := waitDurable(t, alive, j.ID)
					if attempts == 1 {
						if got.Status != JobFailed || !strings.Contains(got.Error, "no heartbeat") {
							t.Fatalf("abandoned job, no attempts left: %+v", got)
						}
						return
					}
					if got.Status != JobDone || got.Progress != "echoing " ||
						!strings.Contains(strings.Join(got.ProgressLog, "|"), "attempt 2 of 2") {
						t.Fatalf("abandoned job, run again: %+v", got)
					}
				})
			}
		})
	}
}

// Close hands a running job back to the queue without counting an
// attempt; the next process runs it from the start.
func TestDurableJobStoreCloseHandsBack(t *testing.T) {
	for _, b := range durableBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			a := b.open(t, &DurableJobStoreOptions{MaxAttempts: 1})
			ran := make(chan struct{}, 1)
			a.HandleKind("echo", func(ctx context.Context, _ json.RawMessage, progress func(string)) (any, error) {
				ran <- struct{}{}
				<-ctx.Done()
				return nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
			})
			if err := a.Start(); err != nil {
				t.Fatal(err)
			}
			j, err := a.EnqueueInput(context.Background(), "echo", map[string]string{"Text": "again"})
			if err != nil {
				t.Fatal(err)
			}
			<-ran
			a.Close()
			next := b.open(t, nil)
			if got, ok := next.Get(j.ID); !ok || got.Status != JobPending {
				t.Fatalf("after Close: %+v", got)
			}
			next.HandleKind("echo", echoKind)
			if err := next.Start(); err != nil {
				t.Fatal(err)
			}
			if got := waitDurable(t, next, j.ID); got.Status != JobDone || got.Progress != "echoing again" {
				t.Fatalf("run after Close: %+v", got)
			}
		})
	}
}

// Stores of different namespaces on one database never meet.
func TestDurableJobStoreNamespaces(t *testing.T) {
	for _, b := range durableBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			if _, err := NewDurableJobStoreSQLite(context.Background(), filepath.Join(t.TempDir(), "x.sqlite"),
				&DurableJobStoreOptions{Namespace: "Not OK"}); err == nil {
				t.Fatal("an invalid namespace was accepted")
			}
			a := b.open(t, &DurableJobStoreOptions{Namespace: "app-a"})
			other := b.open(t, &DurableJobStoreOptions{Namespace: "app-b"})
			a.HandleKind("echo", echoKind)
			var wrong atomic.Int32
			other.HandleKind("echo", func(context.Context, json.RawMessage, func(string)) (any, error) {
				wrong.Add(1)
				return nil, errors.New("ran another namespace's job")
			})
			if err := other.Start(); err != nil {
				t.Fatal(err)
			}
			j, err := a.EnqueueInput(context.Background(), "echo", map[string]string{"Text": "mine"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := other.Get(j.ID); ok || len(other.List(0)) != 0 {
				t.Fatalf("namespace app-b sees app-a's job %s", j.ID)
			}
			if err := a.Start(); err != nil {
				t.Fatal(err)
			}
			if got := waitDurable(t, a, j.ID); got.Status != JobDone {
				t.Fatalf("app-a's job: %+v", got)
			}
			if wrong.Load() != 0 {
				t.Fatal("namespace app-b ran app-a's job")
			}
			if len(a.List(0)) != 1 {
				t.Fatalf("app-a lists %d jobs", len(a.List(0)))
			}
		})
	}
}
