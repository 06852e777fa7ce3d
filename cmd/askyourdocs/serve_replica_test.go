package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// cliTestStandby starts a hot standby of the test cluster of its own
// (scripts/pg-native standby; removed when the test ends) and returns its
// DSN and a function running `standby-ctl stop|start` on it. Without the
// cluster of scripts/pg-native start the test is skipped, or fails under
// ASKYOURDOCS_REQUIRE_REPLICA=1 (scripts/test).
func cliTestStandby(t *testing.T) (string, func(action string)) {
	t.Helper()
	cliTestDSN(t)
	if os.Getenv("PGNATIVE_DIR") == "" || os.Getenv("ASKYOURDOCS_TEST_READ_DSN") == "" {
		const msg = "no read replica: run scripts/test, or eval \"$(scripts/pg-native start)\" and \"$(scripts/pg-native standby)\""
		if os.Getenv("ASKYOURDOCS_REQUIRE_REPLICA") == "1" {
			t.Fatal(msg + " (ASKYOURDOCS_REQUIRE_REPLICA=1 forbids skipping)")
		}
		t.Skip(msg)
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "pg-native")
	out, err := exec.Command(script, "standby").Output()
	if err != nil {
		t.Fatalf("scripts/pg-native standby: %v", err)
	}
	var dsn, dir string
	for line := range strings.SplitSeq(string(out), "\n") {
		k, v, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		switch v = strings.Trim(v, "'"); k {
		case "ASKYOURDOCS_TEST_READ_DSN":
			dsn = v
		case "PGNATIVE_STANDBY_DIR":
			dir = v
		}
	}
	if dsn == "" || dir == "" {
		t.Fatalf("scripts/pg-native standby printed %q", out)
	}
	t.Cleanup(func() { exec.Command(script, "standby-ctl", "remove", dir).Run() })
	return dsn, func(action string) {
		t.Helper()
		if out, err := exec.Command(script, "standby-ctl", action, dir).CombinedOutput(); err != nil {
			t.Fatalf("standby-ctl %s: %v\n%s", action, err, out)
		}
	}
}

// sameDB returns server's DSN on the database dsn names.
func sameDB(t *testing.T, server, dsn string) string {
	t.Helper()
	s, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	d, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Path = d.Path
	return s.String()
}

