package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sourceFiles returns the base names of the files indexed in ts's store.
func sourceFiles(t *testing.T, ts *testServe) []string {
	t.Helper()
	srcs, err := ts.s.b.store.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range srcs {
		out = append(out, filepath.Base(s.URL))
	}
	slices.Sort(out)
	return out
}

// TestServeWatchBatchesAreJobs: serve --watch indexes a real folder by
// jobs: the first sync and each batch of changes is an "index" job in the
// durable queue (listed by /api/jobs, the batch with the paths that
// changed), a file written is indexed, a file deleted leaves the index,
// and /api/watch shows the folder watched with its last sync.
func TestServeWatchBatchesAreJobs(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crane.md"), []byte("# Crane\n\nThe crane lifts four tonnes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := newServeWatch(context.Background(), ts.s, []string{dir}, "", time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.synced = make(chan string, 10)
	ts.s.watch = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func(what string) {
		t.Helper()
		select {
		case <-w.synced:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no batch within 30 s", what)
		}
	}
	next("the first sync")
	if got := sourceFiles(t, ts); !slices.Equal(got, []string{"crane.md"}) {
		t.Fatalf("after the first sync: %v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "fuel.md"), []byte("# Fuel\n\nDiesel until six.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for !slices.Contains(sourceFiles(t, ts), "fuel.md") {
		next("fuel.md")
	}
	if err := os.Remove(filepath.Join(dir, "crane.md")); err != nil {
		t.Fatal(err)
	}
	for slices.Contains(sourceFiles(t, ts), "crane.md") {
		next("the delete")
	}

	resp, body := ts.request(t, ts.Client(), "GET", "/api/jobs", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/jobs: %d %s", resp.StatusCode, body)
	}
	var jobs []struct {
		Kind   string `json:"kind"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &jobs); err != nil {
		t.Fatalf("/api/jobs: %v\n%s", err, body)
	}
	doneJobs := 0
	for _, j := range jobs {
		if j.Kind == "index" && j.Status == "done" {
			doneJobs++
		}
	}
	if doneJobs < 3 {
		t.Errorf("/api/jobs lists %d done index jobs, want one per batch (>= 3):\n%s", doneJobs, body)
	}
	resp, body = ts.request(t, ts.Client(), "GET", "/api/watch", "", nil, nil)
	var ws struct{ Folders []watchState }
	if err := json.Unmarshal([]byte(body), &ws); err != nil || resp.StatusCode != 200 || len(ws.Folders) != 1 ||
		!ws.Folders[0].Watching || ws.Folders[0].LastSync.IsZero() || ws.Folders[0].Folder != dir {
		t.Errorf("/api/watch: %d %s (%v)", resp.StatusCode, body, err)
	}
}

// TestServeWatchLease: on one PostgreSQL database, one serve process
// watches a folder: the second sees the first as the holder, takes the
// lease over once it has expired (the first died), and the first, back,
// finds it taken.
func TestServeWatchLease(t *testing.T) {
	dsn := cliTestDSN(t)
	ts := newTestServe(t, nil, "", 0)
	name := "lease-" + filepath.Base(t.TempDir())
	ts.s.opts.jobNamespace = jobNamespace(name)
	dir := t.TempDir()
	ctx := context.Background()
	a, err := newServeWatch(ctx, ts.s, []string{dir}, dsn, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.pool.Close()
	b, err := newServeWatch(ctx, ts.s, []string{dir}, dsn, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.pool.Close()
	if _, ok, err := a.takeLease(ctx, dir); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	if holder, ok, err := b.takeLease(ctx, dir); ok || err != nil || holder != a.holder {
		t.Fatalf("b while a holds it: ok %v, holder %q, %v", ok, holder, err)
	}
	// doctor says who watches what.
	var out, errb bytes.Buffer
	run(ctx, []string{"--pg", dsn, "--name", name, "--json", "doctor"}, nil, &out, &errb)
	if !strings.Contains(out.String(), `"name": "watched"`) || !strings.Contains(out.String(), dir+" (by "+a.holder+")") {
		t.Errorf("doctor does not name the watched folder:\n%s\n%s", out.String(), errb.String())
	}
	if _, ok, _ := a.takeLease(ctx, dir); !ok {
		t.Fatal("a could not renew its lease")
	}
	// a dies: its lease runs out without renewal.
	if _, err := a.pool.Exec(ctx, `UPDATE `+watchLeaseTable+` SET expires_at = now() - interval '1 second' WHERE folder = $1`, dir); err != nil {
		t.Fatal(err)
	}
	if holder, ok, err := b.takeLease(ctx, dir); !ok || err != nil || holder != b.holder {
		t.Fatalf("b after a's lease expired: ok %v, holder %q, %v", ok, holder, err)
	}
	if holder, ok, _ := a.takeLease(ctx, dir); ok || holder != b.holder {
		t.Errorf("a back: ok %v, holder %q, want b's", ok, holder)
	}
	b.releaseLease(dir)
	if _, ok, _ := a.takeLease(ctx, dir); !ok {
		t.Error("a could not take the lease b released")
	}
}

// watchStates reads p's /api/watch.
func (p *serveProc) watchStates(t *testing.T) []watchState {
	t.Helper()
	resp, err := procClient.Get(p.url + "/api/watch")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var out struct{ Folders []watchState }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Folders
}

// awaitWatch polls p's /api/watch until cond holds for its one folder,
// within a minute.
func awaitWatch(t *testing.T, p *serveProc, what string, cond func(watchState) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if st := p.watchStates(t); len(st) == 1 && cond(st[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute: %+v\n%s", what, p.watchStates(t), p.log())
		}
		<-tick.C
	}
}

// awaitRunningIndexJob polls p's /api/jobs until an index job other than
// those in skip runs and reported progress, and returns its ID.
func awaitRunningIndexJob(t *testing.T, p *serveProc, skip map[string]bool) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := procClient.Get(p.url + "/api/jobs")
		if err == nil {
			var jobs []jobJSON
			err = json.NewDecoder(resp.Body).Decode(&jobs)
			resp.Body.Close()
			for _, j := range jobs {
				if err == nil && j.Kind == "index" && !skip[j.ID] && j.Status == "running" && len(j.ProgressLog) > 0 {
					return j.ID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no index job running within a minute\n%s", p.log())
		}
		<-tick.C
	}
}

// TestServeWatchKilledPG: serve processes on one PostgreSQL database
// watch one folder. A holds the lease and is killed (SIGKILL) while its
// batch job indexes 40 new files; B, started then (so that the job ran on
// A alone), runs the job again to its end and takes the watch over once
// A's lease has expired, and every file ends in the index. A restarted A
// then sees B as the folder's watcher.
func TestServeWatchKilledPG(t *testing.T) {
	dsn := cliTestFreshDB(t, cliTestDSN(t))
	dir := t.TempDir()
	args := func(data string) []string {
		return []string{"--data", data, "--pg", dsn, "--watch", dir, "--job-dead-after", "3s"}
	}
	dataA := t.TempDir()
	a := startServeProc(t, args(dataA)...)
	awaitWatch(t, a, "A watches", func(s watchState) bool { return s.Watching && !s.LastSync.IsZero() })

	files := uploadBatch("watch", 40)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := map[string]bool{}
	resp, err := procClient.Get(a.url + "/api/jobs")
	if err != nil {
		t.Fatal(err)
	}
	var before []jobJSON
	json.NewDecoder(resp.Body).Decode(&before)
	resp.Body.Close()
	for _, j := range before {
		if j.Status == "done" {
			first[j.ID] = true // the first sync, done before the files came
		}
	}
	id := awaitRunningIndexJob(t, a, first)
	a.kill()
	killed := time.Now()
	b := startServeProc(t, args(t.TempDir())...)
	got := awaitFinished(t, b, []string{id}, 60*time.Second)
	if got[id].Status != "done" {
		t.Fatalf("the batch of the killed process: %+v\n%s", got[id], b.log())
	}
	checkRunAgain(t, got[id])
	awaitWatch(t, b, "B takes the watch over", func(s watchState) bool { return s.Watching })
	srcs := strings.Join(b.sources(t), "\n")
	for name := range files {
		if !strings.Contains(srcs, "/"+name) {
			t.Errorf("%s is not indexed", name)
		}
	}
	t.Logf("the batch finished %s after the kill", time.Since(killed).Round(time.Millisecond))
	a = startServeProc(t, args(dataA)...)
	awaitWatch(t, a, "a restarted A sees B watching", func(s watchState) bool { return !s.Watching && s.Holder != "" })
}
