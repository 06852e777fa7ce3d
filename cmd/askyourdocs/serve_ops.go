package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// defaultMaxAsks is the asks one serve process answers at once when
// --max-asks is not given: four per CPU, enough to keep the CPUs busy with
// extractive answers and an LLM server with generated ones, without
// queueing thousands behind them.
var defaultMaxAsks = 4 * runtime.GOMAXPROCS(0)

// askRetryAfter is the Retry-After of an ask refused for load, in seconds.
const askRetryAfter = 1

// opsOptions are serve's load limits and HTTP timeouts (--max-asks and the
// --*-timeout flags).
type opsOptions struct {
	maxAsks                                      int
	readHeaderTimeout, readTimeout, writeTimeout time.Duration
	idleTimeout, streamTimeout                   time.Duration
}

// addOpsFlags registers the flags of opsOptions on fset.
func addOpsFlags(fset *flag.FlagSet) *opsOptions {
	o := &opsOptions{}
	fset.IntVar(&o.maxAsks, "max-asks", defaultMaxAsks, "asks answered at once; more get 503 with Retry-After")
	fset.DurationVar(&o.readHeaderTimeout, "read-header-timeout", 10*time.Second, "time a client has to send a request's headers")
	fset.DurationVar(&o.readTimeout, "read-timeout", 2*time.Minute, "time a client has to send a whole request, body included (uploads)")
	fset.DurationVar(&o.writeTimeout, "write-timeout", 3*time.Minute, "time to answer a request, from its headers on (not streamed answers)")
	fset.DurationVar(&o.idleTimeout, "idle-timeout", 2*time.Minute, "how long an idle keep-alive connection stays open")
	fset.DurationVar(&o.streamTimeout, "stream-timeout", 10*time.Minute, "time a streamed answer (text/event-stream) may take")
	return o
}

// check validates the flags.
func (o *opsOptions) check() error {
	if o.maxAsks < 1 {
		return fmt.Errorf("%w: --max-asks must be at least 1", errUsage)
	}
	for name, d := range map[string]time.Duration{"read-header": o.readHeaderTimeout, "read": o.readTimeout,
		"write": o.writeTimeout, "idle": o.idleTimeout, "stream": o.streamTimeout} {
		if d <= 0 {
			return fmt.Errorf("%w: --%s-timeout must be positive", errUsage, name)
		}
	}
	return nil
}

// newHTTPServer returns the http.Server of serve with o's timeouts.
func newHTTPServer(h http.Handler, o opsOptions) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.readHeaderTimeout,
		ReadTimeout:       o.readTimeout,
		WriteTimeout:      o.writeTimeout,
		IdleTimeout:       o.idleTimeout,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
}

// serveMetrics are the Prometheus metrics of one server, in a registry of
// its own (several servers in one test process do not collide).
type serveMetrics struct {
	reg      *prometheus.Registry
	asks     *prometheus.CounterVec
	latency  prometheus.Histogram
	inFlight prometheus.Gauge
}

// initOps sets up the ask slots and the metrics.
func (s *server) initOps() {
	if s.opts.maxAsks <= 0 {
		s.opts.maxAsks = defaultMaxAsks
	}
	if s.opts.streamTimeout <= 0 {
		s.opts.streamTimeout = 10 * time.Minute
	}
	s.askSlots = make(chan struct{}, s.opts.maxAsks)
	m := &serveMetrics{reg: prometheus.NewRegistry()}
	m.asks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askyourdocs_asks_total",
		Help: "Asks received, by outcome: answered, rejected (over --max-asks: 503), failed (4xx/5xx)."}, []string{"outcome"})
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "askyourdocs_ask_duration_seconds",
		Help:    "Time to answer an ask (answered asks), body read to last byte.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "askyourdocs_asks_in_flight", Help: "Asks being answered now."})
	m.reg.MustRegister(m.asks, m.latency, m.inFlight,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "askyourdocs_asks_max", Help: "The --max-asks limit."},
			func() float64 { return float64(s.opts.maxAsks) }),
		&serveCollector{s: s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range []string{"answered", "rejected", "failed"} {
		m.asks.WithLabelValues(o) // present from the start, at 0
	}
	s.metrics = m
}

