package main

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"
)

// wrongPasswords sends n requests with a wrong password round-robin to
// servers (basic auth on an admin route, one after another) and returns
// how many were checked (401: the password was looked at) and how long
// the run took. 429s were refused by the limiter without a check.
func wrongPasswords(t *testing.T, servers []*serveProc, n int) (checks int, took time.Duration) {
	t.Helper()
	start := time.Now()
	for i := range n {
		p := servers[i%len(servers)]
		req, err := http.NewRequestWithContext(context.Background(), "GET", p.url+"/api/jobs", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("admin", "wrong-guess")
		resp, err := procClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			checks++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("wrong password %d: %s", i, resp.Status)
		}
	}
	return checks, time.Since(start)
}

// loginChecksBound is the most password checks one client may get in d
// from a single process: loginClientFailures at once, then one more each
// time a doubling backoff (1 s, 2 s, 4 s, ...) has run out.
func loginChecksBound(d time.Duration) int {
	return loginClientFailures + int(math.Log2(d.Seconds()+1)) + 1
}

// TestServeLoginThrottleShared: three serve processes on one PostgreSQL
// database, and three on one --data directory, give a client that sends
// 300 wrong passwords round-robin at most the checks one process gives
// (each process on its own would give 5 each: 15). A process started
// during the lockout keeps it.
func TestServeLoginThrottleShared(t *testing.T) {
	env := []string{envServePassword + "=right-password-for-this-test"}
	run := func(t *testing.T, args func() []string) {
		one := startServeProcEnv(t, env, args()...)
		single, took1 := wrongPasswords(t, []*serveProc{one}, 300)
		if single > loginChecksBound(took1) || single < loginClientFailures {
			t.Errorf("one process: %d checks in %v, want %d..%d", single, took1, loginClientFailures, loginChecksBound(took1))
		}
		// A new client for the three: another database or data directory.
		a := args()
		var three []*serveProc
		for range 3 {
			three = append(three, startServeProcEnv(t, env, a...))
		}
		start := time.Now()
		checks, took := wrongPasswords(t, three, 300)
		if checks > loginChecksBound(took) {
			t.Errorf("three processes: %d checks in %v, want at most %d (one process: %d)", checks, took, loginChecksBound(took), single)
		}
		// A process started after the lockout began grants no checks of
		// its own: with its 10 wrong passwords the client stays within the
		// one backoff since the start (a process with a lockout of its own
		// would check 5 of them). Its start may outlast the current
		// backoff step, which then allows one more check, as any process
		// would.
		late := startServeProcEnv(t, env, a...)
		c, _ := wrongPasswords(t, []*serveProc{late}, 10)
		if elapsed := time.Since(start); checks+c > loginChecksBound(elapsed) {
			t.Errorf("a process started during the lockout checked %d passwords: %d in all in %v, want at most %d",
				c, checks+c, elapsed, loginChecksBound(elapsed))
		}
	}
	t.Run("PostgreSQL", func(t *testing.T) {
		base := cliTestDSN(t)
		run(t, func() []string { return []string{"--data", t.TempDir(), "--pg", cliTestFreshDB(t, base)} })
	})
	t.Run("DataDir", func(t *testing.T) {
		run(t, func() []string { return []string{"--data", t.TempDir()} })
	})
}