// waitReplayed waits until replica has replayed primary's WAL up to its
// current position (a condition polled every 10 ms, at most 30 s).
func waitReplayed(t testing.TB, primary, replica string) {
	t.Helper()
	ctx := context.Background()
	pc, err := pgx.Connect(ctx, primary)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	var lsn string
	if err := pc.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rc, err := pgx.Connect(ctx, replica)
		if err == nil {
			var done bool
			err = rc.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&done)
			rc.Close(ctx)
			if err == nil && done {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not replay up to %s within 30s: %v", lsn, err)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
}

// readyReplica returns the readReplica field of p's /readyz.
func readyReplica(t *testing.T, p *serveProc) string {
	t.Helper()
	resp, err := procClient.Get(p.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/readyz: %d %v", resp.StatusCode, err)
	}
	return body["readReplica"]
}

// metricValue returns the value of an unlabelled metric in p's /metrics.
func metricValue(t *testing.T, p *serveProc, name string) string {
	t.Helper()
	resp, err := procClient.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// Two serve processes with --pg and --pg-read: their asks read from the
// standby (its pg_stat_activity shows their searches); the standby
// stopped as a crash in the middle of 500 asks: every ask is answered,
// from the primary, and /readyz, /metrics and the log say so; started
// again, reads return to it.
func TestServeReadReplica(t *testing.T) {
	standby, ctl := cliTestStandby(t)
	primary := cliTestFreshDB(t, cliTestDSN(t))
	read := sameDB(t, standby, primary) + "&application_name=ayd_serve_read"
	waitReplayed(t, primary, read) // the fresh database exists there
	uploads := t.TempDir()
	a := startServeProc(t, "--data", t.TempDir(), "--pg", primary, "--pg-read", read, "--uploads", uploads)
	b := startServeProc(t, "--data", t.TempDir(), "--pg", primary, "--pg-read", read, "--uploads", uploads)
	indexOnce(t, a)
	waitReplayed(t, primary, read)
	servers := []*serveProc{a, b}
	for _, p := range servers {
		if got := readyReplica(t, p); got != "in use" {
			t.Fatalf("/readyz readReplica = %q before the asks", got)
		}
		if got := metricValue(t, p, "askyourdocs_read_replica_in_use"); got != "1" {
			t.Fatalf("askyourdocs_read_replica_in_use = %q", got)
		}
	}

	const n = 500
	var answered, failed atomic.Int64
	stopped := make(chan struct{})
	var once sync.Once
	work := make(chan int)
	var wg sync.WaitGroup
	c := &http.Client{Timeout: time.Minute}
	for range 8 {
		wg.Go(func() {
			for i := range work {
				for {
					status, _, err := procAsk(c, servers[i%2], fmt.Sprintf("What does paragraph %d say about the tides?", i))
					if status == 503 && err == nil {
						time.Sleep(askRetryAfter * time.Second) // the client honours Retry-After
						continue
					}
					if err != nil || status != 200 {
						failed.Add(1)
						t.Errorf("ask %d: %d %v", i, status, err)
					}
					break
				}
				if answered.Add(1) == n/4 {
					once.Do(func() { go func() { ctl("stop"); close(stopped) }() })
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	<-stopped
	if failed.Load() != 0 {
		t.Fatalf("%d of %d asks failed while the standby went down", failed.Load(), n)
	}
	for _, p := range servers {
		if got := readyReplica(t, p); !strings.HasPrefix(got, "not in use") {
			t.Errorf("/readyz readReplica = %q with the standby down", got)
		}
		if got := metricValue(t, p, "askyourdocs_read_replica_in_use"); got != "0" {
			t.Errorf("askyourdocs_read_replica_in_use = %q with the standby down", got)
		}
		if !strings.Contains(p.log(), "searches read from the primary, not the read replica") {
			t.Errorf("no warn line:\n%s", p.log())
		}
	}

	ctl("start")
	deadline := time.Now().Add(time.Minute)
	for _, p := range servers {
		for readyReplica(t, p) != "in use" {
			if time.Now().After(deadline) {
				t.Fatalf("reads did not return to the standby within a minute:\n%s", p.log())
			}
			time.Sleep(50 * time.Millisecond) // polling /readyz
		}
		if status, _, err := procAsk(c, p, "What does paragraph 3 say about the tides?"); err != nil || status != 200 {
			t.Fatalf("ask after the standby's return: %d %v", status, err)
		}
	}
	// The searches ran on the standby: its backends of the read pools
	// last ran queries on the index's table.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, sameDB(t, standby, primary)) // another application_name
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var searches int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ayd_serve_read'
		AND query ILIKE '%askyourdocs_%'`).Scan(&searches); err != nil {
		t.Fatal(err)
	}
	if searches == 0 {
		t.Error("no connection of the read pools on the standby ran a search")
	}
}

// search --pg-read reads through the replica what index --pg wrote; a
// replica without --pg is a usage error; a replica that does not answer
// costs a warning, not the search.
func TestSearchPgRead(t *testing.T) {
	replica := os.Getenv("ASKYOURDOCS_TEST_READ_DSN")
	if replica == "" {
		cliTestStandby(t) // skips or fails as it should
	}
	primary := cliTestFreshDB(t, cliTestDSN(t))
	read := sameDB(t, replica, primary)
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "ferry.md"), []byte("# Ferry\n\nThe night ferry to the island leaves at 23:40 from pier four.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, work, nil, "index", "--pg", primary, docs); r.code != 0 {
		t.Fatalf("index: %s", r)
	}
	waitReplayed(t, primary, read)
	r := runCLI(t, work, nil, "search", "--pg", primary, "--pg-read", read, "--json", "night ferry pier")
	if r.code != 0 || !strings.Contains(r.stdout, "ferry.md") || strings.Contains(r.stderr, "warning") {
		t.Fatalf("search through the replica: %s", r)
	}
	// doctor shows both servers and the replica's replay.
	r = runCLI(t, work, nil, "doctor", "--pg", primary, "--pg-read", read, "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r)
	}
	var checks []string
	for _, c := range rep.Checks {
		if c.Name == "postgres" || c.Name == "replica" {
			checks = append(checks, c.Name+" "+c.Status+": "+c.Detail)
		}
	}
	if len(checks) != 2 || !strings.HasPrefix(checks[0], "postgres ok") || !strings.HasPrefix(checks[1], "replica ok") || !strings.Contains(checks[1], "standby at") {
		t.Fatalf("doctor's servers: %q", checks)
	}
	// A replica DSN naming the primary is no standby.
	r = runCLI(t, work, nil, "doctor", "--pg", primary, "--pg-read", primary)
	if !strings.Contains(r.stdout, "is not a standby") {
		t.Fatalf("doctor with --pg-read on the primary:\n%s", r)
	}
	if r := runCLI(t, work, nil, "search", "--pg-read", read, "night ferry"); r.code != 2 || !strings.Contains(r.stderr, "give --pg") {
		t.Fatalf("--pg-read without --pg: %s", r)
	}
	down := "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"
	r = runCLI(t, work, nil, "search", "--pg", primary, "--pg-read", down, "--json", "night ferry pier")
	if r.code != 0 || !strings.Contains(r.stdout, "ferry.md") || !strings.Contains(r.stderr, "searches read from the primary") {
		t.Fatalf("search with the replica down: %s", r)
	}
}
