package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

var (
	serveLoadDuration = flag.Duration("serve-load-duration", 60*time.Second, "BenchmarkServeLoad: how long the load runs")
	serveLoadAskers   = flag.Int("serve-load-askers", 20, "BenchmarkServeLoad: concurrent askers")
)

// loadQuestions are asked in turn by the askers.
var loadQuestions = []string{
	"How long before the start can I cancel a booking and still get a full refund?",
	"What is the minimum age for paddling a single kayak?",
	"How much does it cost to rent a wetsuit?",
	"When does the guide check the wind forecast?",
	"Where is the meeting point?",
	"Do I need kayaking experience for the full-day tour?",
}

// BenchmarkServeLoad runs a bounded loopback load against serve: 20
// askers (POST /api/ask, JSON) and one indexer (uploads a new HTML page
// and waits for its job, over and over) for -serve-load-duration, against
// the default embedded store and, with ASKYOURDOCS_TEST_DSN, PostgreSQL.
// Every fifth answer gets a thumbs up or down; afterwards each of those
// ratings must be in the feedback log. It reports asks/s, p50 and p95
// latency, errors (must be 0; any error fails the run) and the number of
// documents indexed meanwhile.
//
//	go test ./cmd/askyourdocs -run '^$' -bench ServeLoad -serve-load-duration 60s
func BenchmarkServeLoad(b *testing.B) {
	b.Run("embedded", func(b *testing.B) {
		ts := newTestServe(b, nil, "", 0)
		serveLoad(b, ts)
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := cliTestDSN(b)
		name := fmt.Sprintf("serve_load_%d", time.Now().UnixNano()%1e9)
		ts := newTestServeIn(b, b.TempDir(), dsn, name, nil, "", 0)
		serveLoad(b, ts)
	})
}

func serveLoad(b *testing.B, ts *testServe) {
	ts.uploadAndWait(b, nil, map[string][]byte{"handbook.pdf": readFixture(b, "handbook.pdf"), "faq.docx": readFixture(b, "faq.docx")})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *serveLoadAskers + 2}}
	deadline := time.Now().Add(*serveLoadDuration)

	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      []string
		ratings   = map[string]string{}
		indexed   int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, args...))
		} else {
			errs = append(errs, "")
		}
	}
	post := func(path string, v any) (*http.Response, []byte, error) {
		body, _ := json.Marshal(v)
		resp, err := client.Post(ts.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp, data, err
	}

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range *serveLoadAskers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				q := loadQuestions[(w+i)%len(loadQuestions)]
				t0 := time.Now()
				resp, data, err := post("/api/ask", askInput{Question: q})
				d := time.Since(t0)
				if err != nil || resp.StatusCode != http.StatusOK {
					fail("ask: %v %v %s", err, resp.Status, data)
					continue
				}
				var out askOutput
				if err := json.Unmarshal(data, &out); err != nil || out.ID == "" || len(out.Citations) == 0 {
					fail("ask: bad answer %v %s", err, data)
					continue
				}
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
				if i%5 == 0 {
					rating := []string{ratingUp, ratingDown}[i/5%2]
					resp, data, err := post("/api/feedback", map[string]string{"id": out.ID, "rating": rating})
					if err != nil || resp.StatusCode != http.StatusOK {
						fail("feedback: %v %s", err, data)
						continue
					}
					mu.Lock()
					ratings[out.ID] = rating
					mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; time.Now().Before(deadline); n++ {
			page := fmt.Sprintf("<html><body><h1>Load page %d</h1><p>Paddle report %d: the lake was calm and the %d guests saw a heron.</p></body></html>", n, n, n)
			ct, body := multipartBody(b, map[string][]byte{fmt.Sprintf("load-%d.html", n): []byte(page)})
			req, _ := http.NewRequest("POST", ts.URL+"/index/upload", bytes.NewReader(body))
			req.Header.Set("Content-Type", ct)
			req.Header.Set("X-Requested-With", "load")
			resp, err := client.Do(req)
			if err != nil {
				fail("upload: %v", err)
				continue
			}
			var started struct{ JobID string }
			json.NewDecoder(resp.Body).Decode(&started)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				fail("upload: %s", resp.Status)
				continue
			}
			j := ts.wait(b, started.JobID)
			if rep, ok := j.Result.(*indexReport); j.Status != "done" || !ok || rep.Sources != 1 {
				fail("index job %+v", j)
				continue
			}
			mu.Lock()
			indexed++
			mu.Unlock()
		}
	}()
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	logged := readFeedbackLog(b, ts)
	missing := 0
	for id, r := range ratings {
		if logged[id].Rating != r {
			missing++
		}
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "asks/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(float64(len(errs)), "errors")
	b.ReportMetric(float64(len(ratings)), "ratings")
	b.ReportMetric(float64(indexed), "docs-indexed")
	b.ReportMetric(0, "ns/op")
	if len(errs) > 0 {
		b.Fatalf("%d errors, first: %q", len(errs), errs[:min(len(errs), 5)])
	}
	if missing > 0 || len(ratings) == 0 {
		b.Fatalf("%d of %d ratings are not in the feedback log", missing, len(ratings))
	}
	if indexed == 0 {
		b.Fatal("the indexer indexed nothing during the load")
	}
	fmt.Fprintf(os.Stderr, "serve load: %d asks in %s (%.1f/s), p50 %.1f ms, p95 %.1f ms, %d ratings all logged, %d docs indexed\n",
		len(latencies), elapsed.Round(time.Millisecond), float64(len(latencies))/elapsed.Seconds(), pct(0.5), pct(0.95), len(ratings), indexed)
}
