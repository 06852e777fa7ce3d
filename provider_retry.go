package engine

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Retry policy of the Ollama and GPUStack clients (providerRetry).
const (
	// providerRetryTries is the number of attempts of one request.
	providerRetryTries = 4
	// providerRetryInitial is the first wait; each next one doubles, with
	// ±50% jitter, up to providerRetryMaxInterval.
	providerRetryInitial     = 250 * time.Millisecond
	providerRetryMaxInterval = 8 * time.Second
	// providerRetryMaxElapsed bounds the time spent on one request's
	// retries, waits included.
	providerRetryMaxElapsed = time.Minute
	// providerRetryMaxAfter is the longest Retry-After honoured: a server
	// asking for a longer pause gets the error back at once.
	providerRetryMaxAfter = 30 * time.Second
)

// providerRetry is how providerHTTP.post retries transient failures; nil
// fields take the package defaults above. Tests shorten the waits.
type providerRetry struct {
	tries    uint
	backOff  func() backoff.BackOff
	maxAfter time.Duration
}

func (r *providerRetry) newBackOff() backoff.BackOff {
	if r != nil && r.backOff != nil {
		return r.backOff()
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = providerRetryInitial
	b.Multiplier = 2
	b.RandomizationFactor = 0.5
	b.MaxInterval = providerRetryMaxInterval
	return b
}

func (r *providerRetry) maxTries() uint {
	if r != nil && r.tries > 0 {
		return r.tries
	}
	return providerRetryTries
}

func (r *providerRetry) retryAfterLimit() time.Duration {
	if r != nil && r.maxAfter > 0 {
		return r.maxAfter
	}
	return providerRetryMaxAfter
}

// providerTransient wraps the error of an attempt worth repeating; after,
// when positive, is the server's Retry-After.
type providerTransient struct {
	err   *ProviderError
	after time.Duration
}

func (e *providerTransient) Error() string { return e.err.Error() }

// Unwrap exposes the provider error and, with a Retry-After, the
// backoff.RetryAfterError that makes backoff.Retry wait that long.
func (e *providerTransient) Unwrap() []error {
	if e.after > 0 {
		return []error{e.err, &backoff.RetryAfterError{Duration: e.after}}
	}
	return []error{e.err}
}

// providerClassify returns err as a *providerTransient when the attempt
// that failed with it may be repeated: the connection was refused (the
// request never reached a server, e.g. one still starting), or the server
// answered 429 Too Many Requests or 503 Service Unavailable with a
// Retry-After (if any) of at most maxAfter. Any other error is permanent.
func providerClassify(err *ProviderError, header http.Header, maxAfter time.Duration) error {
	switch {
	case err.Status == 0 && errors.Is(err.Err, syscall.ECONNREFUSED):
		return &providerTransient{err: err}
	case err.Status == http.StatusTooManyRequests, err.Status == http.StatusServiceUnavailable:
		after, ok := parseRetryAfter(header.Get("Retry-After"), time.Now())
		if !ok || after > maxAfter {
			return backoff.Permanent(err)
		}
		return &providerTransient{err: err, after: after}
	}
	return backoff.Permanent(err)
}

// parseRetryAfter returns the wait a Retry-After value asks for (RFC 9110:
// delay seconds or an HTTP date); 0 and true when the header is absent, so
// the backoff decides; false when it is malformed.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, true
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), time.Millisecond), true
}

// providerDo runs attempt until it succeeds, fails permanently, the retry
// budget is spent or ctx ends. attempt returns a *providerTransient for a
// failure worth repeating. The error returned is the last attempt's
// *ProviderError; when ctx ends between attempts, a *ProviderError with the
// last attempt's status and body that unwraps to ctx's error.
func providerDo[T any](ctx context.Context, r *providerRetry, attempt func() (T, error)) (T, error) {
	var last *ProviderError
	res, err := backoff.Retry(ctx, func() (T, error) {
		res, err := attempt()
		if err != nil {
			errors.As(err, &last)
		}
		return res, err
	},
		backoff.WithBackOff(r.newBackOff()),
		backoff.WithMaxTries(r.maxTries()),
		backoff.WithMaxElapsedTime(providerRetryMaxElapsed),
		backoff.WithNotify(func(err error, wait time.Duration) {
			slog.Warn("model server request failed, retrying", "err", err, "wait", wait)
		}))
	switch {
	case err == nil:
		return res, nil
	case last == nil:
		return res, err
	case errors.As(err, new(*ProviderError)):
		return res, last // the attempt's own error, transient or permanent
	}
	// ctx ended while waiting to retry.
	return res, &ProviderError{Provider: last.Provider, Address: last.Address, Status: last.Status, Body: last.Body, Err: err}
}
