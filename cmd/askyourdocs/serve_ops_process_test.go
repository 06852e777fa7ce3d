package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run the built binary (startServeProc): the feedback log
// shared by two serve processes, and serve's limits under load.

// procAsk posts one question to p; it returns the status and the answer's
// feedback ID.
func procAsk(c *http.Client, p *serveProc, q string) (int, string, error) {
	body, _ := json.Marshal(askInput{Question: q})
	req, _ := http.NewRequest("POST", p.url+"/api/ask", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Requested-With", "test")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, "", nil
	}
	var out askOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return resp.StatusCode, "", fmt.Errorf("answer %s: %w", data, err)
	}
	return resp.StatusCode, out.ID, nil
}

// procFeedback returns the IDs in p's feedback log (GET /api/feedback).
func procFeedback(t *testing.T, p *serveProc) map[string]feedbackEntry {
	t.Helper()
	resp, err := procClient.Get(p.url + "/api/feedback")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []feedbackEntry
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatal(err)
	}
	out := map[string]feedbackEntry{}
	for _, e := range entries {
		out[e.ID] = e
	}
	return out
}

// indexOnce uploads a small batch through p and waits for its job.
func indexOnce(t *testing.T, p *serveProc) {
	t.Helper()
	id, err := p.upload(t, uploadBatch("ops", 3))
	if err != nil {
		t.Fatal(err)
	}
	got := awaitFinished(t, p, []string{id}, time.Minute)
	if got[id].Status != "done" {
		t.Fatalf("indexing job: %+v", got[id])
	}
}

// askSplit sends n asks alternately to the servers, 8 at a time (an ask
// refused with 503 is sent again after its Retry-After), rates every
// tenth answer "up" through the other server and returns the IDs and
// ratings.
func askSplit(t *testing.T, servers []*serveProc, n int) map[string]string {
	t.Helper()
	c := &http.Client{Timeout: time.Minute}
	var mu sync.Mutex
	ids := map[string]string{}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				p := servers[i%len(servers)]
				for {
					status, id, err := procAsk(c, p, fmt.Sprintf("What does paragraph %d say about the tides?", i))
					if err != nil || (status != 200 && status != 503) {
						t.Errorf("ask %d: %d %v", i, status, err)
						break
					}
					if status == 503 {
						time.Sleep(askRetryAfter * time.Second) // the client honours Retry-After
						continue
					}
					rating := ""
					if i%10 == 0 {
						rating = ratingUp
						other := servers[(i+1)%len(servers)]
						rb, _ := json.Marshal(map[string]string{"id": id, "rating": rating})
						req, _ := http.NewRequest("POST", other.url+"/api/feedback", bytes.NewReader(rb))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("X-Requested-With", "test")
						resp, err := c.Do(req)
						if err != nil || resp.StatusCode != 200 {
							t.Errorf("rating answer %s of one server on the other: %v %v", id, err, resp)
						}
						if resp != nil {
							resp.Body.Close()
						}
					}
					mu.Lock()
					ids[id] = rating
					mu.Unlock()
					break
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return ids
}

// checkFeedbackShared fails unless every server's log holds exactly the
// answers in ids, with their ratings.
func checkFeedbackShared(t *testing.T, servers []*serveProc, ids map[string]string) {
	t.Helper()
	for k, p := range servers {
		logged := procFeedback(t, p)
		if len(logged) != len(ids) {
			t.Errorf("server %d's log has %d entries, want %d", k, len(logged), len(ids))
		}
		for id, rating := range ids {
			e, ok := logged[id]
			if !ok || e.Rating != rating {
				t.Errorf("server %d: answer %s logged %v with rating %q, want %q", k, id, ok, e.Rating, rating)
				break
			}
		}
	}
}

// Two serve processes on one PostgreSQL database: 200 asks split across
// both give 200 feedback entries, each visible (with its rating) from
// both.
func TestServeFeedbackTwoProcessesPG(t *testing.T) {
	dsn := cliTestFreshDB(t, cliTestDSN(t))
	uploads := t.TempDir()
	a := startServeProc(t, "--data", t.TempDir(), "--pg", dsn, "--uploads", uploads)
	b := startServeProc(t, "--data", t.TempDir(), "--pg", dsn, "--uploads", uploads)
	indexOnce(t, a)
	ids := askSplit(t, []*serveProc{a, b}, 200)
	if len(ids) != 200 {
		t.Fatalf("%d distinct answers, want 200", len(ids))
	}
	checkFeedbackShared(t, []*serveProc{a, b}, ids)
}

// Two serve processes on one --data directory share its SQLite database:
// the same 200 asks, the same check.
func TestServeFeedbackOneDataDir(t *testing.T) {
	data := t.TempDir()
	a := startServeProc(t, "--data", data)
	b := startServeProc(t, "--data", data)
	indexOnce(t, a)
	ids := askSplit(t, []*serveProc{a, b}, 200)
	if len(ids) != 200 {
		t.Fatalf("%d distinct answers, want 200", len(ids))
	}
	checkFeedbackShared(t, []*serveProc{a, b}, ids)
}

// procRSS returns the resident set and its peak of pid, from
// /proc/<pid>/status (0 where there is none).
func procRSS(pid int) (rss, peak int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			peak = n << 10
		}
	}
	return rss, peak
}

