package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Login throttling: every password check (login form, POST /api/login,
// basic auth) first asks the limiter of the client (its IP address; an
// IPv6 client by its /64) and of the account. A client may fail 10 times
// in a burst and once a second after that; after 5 failures in a row it
// waits 1 s, then 2, 4, ... up to 15 min, however slowly it tries. The
// account (whoever asks for it, from any address) gets 30 in a burst and
// 5 a second, and after 20 failures in a row the same doubling backoff.
// A refused attempt is answered 429 with Retry-After without looking at
// the password. A success clears the client's and the account's failures.
// The failures and lockouts are shared by every process on the same
// database (serve_auth_shared.go) when the limiter has a loginShared: a
// client locked out by one process is locked out by all, and a restart
// keeps the lockout; the token buckets are per process.
const (
	loginClientEvery    = time.Second
	loginClientBurst    = 10
	loginClientFailures = 5
	loginAccountEvery   = 200 * time.Millisecond
	loginAccountBurst   = 30
	loginAccountFails   = 20
	loginMaxBackoff     = 15 * time.Minute
	// loginMaxClients bounds the table of clients; idle entries go first.
	loginMaxClients = 10000
	loginIdle       = time.Hour
)

// loginBucket is the state of one client or account.
type loginBucket struct {
	lim      *rate.Limiter
	failures int       // consecutive failures
	until    time.Time // no attempt before this
	seen     time.Time
	logged   time.Time // end of the lockout last logged (one line per lockout)
}

// loginLimiter throttles password checks. Safe for concurrent use.
type loginLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	log     *slog.Logger
	clients map[string]*loginBucket
	account *loginBucket
	// shared, when set, holds the failures of every process on the
	// database; fails counts failures recorded there (for pruning).
	shared loginShared
	fails  atomic.Int64
	// sharedDown is set while the shared table fails (logged once).
	sharedDown atomic.Bool
}

func newLoginLimiter() *loginLimiter {
	now := time.Now()
	return &loginLimiter{now: time.Now, log: slog.Default(), clients: map[string]*loginBucket{},
		account: &loginBucket{lim: rate.NewLimiter(rate.Every(loginAccountEvery), loginAccountBurst), seen: now}}
}

