package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// pgTestReadDSN returns the DSN of a hot standby of pgTestDSN's server
// (ASKYOURDOCS_TEST_READ_DSN, which scripts/test exports after
// `scripts/pg-native standby`); without one the test is skipped, or fails
// under ASKYOURDOCS_REQUIRE_REPLICA=1 (which scripts/test sets when it
// started the standby).
func pgTestReadDSN(t testing.TB) string {
	t.Helper()
	pgTestDSN(t)
	if dsn := os.Getenv("ASKYOURDOCS_TEST_READ_DSN"); dsn != "" {
		return dsn
	}
	const msg = "no read replica: set ASKYOURDOCS_TEST_READ_DSN (eval \"$(scripts/pg-native standby)\") or run scripts/test"
	if os.Getenv("ASKYOURDOCS_REQUIRE_REPLICA") == "1" {
		t.Fatal(msg + " (ASKYOURDOCS_REQUIRE_REPLICA=1 forbids skipping)")
	}
	t.Skip(msg)
	return ""
}

// pgTestOwnStandby starts a standby of its own for a test that stops or
// pauses it (scripts/pg-native standby), removed when the test ends, and
// returns its DSN and a function running `standby-ctl stop|start`.
func pgTestOwnStandby(t *testing.T) (dsn string, ctl func(action string)) {
	t.Helper()
	pgTestReadDSN(t)
	if os.Getenv("PGNATIVE_DIR") == "" {
		t.Fatal("this test starts a standby of its own and needs the cluster of scripts/pg-native start (PGNATIVE_DIR)")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "scripts", "pg-native")
	out, err := exec.Command(script, "standby").Output()
	if err != nil {
		t.Fatalf("scripts/pg-native standby: %v", err)
	}
	var dir string
	for line := range strings.SplitSeq(string(out), "\n") {
		k, v, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		v = strings.Trim(v, "'")
		switch k {
		case "ASKYOURDOCS_TEST_READ_DSN":
			dsn = v
		case "PGNATIVE_STANDBY_DIR":
			dir = v
		}
	}
	if dsn == "" || dir == "" {
		t.Fatalf("scripts/pg-native standby printed %q", out)
	}
	ctl = func(action string) {
		t.Helper()
		if out, err := exec.Command(script, "standby-ctl", action, dir).CombinedOutput(); err != nil {
			t.Fatalf("standby-ctl %s: %v\n%s", action, err, out)
		}
	}
	t.Cleanup(func() { exec.Command(script, "standby-ctl", "remove", dir).Run() })
	return dsn, ctl
}

// pgTestAppName returns dsn with an application_name of its own, to find
// the connections of a pool in pg_stat_activity.
func pgTestAppName(dsn, prefix string) (string, string) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "application_name=" + name, name
}

// pgTestWaitReplayed waits until the server at replica has replayed the
// primary's WAL up to its current position (a condition polled every
// 10 ms, for at most 30 s).
func pgTestWaitReplayed(t *testing.T, primary, replica string) {
	t.Helper()
	ctx := context.Background()
	var lsn string
	if err := pgTestQueryRow(t, primary, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, replica)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var done bool
		if err := conn.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not replay up to %s within 30s", lsn)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for one
	}
}

// pgTestQueryRow runs one query on a connection of its own.
func pgTestQueryRow(t *testing.T, dsn, sql string, args ...any) pgx.Row {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn.QueryRow(ctx, sql, args...)
}

// pgTestActivity counts the backends of application app on the server at
// dsn whose last query mentions table.
func pgTestActivity(t *testing.T, dsn, app, table string) int {
	t.Helper()
	var n int
	if err := pgTestQueryRow(t, dsn, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND position($2 in query) > 0`,
		app, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A store with a read replica: what is written on the primary is found
// through the replica once replayed, and the reads ran there (its
// pg_stat_activity shows them; the primary's connections ran none).
func TestPgvecReadReplica(t *testing.T) {
	replica := pgTestReadDSN(t)
	primary := pgTestDSN(t)
	primaryApp, wname := pgTestAppName(primary, "ayd_w_")
	replicaApp, rname := pgTestAppName(replica, "ayd_r_")
	var verdicts []bool
	var mu sync.Mutex
	s := pgTestStoreWithDSN(t, primaryApp, newTestEmbedder(16), 16, &PgvecOptions{ReadDSN: replicaApp,
		OnReplicaChange: func(ok bool, _ string) { mu.Lock(); verdicts = append(verdicts, ok); mu.Unlock() }})
	if ok, reason := s.replicaStatus(); !ok {
		t.Fatalf("replica not used: %s", reason)
	}
	ctx := context.Background()
	doc := ai.DocumentFromText("The lighthouse keeper logs every passing tanker.", map[string]any{MetaURL: "https://x.test/lighthouse"})
	if err := s.Index(ctx, []*ai.Document{doc}); err != nil {
		t.Fatal(err)
	}
	pgTestWaitReplayed(t, primary, replica)
	hits, err := s.SearchText(ctx, "lighthouse tanker", 5, nil)
	if err != nil || len(hits) != 1 {
		// Seen once in CI (-race, a loaded machine), not reproduced: say
		// what each server holds, so that a next failure names its cause.
		t.Fatalf("SearchText through the replica: %d hits, %v; %s", len(hits), err, pgTestReplicaState(t, s, primary, replica))
	}
	if hits, err := s.SearchVector(ctx, "lighthouse keeper tanker", 5, nil); err != nil || len(hits) != 1 {
		t.Fatalf("SearchVector through the replica: %d hits, %v", len(hits), err)
	}
	if srcs, err := s.Sources(ctx); err != nil || len(srcs) != 1 {
		t.Fatalf("Sources through the replica: %v, %v", srcs, err)
	}
	if n := pgTestActivity(t, replica, rname, s.Table()); n == 0 {
		t.Error("no connection of the read pool on the replica ran a query on the store's table")
	}
	if n := pgTestActivity(t, primary, wname, "<=>"); n != 0 {
		t.Errorf("%d connections of the primary pool ran a search", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(verdicts) != 1 || !verdicts[0] {
		t.Errorf("OnReplicaChange calls %v, want one: usable", verdicts)
	}
}

// pgTestReplicaState describes s's rows, postings and text search
// configuration on the primary and the replica, and whether s reads from
// the replica (for a failure message).
func pgTestReplicaState(t *testing.T, s *PgvecStore, primary, replica string) string {
	t.Helper()
	var out []string
	for _, srv := range []struct{ name, dsn string }{{"primary", primary}, {"replica", replica}} {
		var chunks, postings int
		var config string
		var auto bool
		err := pgTestQueryRow(t, srv.dsn, `SELECT (SELECT count(*) FROM `+pgvecIdent(s.names.table)+`), (SELECT count(*) FROM `+pgvecIdent(s.names.kw)+`),
			ts_config, ts_auto FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&chunks, &postings, &config, &auto)
		out = append(out, fmt.Sprintf("%s: %d chunks, %d postings, %s (auto %v), err %v", srv.name, chunks, postings, config, auto, err))
	}
	ok, reason := s.replicaStatus()
	out = append(out, fmt.Sprintf("store: language %q, reads on the replica %v (%s)", s.curLang().name, ok, reason))
	return strings.Join(out, "; ")
}