// opsRoutes registers the health, readiness and metrics routes. /healthz
// and /readyz are open (load balancers probe them); /metrics shows the
// index size and job activity, so it is an admin route when a password
// is set (Prometheus scrapes it with basic_auth).
func (s *server) opsRoutes(mux *http.ServeMux, admin func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			slog.Warn("serve: not ready", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
			return
		}
		body := map[string]string{"status": "ready"}
		if s.b.replica != nil {
			// Reads fall back to the primary: still ready, but say so.
			if ok, reason := s.b.replica.get(); ok {
				body["readReplica"] = "in use"
			} else {
				body["readReplica"] = "not in use: " + reason
			}
		}
		writeJSON(w, http.StatusOK, body)
	})
	metrics := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn)})
	mux.HandleFunc("GET /metrics", admin(metrics.ServeHTTP))
}

// ready reports whether the server can answer: the database answers and
// its tables are there (the feedback table is made after the index's
// migrations, so its presence means they are done).
func (s *server) ready(ctx context.Context) error {
	if err := s.feedback.Ping(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	return nil
}

// limitAsk runs next for an ask when one of the --max-asks slots is free
// and answers 503 with Retry-After at once otherwise, so asks never queue
// behind each other. A POST body is read (at most 1 MiB) before a slot is
// taken: a slow client holds a connection, never a slot. GET /ask without
// a question is a page view and passes unlimited.
func (s *server) limitAsk(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.TrimSpace(r.URL.Query().Get("q")) == "" {
			next(w, r)
			return
		}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				jsonError(w, http.StatusRequestEntityTooLarge, "the request body is larger than 1 MiB")
				return
			case err != nil:
				jsonError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		select {
		case s.askSlots <- struct{}{}:
		default:
			s.metrics.asks.WithLabelValues("rejected").Inc()
			w.Header().Set("Retry-After", fmt.Sprint(askRetryAfter))
			jsonOrPageError(w, r, http.StatusServiceUnavailable,
				fmt.Sprintf("the server is answering %d questions already: try again in %d s", s.opts.maxAsks, askRetryAfter))
			return
		}
		defer func() { <-s.askSlots }()
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			// A streamed answer may outlast --write-timeout.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.streamTimeout))
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next(sw, r)
		if sw.status >= 400 {
			s.metrics.asks.WithLabelValues("failed").Inc()
			return
		}
		s.metrics.asks.WithLabelValues("answered").Inc()
		s.metrics.latency.Observe(time.Since(start).Seconds())
	}
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush passes streamed answers on.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveCollector reports, at scrape time, the jobs by state, the index's
// chunks and the feedback entries. The two counts are database queries
// (count(*)), cached for indexCountTTL so frequent scrapes cost little.
type serveCollector struct {
	s *server

	mu              sync.Mutex
	at              time.Time
	chunks, entries float64
}

// indexCountTTL is how long serveCollector reuses its counts.
const indexCountTTL = 15 * time.Second

var (
	jobsDesc     = prometheus.NewDesc("askyourdocs_jobs", "Jobs the job store holds, by state.", []string{"state"}, nil)
	chunksDesc   = prometheus.NewDesc("askyourdocs_index_chunks", "Chunks in the index.", nil, nil)
	feedbackDesc = prometheus.NewDesc("askyourdocs_feedback_entries", "Answers in the feedback log.", nil, nil)
	replicaDesc  = prometheus.NewDesc("askyourdocs_read_replica_in_use",
		"1 while searches read from the --pg-read replica, 0 while they fall back to the primary (only with --pg-read).", nil, nil)
)

func (c *serveCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- chunksDesc
	ch <- feedbackDesc
	ch <- replicaDesc
}

func (c *serveCollector) Collect(ch chan<- prometheus.Metric) {
	states := map[string]int{}
	for _, st := range []askyourdocs.JobStatus{askyourdocs.JobPending, askyourdocs.JobRunning, askyourdocs.JobDone,
		askyourdocs.JobFailed, askyourdocs.JobCancelled} {
		states[string(st)] = 0
	}
	for _, j := range listJobs(c.s.jobs, 0) {
		states[j.Status]++
	}
	for st, n := range states {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), st)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) > indexCountTTL {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := c.s.b.store.chunkCount(ctx)
		m, ferr := c.s.feedback.Len(ctx)
		if err := errors.Join(err, ferr); err != nil {
			slog.Warn("serve: metrics: counting failed", "err", err)
		} else {
			c.chunks, c.entries, c.at = float64(n), float64(m), time.Now()
		}
	}
	ch <- prometheus.MustNewConstMetric(chunksDesc, prometheus.GaugeValue, c.chunks)
	if c.s.b.replica != nil {
		v := 0.0
		if ok, _ := c.s.b.replica.get(); ok {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(replicaDesc, prometheus.GaugeValue, v)
	}
	ch <- prometheus.MustNewConstMetric(feedbackDesc, prometheus.GaugeValue, c.entries)
}
