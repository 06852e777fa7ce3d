package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkServeAsksReplica answers the same asks (16 at a time, JSON
// POST /api/ask, the extractive answer) from two serve instances on one
// PostgreSQL index in one run: one reading from the primary only, one
// with --pg-read on the hot standby of ASKYOURDOCS_TEST_READ_DSN, and
// reports asks/s and p50/p95 for each. On one machine both servers share
// its cores, so the figure is the replica's overhead, not its capacity
// (docs/scaling.md, step 3, has the arithmetic beyond one machine).
//
//	go test ./cmd/askyourdocs -run '^$' -bench ServeAsksReplica -benchtime 1x
func BenchmarkServeAsksReplica(b *testing.B) {
	read := os.Getenv("ASKYOURDOCS_TEST_READ_DSN")
	if read == "" {
		b.Skip("no read replica: eval \"$(scripts/pg-native standby)\" after scripts/pg-native start")
	}
	dsn := cliTestDSN(b)
	name := fmt.Sprintf("serve_replica_%d", time.Now().UnixNano()%1e9)
	open := func(pgRead string) *testServe {
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel)
		a := &cliApp{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		data := b.TempDir()
		be, err := a.open(ctx, &commonFlags{data: data, pg: dsn, pgRead: pgRead, name: name}, openOptions{models: true, write: true, reads: true})
		if err != nil {
			b.Fatal(err)
		}
		s, err := newServer(ctx, be, serveOptions{user: "admin", maxAsks: 64, dataDir: data, pgDSN: dsn})
		if err != nil {
			b.Fatal(err)
		}
		ts := &testServe{Server: httptest.NewServer(s), s: s}
		b.Cleanup(func() { ts.Close(); s.Close(); be.Close() })
		return ts
	}
	primary := open("")
	primary.uploadAndWait(b, nil, map[string][]byte{"handbook.pdf": readFixture(b, "handbook.pdf"), "faq.docx": readFixture(b, "faq.docx")})
	waitReplayed(b, dsn, read)
	replica := open(read)

	const asks, conc = 1200, 16
	run := func(srv *testServe) (perSec float64, p50, p95 time.Duration) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
		var mu sync.Mutex
		var lat []time.Duration
		work := make(chan int)
		var wg sync.WaitGroup
		start := time.Now()
		for range conc {
			wg.Go(func() {
				for i := range work {
					body, _ := json.Marshal(askInput{Question: loadQuestions[i%len(loadQuestions)]})
					t0 := time.Now()
					resp, err := client.Post(srv.URL+"/api/ask", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("ask: %s", resp.Status)
						continue
					}
					mu.Lock()
					lat = append(lat, time.Since(t0))
					mu.Unlock()
				}
			})
		}
		for i := range asks {
			work <- i
		}
		close(work)
		wg.Wait()
		elapsed := time.Since(start)
		slices.Sort(lat)
		if len(lat) == 0 {
			b.Fatal("no ask answered")
		}
		return float64(len(lat)) / elapsed.Seconds(), lat[len(lat)/2], lat[len(lat)*95/100]
	}
	for b.Loop() {
		pr, pp50, pp95 := run(primary)
		rr, rp50, rp95 := run(replica)
		b.ReportMetric(pr, "primary_asks/s")
		b.ReportMetric(float64(pp50.Microseconds())/1000, "primary_p50_ms")
		b.ReportMetric(float64(pp95.Microseconds())/1000, "primary_p95_ms")
		b.ReportMetric(rr, "replica_asks/s")
		b.ReportMetric(float64(rp50.Microseconds())/1000, "replica_p50_ms")
		b.ReportMetric(float64(rp95.Microseconds())/1000, "replica_p95_ms")
		b.ReportMetric(rr/pr, "ratio")
	}
}