// pgTestStoreWithDSN is pgTestStoreWith on dsn.
func pgTestStoreWithDSN(t *testing.T, dsn string, emb ai.Embedder, dim int, opts *PgvecOptions) *PgvecStore {
	t.Helper()
	name := pgTestStoreName(t)
	pgTestDropStore(t, pgTestDSN(t), name)
	s, err := NewPgvecStoreWithOptions(context.Background(), nil, name, emb, dsn, dim, opts)
	if err != nil {
		t.Fatalf("NewPgvecStoreWithOptions(%q): %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The standby stopped (as a crash) while searches run: every search is
// answered from the primary, none fails; reads move to the primary, and
// back once the standby is up again. A paused replay past MaxReplicaLag
// moves them too.
func TestPgvecReplicaFailover(t *testing.T) {
	replica, ctl := pgTestOwnStandby(t)
	primary := pgTestDSN(t)
	changes := make(chan bool, 16)
	next := func() bool {
		t.Helper()
		select {
		case ok := <-changes:
			return ok
		case <-time.After(time.Minute):
			t.Fatal("no OnReplicaChange call within a minute")
			return false
		}
	}
	s := pgTestStoreWithDSN(t, primary, newTestEmbedder(16), 16, &PgvecOptions{ReadDSN: replica, MaxReplicaLag: time.Second,
		OnReplicaChange: func(ok bool, _ string) { changes <- ok }})
	if ok := next(); !ok {
		_, reason := s.replicaStatus()
		t.Fatalf("first verdict: not usable (%s)", reason)
	}
	ctx := context.Background()
	var docs []*ai.Document
	for i := range 50 {
		docs = append(docs, ai.DocumentFromText("Harbour note "+string(rune('a'+i%26))+" about ferries and tides", map[string]any{MetaURL: "https://x.test/n" + string(rune('a'+i%26))}))
	}
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	pgTestWaitReplayed(t, primary, replica)

	// 4 workers search until told to stop; the standby goes down meanwhile.
	var failed, done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.SearchText(ctx, "ferries tides", 5, nil); err != nil {
					failed.Add(1)
					t.Errorf("search failed: %v", err)
				}
				if _, err := s.SearchVector(ctx, "harbour ferries", 5, nil); err != nil {
					failed.Add(1)
					t.Errorf("vector search failed: %v", err)
				}
				done.Add(2)
			}
		})
	}
	for done.Load() < 100 {
		runtime.Gosched()
	}
	ctl("stop")
	if ok := next(); ok {
		t.Fatal("the standby stopped, yet reads stayed on it")
	}
	mark := done.Load()
	for done.Load() < mark+100 {
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d searches failed while the standby went down", failed.Load(), done.Load())
	}
	if ok, reason := s.replicaStatus(); ok || reason == "" {
		t.Fatalf("status while down: %v %q", ok, reason)
	}

	ctl("start")
	if ok := next(); !ok {
		t.Fatal("a second not-usable verdict instead of the replica's return")
	}
	if _, err := s.SearchText(ctx, "ferries tides", 5, nil); err != nil {
		t.Fatal(err)
	}

	// Replay paused on the standby, a write on the primary: once the lag
	// passes MaxReplicaLag (1 s), reads move to the primary.
	conn, err := pgx.Connect(ctx, replica)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	fresh := ai.DocumentFromText("A new note about the pilot boat.", map[string]any{MetaURL: "https://x.test/pilot"})
	if err := s.Index(ctx, []*ai.Document{fresh}); err != nil {
		t.Fatal(err)
	}
	if ok := next(); ok {
		t.Fatal("usable again instead of lagging")
	}
	if _, reason := s.replicaStatus(); !strings.Contains(reason, "replay lag") {
		t.Fatalf("reason %q, want the replay lag", reason)
	}
	// Reads on the primary see the new chunk at once.
	if hits, err := s.SearchText(ctx, "pilot boat", 5, nil); err != nil || len(hits) != 1 {
		t.Fatalf("search while the replica lags: %d hits, %v", len(hits), err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_wal_replay_resume()`); err != nil {
		t.Fatal(err)
	}
	if ok := next(); !ok {
		t.Fatal("reads did not return after the replay resumed")
	}
}
