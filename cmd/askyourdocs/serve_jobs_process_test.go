package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run the built binary: serve processes killed with SIGKILL
// while they index uploads, on one PostgreSQL database or one --data
// directory. Every upload serve accepted (202 with a job ID) must end
// indexed (done, its files among the sources) or failed with a reason.

// serveProc is one running `askyourdocs serve`.
type serveProc struct {
	url  string
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

var serveAddrRE = regexp.MustCompile(`askyourdocs serve: (http://127\.0\.0\.1:\d+)/`)

// startServeProc starts serve with args (after --addr) and waits up to a
// minute for its address line. It fails the test if serve exits first.
func startServeProc(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startServeProcEnv(t, nil, args...)
}

// startServeProcEnv is startServeProc with env (KEY=VALUE) added to the
// process's environment.
func startServeProcEnv(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(buildCLI(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = cliEnv(env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			p.mu.Unlock()
			if m := serveAddrRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	select {
	case p.url = <-addr:
		return p
	case <-p.done:
		t.Fatalf("serve %v exited before listening:\n%s", args, p.log())
	case <-time.After(time.Minute):
		t.Fatalf("serve %v did not listen within a minute:\n%s", args, p.log())
	}
	return nil
}

func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *serveProc) kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	<-p.done
}

// serveJob is the job JSON of GET /api/jobs/{id}.
type serveJob struct {
	ID            string          `json:"id"`
	Status        string          `json:"status"`
	Error         string          `json:"error"`
	ProgressCount int             `json:"progressCount"`
	ProgressLog   []string        `json:"progressLog"`
	Result        json.RawMessage `json:"result"`
}

var procClient = &http.Client{Timeout: 10 * time.Second}

// upload posts files to /index/upload and returns the job ID of a 202.
func (p *serveProc) upload(t *testing.T, files map[string]string) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for name, text := range files {
		w, err := mw.CreateFormFile("files", name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, text)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", p.url+"/index/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-Requested-With", "test")
	resp, err := procClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("upload: %s %s", resp.Status, data)
	}
	var out struct{ JobID string }
	if err := json.Unmarshal(data, &out); err != nil || out.JobID == "" {
		return "", fmt.Errorf("upload answer %s: %v", data, err)
	}
	return out.JobID, nil
}

// job reads one job; ok is false when the server does not answer 200.
func (p *serveProc) job(id string) (serveJob, bool) {
	resp, err := procClient.Get(p.url + "/api/jobs/" + id)
	if err != nil {
		return serveJob{}, false
	}
	defer resp.Body.Close()
	var j serveJob
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&j) != nil {
		return serveJob{}, false
	}
	return j, true
}

// sources returns the URLs of the indexed sources.
func (p *serveProc) sources(t *testing.T) []string {
	t.Helper()
	resp, err := procClient.Get(p.url + "/api/sources")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []struct{ URL string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, r := range out {
		urls = append(urls, r.URL)
	}
	return urls
}

// awaitFinished polls p until every job in ids is finished (done, or
// failed or cancelled with a reason), within d; it returns their states.
func awaitFinished(t *testing.T, p *serveProc, ids []string, d time.Duration) map[string]serveJob {
	t.Helper()
	deadline := time.Now().Add(d)
	out := map[string]serveJob{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		open := 0
		for _, id := range ids {
			if j, ok := out[id]; ok && j.Status != "pending" && j.Status != "running" {
				continue
			}
			j, ok := p.job(id)
			if !ok {
				open++
				continue
			}
			out[id] = j
			if j.Status == "pending" || j.Status == "running" {
				open++
			}
		}
		if open == 0 {
			return out
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, id := range ids {
				fmt.Fprintf(&b, "  job %s: %+v\n", id, out[id])
			}
			t.Fatalf("%d of %d accepted uploads not finished within %s:\n%s--- serve log:\n%s", open, len(ids), d, b.String(), p.log())
		}
		<-tick.C
	}
}

// checkOutcomes fails the test for a job neither done with its files
// among the sources nor failed with a reason.
func checkOutcomes(t *testing.T, p *serveProc, jobs map[string]serveJob, files map[string][]string) (done, failed int) {
	t.Helper()
	srcs := strings.Join(p.sources(t), "\n")
	for id, j := range jobs {
		switch {
		case j.Status == "done":
			done++
			for _, f := range files[id] {
				if !strings.Contains(srcs, "/"+f) {
					t.Errorf("job %s is done but %s is not among the sources", id, f)
				}
			}
		case (j.Status == "failed" || j.Status == "cancelled") && strings.TrimSpace(j.Error) != "":
			failed++
		default:
			t.Errorf("job %s ended %q without a reason: %+v", id, j.Status, j)
		}
	}
	return done, failed
}

// uploadBatch returns files of a unique upload: n Markdown files of a few
// paragraphs each.
func uploadBatch(tag string, n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Notes %s %d\n\n", tag, i)
		for k := range 40 {
			fmt.Fprintf(&b, "Paragraph %d of file %d in upload %s talks about kayaks, tides, harbour %d and weather.\n\n", k, i, tag, k*i)
		}
		files[fmt.Sprintf("notes-%s-%d.md", tag, i)] = b.String()
	}
	return files
}