// 1,000 concurrent asks on loopback, each on its own connection, against
// serve --max-asks 8: every one gets an answer or 503 with Retry-After
// within 5 s. Slow-body and silent connections are closed by
// --read-timeout and --read-header-timeout, idle keep-alive ones by
// --idle-timeout. Logs the asks answered and refused and serve's RSS.
func TestServeLoadLimits(t *testing.T) {
	const readTimeout, idleTimeout = 2 * time.Second, 2 * time.Second
	// The asks go to a serve with the default timeouts (under this load a
	// client may take more than a second to send its headers), the
	// timeout checks to one with tight ones.
	p := startServeProc(t, "--data", t.TempDir(), "--max-asks", "8")
	tight := startServeProc(t, "--data", t.TempDir(), "--read-timeout", readTimeout.String(),
		"--read-header-timeout", "1s", "--idle-timeout", idleTimeout.String())
	indexOnce(t, p)
	_, before := procRSS(p.cmd.Process.Pid)

	const asks = 1000
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		slowest  time.Duration
		start    = make(chan struct{})
		wg       sync.WaitGroup
	)
	for i := range asks {
		wg.Go(func() {
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			<-start
			t0 := time.Now()
			body, _ := json.Marshal(askInput{Question: fmt.Sprintf("Which harbour does paragraph %d mention?", i%40)})
			req, _ := http.NewRequest("POST", p.url+"/api/ask", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Requested-With", "test")
			resp, err := c.Do(req)
			took := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("ask %d: no answer (a 5 s limit): %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[resp.StatusCode]++
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
				t.Errorf("ask %d: 503 without Retry-After", i)
			}
			slowest = max(slowest, took)
		})
	}
	close(start)
	wg.Wait()
	rss, peak := procRSS(p.cmd.Process.Pid)
	t.Logf("%d concurrent asks: %d answered, %d refused (503), slowest %s; serve RSS %.0f MiB after (peak %.0f MiB, %.0f MiB before)",
		asks, statuses[200], statuses[503], slowest.Round(time.Millisecond), float64(rss)/(1<<20), float64(peak)/(1<<20), float64(before)/(1<<20))
	if statuses[200]+statuses[503] != asks || statuses[200] == 0 {
		t.Errorf("statuses %v: want only 200 and 503, some 200", statuses)
	}

	host := strings.TrimPrefix(tight.url, "http://")
	// closedWithin reads from conn until the server closes it; it fails
	// the test if that takes longer than limit.
	closedWithin := func(what string, conn net.Conn, limit time.Duration) {
		t0 := time.Now()
		conn.SetReadDeadline(t0.Add(limit))
		_, err := io.Copy(io.Discard, conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: still open after %s", what, limit)
			return
		}
		t.Logf("%s: closed by serve after %s", what, time.Since(t0).Round(10*time.Millisecond))
	}
	// Slow body: 20 connections whose headers promise 10 kB, of which one
	// byte goes out every 100 ms.
	var slow sync.WaitGroup
	for k := range 20 {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/ask HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nX-Requested-With: test\r\nContent-Length: 10000\r\n\r\n{", host)
		stop := make(chan struct{})
		slow.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		})
		slow.Go(func() {
			defer close(stop)
			closedWithin(fmt.Sprintf("slow-body connection %d", k), conn, 3*readTimeout)
		})
	}
	slow.Wait()
	// A connection that never sends its headers.
	silent, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	closedWithin("connection without headers", silent, 3*time.Second)
	// An idle keep-alive connection after one request.
	idle, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz on the idle connection: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	closedWithin("idle keep-alive connection", idle, 3*idleTimeout)
}