// clientKey is the address a request is throttled by: its IP, or the
// /64 network of an IPv6 address (one host usually holds a whole /64).
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// allow reports whether a password check may run for a request from
// client for user (account is true when user is the configured one), and
// if not, how long to wait.
func (l *loginLimiter) allow(ctx context.Context, client, user string, account bool) (bool, time.Duration) {
	var shared time.Time // the later lockout end the shared table holds
	if l.shared != nil {
		_, cu, err := l.shared.state(ctx, "client:"+client)
		if err == nil && account {
			var au time.Time
			_, au, err = l.shared.state(ctx, "account:"+user)
			cu = later(cu, au)
		}
		l.sharedResult(err)
		shared = cu
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.client(client, now)
	c.until = later(c.until, shared)
	wait := c.until.Sub(now)
	if account {
		wait = max(wait, l.account.until.Sub(now))
	}
	if wait > 0 {
		l.logLockout(c, l.account, client, user, wait, now)
		return false, wait
	}
	if c.lim.TokensAt(now) < 1 {
		return false, rateDelay(c.lim, now)
	}
	if account && l.account.lim.TokensAt(now) < 1 {
		return false, rateDelay(l.account.lim, now)
	}
	return true, 0
}

// rateDelay is how long until the limiter has a token again.
func rateDelay(lim *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - lim.TokensAt(now)
	return max(time.Duration(missing/float64(lim.Limit())*float64(time.Second)), time.Second)
}

// sharedResult logs the shared table's failure once while it lasts, and
// its recovery: throttling falls back to this process's counts meanwhile.
func (l *loginLimiter) sharedResult(err error) {
	if err != nil {
		if !l.sharedDown.Swap(true) {
			l.log.Warn("serve: the shared login table failed; login throttling counts this process's attempts only until it answers again", "err", err)
		}
		return
	}
	if l.sharedDown.Swap(false) {
		l.log.Info("serve: the shared login table answers again")
	}
}

// recordShared records the outcome of a password check in the shared
// table and returns the failures and lockout ends it holds now (client's,
// account's).
func (l *loginLimiter) recordShared(ctx context.Context, client, user string, account, ok bool) (cn, an int, cu, au time.Time) {
	if ok {
		err := l.shared.clear(ctx, "client:"+client)
		if err == nil && account {
			err = l.shared.clear(ctx, "account:"+user)
		}
		l.sharedResult(err)
		return
	}
	now := l.now()
	cn, cu, err := l.shared.fail(ctx, "client:"+client, now, func(n int) time.Time {
		if n < loginClientFailures {
			return time.Time{}
		}
		return now.Add(backoff(n - loginClientFailures))
	})
	if err == nil && account {
		an, au, err = l.shared.fail(ctx, "account:"+user, now, func(n int) time.Time {
			if n < loginAccountFails {
				return time.Time{}
			}
			return now.Add(backoff(n - loginAccountFails))
		})
	}
	l.sharedResult(err)
	if err == nil && l.fails.Add(1)%loginPruneEvery == 0 {
		l.sharedResult(l.shared.prune(ctx, now.Add(-loginIdle)))
	}
	return cn, an, cu, au
}

// result records the outcome of a password check allowed by allow.
func (l *loginLimiter) result(ctx context.Context, client, user string, account, ok bool) {
	var cn, an int
	var cu, au time.Time
	if l.shared != nil {
		cn, an, cu, au = l.recordShared(ctx, client, user, account, ok)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.client(client, now)
	if ok {
		c.failures, c.until = 0, time.Time{}
		if account {
			l.account.failures, l.account.until = 0, time.Time{}
		}
		return
	}
	// Failures spend the buckets' tokens; successes are free, so a script
	// sending basic auth with every request is never throttled.
	c.lim.AllowN(now, 1)
	c.failures = max(c.failures+1, cn)
	if c.failures >= loginClientFailures {
		c.until = later(now.Add(backoff(c.failures-loginClientFailures)), cu)
	}
	if account {
		l.account.lim.AllowN(now, 1)
		l.account.failures = max(l.account.failures+1, an)
		if l.account.failures >= loginAccountFails {
			l.account.until = later(now.Add(backoff(l.account.failures-loginAccountFails)), au)
		}
	}
	if c.failures >= loginClientFailures || (account && l.account.failures >= loginAccountFails) {
		l.log.Warn("serve: failed login, further attempts delayed", "client", client, "user", user,
			"clientFailures", c.failures, "accountFailures", l.account.failures,
			"retryAfter", later(c.until, l.account.until).Sub(now).Round(time.Second).String())
		c.logged = later(c.until, l.account.until)
	}
}

// logLockout logs a refused attempt once per lockout (the failure that
// began it was logged by result already).
func (l *loginLimiter) logLockout(c, a *loginBucket, client, user string, wait time.Duration, now time.Time) {
	until := later(c.until, a.until)
	if c.logged.Equal(until) {
		return
	}
	c.logged = until
	l.log.Warn("serve: login attempt refused during backoff", "client", client, "user", user,
		"retryAfter", wait.Round(time.Second).String())
}

// backoff is 1 s doubled n times, at most loginMaxBackoff.
func backoff(n int) time.Duration {
	if n >= 20 {
		return loginMaxBackoff
	}
	return min(time.Second<<n, loginMaxBackoff)
}

// client returns the bucket of key, making room in a full table by
// dropping idle clients (and, under a flood of addresses, arbitrary ones:
// the account's limit still holds).
func (l *loginLimiter) client(key string, now time.Time) *loginBucket {
	if c, ok := l.clients[key]; ok {
		c.seen = now
		return c
	}
	if len(l.clients) >= loginMaxClients {
		for k, c := range l.clients {
			if now.Sub(c.seen) > loginIdle && now.After(c.until) {
				delete(l.clients, k)
			}
		}
		for k := range l.clients {
			if len(l.clients) < loginMaxClients {
				break
			}
			delete(l.clients, k)
		}
	}
	c := &loginBucket{lim: rate.NewLimiter(rate.Every(loginClientEvery), loginClientBurst), seen: now}
	l.clients[key] = c
	return c
}

// refuseThrottled answers a throttled login attempt: 429 with Retry-After.
func refuseThrottled(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	jsonOrPageError(w, r, http.StatusTooManyRequests,
		"too many failed logins: try again in "+(time.Duration(max(secs, 1))*time.Second).String())
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
