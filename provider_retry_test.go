package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// retryFakeServer answers the first len(fails) requests with the given
// statuses (and Retry-After values, "" for none), then 200 with {"ok":true}.
// It records the arrival time of every request.
type retryFakeServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	times []time.Time
}

type retryFail struct {
	status     int
	retryAfter string
}

func newRetryFakeServer(t *testing.T, fails ...retryFail) *retryFakeServer {
	t.Helper()
	s := &retryFakeServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.times)
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
		if n < len(fails) {
			if fails[n].retryAfter != "" {
				w.Header().Set("Retry-After", fails[n].retryAfter)
			}
			http.Error(w, "busy", fails[n].status)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true})
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *retryFakeServer) requests() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

// retryTestHTTP is a providerHTTP whose waits between attempts come from b.
func retryTestHTTP(b backoff.BackOff) providerHTTP {
	return providerHTTP{provider: ProviderOllama, client: &http.Client{},
		retry: &providerRetry{backOff: func() backoff.BackOff { return b }}}
}

// Transient statuses are retried until the server answers; permanent ones
// are returned at once.
func TestProviderRetryTransientThenSuccess(t *testing.T) {
	s := newRetryFakeServer(t, retryFail{status: 503}, retryFail{status: 429}, retryFail{status: 503})
	h := retryTestHTTP(backoff.NewConstantBackOff(time.Millisecond))
	var out struct{ OK bool }
	if err := h.postJSON(t.Context(), s.srv.URL, map[string]string{"q": "x"}, &out); err != nil || !out.OK {
		t.Fatalf("postJSON after 3 transient failures: %+v, %v", out, err)
	}
	if n := len(s.requests()); n != 4 {
		t.Errorf("%d requests, want 4 (3 failures and the success)", n)
	}

	// More failures than attempts: the last attempt's error comes back.
	s = newRetryFakeServer(t, retryFail{status: 503}, retryFail{status: 503}, retryFail{status: 503}, retryFail{status: 503}, retryFail{status: 503})
	err := h.postJSON(t.Context(), s.srv.URL, nil, &out)
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 503 || pe.Body != "busy" {
		t.Fatalf("err = %v, want the last attempt's *ProviderError (503)", err)
	}
	if n := len(s.requests()); n != providerRetryTries {
		t.Errorf("%d requests, want %d attempts", n, providerRetryTries)
	}

	for _, status := range []int{400, 404, 500, 502} {
		s = newRetryFakeServer(t, retryFail{status: status})
		err := h.postJSON(t.Context(), s.srv.URL, nil, &out)
		if !errors.As(err, &pe) || pe.Status != status {
			t.Errorf("status %d: err = %v", status, err)
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("status %d retried: %d requests", status, n)
		}
	}
}

