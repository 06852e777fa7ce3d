package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var serveLogAnswers = flag.Int("serve-log-answers", 20000, "BenchmarkServeAsksAfterLog: answers logged between the two measured windows")

// BenchmarkServeAsksAfterLog measures serve's asks/s on a fresh server
// (the first 1,000 answers) and again after -serve-log-answers (20,000)
// more answers went into the feedback log, with 8 askers on loopback
// against the default embedded store (SQLite feedback table). It reports
// both rates and their ratio (after/fresh; the log's size must not matter,
// so about 1; issue 22 measured 11 -> 0.4 asks/s after 40,000 answers with
// the old whole-file rewrite).
//
//	go test ./cmd/askyourdocs -run '^$' -bench ServeAsksAfterLog -benchtime 1x
func BenchmarkServeAsksAfterLog(b *testing.B) {
	ts := newTestServe(b, nil, "", 0)
	ts.uploadAndWait(b, nil, map[string][]byte{"handbook.pdf": readFixture(b, "handbook.pdf"), "faq.docx": readFixture(b, "faq.docx")})
	const askers, window = 8, 1000
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: askers}}
	// run sends n asks from 8 askers and returns the asks per second.
	run := func(n int) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		t0 := time.Now()
		for range askers {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > int64(n) {
						return
					}
					body, _ := json.Marshal(askInput{Question: loadQuestions[int(i)%len(loadQuestions)]})
					req, _ := http.NewRequest("POST", ts.URL+"/api/ask", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Requested-With", "bench")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("ask: %s", resp.Status)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64(n) / time.Since(t0).Seconds()
	}
	for b.Loop() {
		fresh := run(window)
		fill := run(*serveLogAnswers)
		after := run(window)
		n, err := ts.s.feedback.Len(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(fresh, "asks/s-fresh")
		b.ReportMetric(fill, "asks/s-fill")
		b.ReportMetric(after, "asks/s-after")
		b.ReportMetric(float64(n-window), "logged-before-after")
		b.ReportMetric(after/fresh, "after/fresh")
	}
}