func fileNames(files map[string]string) []string {
	var out []string
	for n := range files {
		out = append(out, n)
	}
	return out
}

// awaitRunning polls p until job id is running and reported a progress
// message, within a minute.
func awaitRunning(t *testing.T, p *serveProc, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		j, ok := p.job(id)
		if ok && j.Status == "running" && j.ProgressCount > 0 {
			return
		}
		if ok && j.Status != "pending" && j.Status != "running" {
			t.Fatalf("job %s finished before the kill: %+v", id, j)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not running within a minute: %+v\n%s", id, j, p.log())
		}
		<-tick.C
	}
}

// checkRunAgain fails the test unless the job's progress shows a second
// attempt, the one after the kill.
func checkRunAgain(t *testing.T, j serveJob) {
	t.Helper()
	if !strings.Contains(strings.Join(j.ProgressLog, "\n"), "attempt 2 of") {
		t.Errorf("job %s shows no second attempt after the kill: %q", j.ID, j.ProgressLog)
	}
}

// TestServeJobsTwoProcessesPG: two serve processes on one PostgreSQL
// database and one upload directory. A accepts an upload and is killed
// while indexing it; B, started then, indexes it within 60 s, and A,
// restarted, sees the outcome. Then a job accepted by B runs on A.
func TestServeJobsTwoProcessesPG(t *testing.T) {
	dsn := cliTestFreshDB(t, cliTestDSN(t))
	uploads := t.TempDir()
	args := func(data string) []string {
		return []string{"--data", data, "--pg", dsn, "--uploads", uploads, "--job-dead-after", "3s"}
	}
	dataA, dataB := t.TempDir(), t.TempDir()
	a := startServeProc(t, args(dataA)...)
	files := uploadBatch("pg", 40)
	id, err := a.upload(t, files)
	if err != nil {
		t.Fatal(err)
	}
	awaitRunning(t, a, id)
	a.kill()
	killed := time.Now()
	b := startServeProc(t, args(dataB)...)
	got := awaitFinished(t, b, []string{id}, 60*time.Second-time.Since(killed))
	done, _ := checkOutcomes(t, b, got, map[string][]string{id: fileNames(files)})
	if done != 1 {
		t.Errorf("the upload accepted by the killed process: %+v", got[id])
	}
	checkRunAgain(t, got[id])
	t.Logf("job %s finished %s after the kill", id, time.Since(killed).Round(time.Millisecond))
	a = startServeProc(t, args(dataA)...)
	if j, ok := a.job(id); !ok || j.Status != got[id].Status {
		t.Errorf("restarted A sees job %s as %+v, B as %+v", id, j, got[id])
	}
	// A job accepted by B runs on A once B is gone.
	files2 := uploadBatch("pg2", 40)
	id2, err := b.upload(t, files2)
	if err != nil {
		t.Fatal(err)
	}
	b.kill()
	got = awaitFinished(t, a, []string{id2}, 60*time.Second)
	if done, _ := checkOutcomes(t, a, got, map[string][]string{id2: fileNames(files2)}); done != 1 {
		t.Errorf("the upload accepted by the killed B: %+v", got[id2])
	}
}