// A Retry-After of one second is waited for, even though the backoff
// alone would wait an hour (the test's deadline would fail it first).
// A Retry-After longer than the limit is not waited for at all.
func TestProviderRetryHonoursRetryAfter(t *testing.T) {
	s := newRetryFakeServer(t, retryFail{status: 429, retryAfter: "1"})
	h := retryTestHTTP(backoff.NewConstantBackOff(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out struct{ OK bool }
	if err := h.postJSON(ctx, s.srv.URL, nil, &out); err != nil || !out.OK {
		t.Fatalf("postJSON: %+v, %v", out, err)
	}
	reqs := s.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if gap := reqs[1].Sub(reqs[0]); gap < time.Second {
		t.Errorf("retried after %v, before the server's Retry-After of 1s", gap)
	}

	s = newRetryFakeServer(t, retryFail{status: 503, retryAfter: strconv.Itoa(int(providerRetryMaxAfter/time.Second) + 1)})
	err := h.postJSON(ctx, s.srv.URL, nil, &out)
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 503 || len(s.requests()) != 1 {
		t.Errorf("Retry-After over the limit: err %v after %d requests, want the 503 at once", err, len(s.requests()))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, true},
		{"7", 7 * time.Second, true},
		{" 0 ", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), time.Millisecond, true},
		{"-3", 0, false},
		{"soon", 0, false},
	} {
		got, ok := parseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// Cancelling the context while waiting to retry stops at once; the error
// says what the server answered and that the context ended.
func TestProviderRetryStopsOnContext(t *testing.T) {
	s := newRetryFakeServer(t, retryFail{status: 503}, retryFail{status: 503})
	b := &signalBackOff{asked: make(chan struct{}, 8), wait: providerRetryMaxElapsed / 2}
	h := retryTestHTTP(b)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		var out struct{ OK bool }
		errc <- h.postJSON(ctx, s.srv.URL, nil, &out)
	}()
	<-b.asked // the 503 arrived; the client is about to wait half a minute
	cancel()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case err := <-errc:
		var pe *ProviderError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &pe) || pe.Status != 503 {
			t.Errorf("err = %v, want a *ProviderError for the 503 wrapping context.Canceled", err)
		}
	case <-deadline.C:
		t.Fatal("the retry wait did not end with the context")
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// signalBackOff is a BackOff that, when asked for the next wait (an
// attempt failed transiently), reports it on asked, returns only once ready
// is closed (nil: at once) and then asks for wait.
type signalBackOff struct {
	asked chan struct{}
	ready chan struct{}
	wait  time.Duration
}

func (b *signalBackOff) NextBackOff() time.Duration {
	b.asked <- struct{}{}
	if b.ready != nil {
		<-b.ready
	}
	return b.wait
}

func (b *signalBackOff) Reset() {}

// A model server that is still starting (connection refused) is retried:
// the server starts listening while the client waits to retry.
func TestProviderRetryConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	b := &signalBackOff{asked: make(chan struct{}, 8), ready: make(chan struct{}), wait: time.Millisecond}
	h := retryTestHTTP(b)
	errc := make(chan error, 1)
	go func() {
		var out struct{ OK bool }
		err := h.postJSON(t.Context(), "http://"+addr, nil, &out)
		if err == nil && !out.OK {
			err = errors.New("no answer decoded")
		}
		errc <- err
	}()
	<-b.asked // the first attempt was refused
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		close(b.ready)
		t.Skipf("port %s taken by someone else meanwhile: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"ok": true})
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	close(b.ready)
	if err := <-errc; err != nil {
		t.Fatalf("after the server started: %v", err)
	}
}

// A stream that breaks after its first bytes is an error, never replayed:
// the server sees exactly one request.
func TestProviderStreamNotRetriedAfterFirstByte(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/x-ndjson")
		json.NewEncoder(w).Encode(map[string]any{"model": "m", "message": map[string]any{"role": "assistant", "content": "par"}, "done": false})
		w.(http.Flusher).Flush()
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close() // the connection breaks mid-stream
		}
	}))
	defer srv.Close()
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: srv.URL}, "m")
	m, err := p.Model(g, "m")
	if err != nil {
		t.Fatal(err)
	}
	var chunks int
	_, err = genkit.Generate(t.Context(), g, ai.WithModel(m), ai.WithPrompt("x"),
		ai.WithStreaming(func(ctx context.Context, c *ai.ModelResponseChunk) error {
			chunks++
			return nil
		}))
	if err == nil {
		t.Fatal("a broken stream gave no error")
	}
	if n := requests.Load(); n != 1 || chunks != 1 {
		t.Errorf("%d requests and %d chunks, want 1 request (no replay) and the 1 chunk sent", n, chunks)
	}
}

// The Ollama client retries through the whole stack: an embed request
// answered 503 once succeeds with the production policy.
func TestOllamaEmbedRetried(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			http.Error(w, "loading model", http.StatusServiceUnavailable)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		ollamaFakeReply(w, r.URL.Path, body)
	}))
	defer srv.Close()
	p, g := providerGenkit(t, ProviderConfig{OllamaHost: srv.URL}, "emb")
	e, err := p.Embedder(g, "emb", 8)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.Embed(t.Context(), &ai.EmbedRequest{Input: []*ai.Document{ai.DocumentFromText("hello", nil)}})
	if err != nil || len(resp.Embeddings) != 1 {
		t.Fatalf("embed after one 503: %v", err)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
