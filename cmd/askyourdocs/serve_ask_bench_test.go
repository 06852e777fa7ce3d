package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var serveAskN = flag.Int("serve-ask-n", 600, "BenchmarkServeAskConcurrency: asks per concurrency level (and in-process retrievals of the anchor)")

// BenchmarkServeAskConcurrency measures POST /api/ask (JSON, no LLM:
// extractive answers, each logged in the feedback table) of one server on
// the default embedded store holding the CLI fixtures, with 1, 4 and 16
// askers on loopback, -serve-ask-n asks per level on a log that starts
// empty (--max-asks 16, so no ask is refused). Its anchor, in the same run and on the same backend, is the
// retrieval alone as 'askyourdocs eval' runs it (fusion, in process, one at
// a time). It reports per level cN_asks/s, cN_p50_ms and cN_p99_ms,
// inproc_p50_ms (the anchor), inproc_ask_p50_ms (serve's whole answer path
// without HTTP) and ratio: serve's p50 at c=1 over the anchor's p50.
//
//	go test ./cmd/askyourdocs -run '^$' -bench '^BenchmarkServeAskConcurrency$' -benchtime 1x
func BenchmarkServeAskConcurrency(b *testing.B) {
	ts := newAskBenchServe(b, 16)
	ts.uploadAndWait(b, nil, map[string][]byte{
		"handbook.pdf": readFixture(b, "handbook.pdf"),
		"faq.docx":     readFixture(b, "faq.docx"),
		"prices.html":  readFixture(b, "prices.html"),
	})
	ctx := context.Background()
	n := max(*serveAskN, 10)
	for b.Loop() {
		// The anchor: eval's retrieval (fusion, no HyDE, no reranker, 10
		// documents' worth of chunks), then serve's answer path without HTTP.
		o := defaultRetrieveOptions()
		o.hyde, o.rerank = false, false
		o.top = max(o.depth, 10)
		var inproc, inprocAsk []time.Duration
		for i := range n {
			q := loadQuestions[i%len(loadQuestions)]
			t0 := time.Now()
			if _, err := ts.s.b.retrieve(ctx, q, o); err != nil {
				b.Fatal(err)
			}
			inproc = append(inproc, time.Since(t0))
		}
		for i := range n {
			t0 := time.Now()
			if _, err := ts.s.ask(ctx, askInput{Question: loadQuestions[i%len(loadQuestions)]}, nil); err != nil {
				b.Fatal(err)
			}
			inprocAsk = append(inprocAsk, time.Since(t0))
		}
		p50 := 0.0
		for _, c := range []int{1, 4, 16} {
			rate, lat := serveAskRun(b, ts, c, n)
			b.ReportMetric(rate, fmt.Sprintf("c%d_asks/s", c))
			b.ReportMetric(pctMs(lat, 0.50), fmt.Sprintf("c%d_p50_ms", c))
			b.ReportMetric(pctMs(lat, 0.99), fmt.Sprintf("c%d_p99_ms", c))
			if c == 1 {
				p50 = pctMs(lat, 0.50)
			}
		}
		b.ReportMetric(pctMs(inproc, 0.50), "inproc_p50_ms")
		b.ReportMetric(pctMs(inprocAsk, 0.50), "inproc_ask_p50_ms")
		b.ReportMetric(p50/pctMs(inproc, 0.50), "ratio")
	}
	b.ReportMetric(0, "ns/op")
}

// newAskBenchServe is newTestServe (a fresh data directory, no models)
// with maxAsks ask slots.
func newAskBenchServe(b *testing.B, maxAsks int) *testServe {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	data := b.TempDir()
	a := &cliApp{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	be, err := a.open(ctx, &commonFlags{data: data, name: storeName}, openOptions{models: true, write: true})
	if err != nil {
		b.Fatal(err)
	}
	s, err := newServer(ctx, be, serveOptions{user: "admin", dataDir: data, maxAsks: maxAsks})
	if err != nil {
		be.Close()
		b.Fatal(err)
	}
	ts := &testServe{Server: httptest.NewServer(s), s: s, data: data}
	b.Cleanup(func() {
		ts.Close()
		s.Close()
		be.Close()
	})
	return ts
}

// serveAskRun sends n asks over loopback from c askers and returns the
// asks per second and each ask's latency.
func serveAskRun(b *testing.B, ts *testServe, c, n int) (float64, []time.Duration) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	defer client.CloseIdleConnections()
	var (
		next atomic.Int64
		mu   sync.Mutex
		lat  []time.Duration
		wg   sync.WaitGroup
	)
	t0 := time.Now()
	for range c {
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
				s := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				data, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				d := time.Since(s)
				var out askOutput
				if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil || out.ID == "" || len(out.Citations) == 0 {
					b.Errorf("ask: %s %v %.200s", resp.Status, err, data)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rate := float64(len(lat)) / time.Since(t0).Seconds()
	if len(lat) < n {
		b.Fatalf("c=%d: %d of %d asks answered", c, len(lat), n)
	}
	return rate, lat
}

// pctMs returns the p-quantile of lat in milliseconds (lat gets sorted).
func pctMs(lat []time.Duration, p float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
}