// TestServeJobsOneDataDir: two serve processes on one --data directory
// share its jobs through SQLite (River's riversqlite driver). A accepts an
// upload and is killed while indexing it; B, started then, or A after a
// restart indexes it within 60 s, and both see the outcome.
func TestServeJobsOneDataDir(t *testing.T) {
	data := t.TempDir()
	args := []string{"--data", data, "--job-dead-after", "3s"}
	a := startServeProc(t, args...)
	files := uploadBatch("lite", 40)
	id, err := a.upload(t, files)
	if err != nil {
		t.Fatal(err)
	}
	awaitRunning(t, a, id)
	// Kill A at once: starting B first gave A the time to finish the
	// upload before the kill (CI saw it, on a loaded machine).
	a.kill()
	killed := time.Now()
	b := startServeProc(t, args...)
	a = startServeProc(t, args...)
	got := awaitFinished(t, a, []string{id}, 60*time.Second-time.Since(killed))
	if done, _ := checkOutcomes(t, a, got, map[string][]string{id: fileNames(files)}); done != 1 {
		t.Errorf("the upload accepted by the killed process: %+v", got[id])
	}
	checkRunAgain(t, got[id])
	t.Logf("job %s finished %s after the kill", id, time.Since(killed).Round(time.Millisecond))
	if j, ok := b.job(id); !ok || j.Status != got[id].Status {
		t.Errorf("B sees job %s as %+v, A as %+v", id, j, got[id])
	}
}

// TestServeJobsRandomKills kills serve with SIGKILL 20 times while it
// indexes uploads (after a random number of progress messages of the
// newest job, 0 to 5), restarting it each time, on one --data directory
// and on PostgreSQL; then every accepted upload must end indexed or
// failed with a reason.
func TestServeJobsRandomKills(t *testing.T) {
	t.Run("data", func(t *testing.T) {
		randomKills(t, []string{"--data", t.TempDir(), "--job-dead-after", "1s"})
	})
	t.Run("pg", func(t *testing.T) {
		dsn := cliTestFreshDB(t, cliTestDSN(t))
		randomKills(t, []string{"--data", t.TempDir(), "--pg", dsn, "--job-dead-after", "1s"})
	})
}

func randomKills(t *testing.T, args []string) {
	const kills = 20
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 22))
	files := map[string][]string{}
	var ids []string
	p := startServeProc(t, args...)
	for k := range kills {
		var last string
		for u := range 1 + rng.IntN(3) {
			batch := uploadBatch(fmt.Sprintf("k%d-%d", k, u), 3+rng.IntN(4))
			id, err := p.upload(t, batch)
			if err != nil {
				t.Fatalf("kill %d: %v\n%s", k, err, p.log())
			}
			ids, files[id], last = append(ids, id), fileNames(batch), id
		}
		// Kill once the newest job reported `at` messages (or finished).
		at := rng.IntN(6)
		deadline := time.Now().Add(30 * time.Second)
		for tick := time.NewTicker(20 * time.Millisecond); time.Now().Before(deadline); <-tick.C {
			j, ok := p.job(last)
			if ok && (j.ProgressCount >= at || (j.Status != "pending" && j.Status != "running")) {
				tick.Stop()
				break
			}
		}
		p.kill()
		p = startServeProc(t, args...)
	}
	got := awaitFinished(t, p, ids, 3*time.Minute)
	done, failed := checkOutcomes(t, p, got, files)
	again := 0
	for _, j := range got {
		if j.Status != "done" {
			t.Logf("job %s %s: %s", j.ID, j.Status, j.Error)
		}
		if strings.Contains(strings.Join(j.ProgressLog, "\n"), "attempt 2 of") {
			again++
		}
	}
	t.Logf("seed %d: %d kills, %d accepted uploads: %d indexed, %d failed with a reason; %d interrupted mid-run and run again",
		seed, kills, len(ids), done, failed, again)
	if done == 0 || again == 0 {
		t.Errorf("no upload indexed (%d) or none interrupted mid-run (%d)", done, again)
	}
}
