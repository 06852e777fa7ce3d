package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the login limiter and sessions.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a bytes.Buffer safe for a logger and a test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// throttledServe is a test server with a password, a frozen clock and the
// limiter's log captured.
func throttledServe(t *testing.T, password string) (*testServe, *fakeClock, *syncBuffer) {
	ts := newTestServe(t, nil, password, 0)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	logs := &syncBuffer{}
	ts.s.limiter.now = clock.now
	ts.s.limiter.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return ts, clock, logs
}

// TestServeLoginThrottled sends 1,000 wrong passwords in a loop over
// loopback, through POST /api/login and through basic auth: only the first
// few are checked, the rest get 429 with Retry-After, the lockout is
// logged at warn level (a few lines, not one per guess), the right
// password waits for the backoff too, and works once it is over.
func TestServeLoginThrottled(t *testing.T) {
	const password = "correct horse battery"
	for _, via := range []string{"api", "basic"} {
		t.Run(via, func(t *testing.T) {
			ts, clock, logs := throttledServe(t, password)
			try := func(pw string) *http.Response {
				if via == "api" {
					body, _ := json.Marshal(map[string]string{"username": "admin", "password": pw})
					resp, _ := ts.request(t, nil, "POST", "/api/login", "application/json", body, nil)
					return resp
				}
				req, _ := http.NewRequest("GET", ts.URL+"/api/jobs", nil)
				req.SetBasicAuth("admin", pw)
				resp, err := ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			checked, throttled := 0, 0
			for i := range 1000 {
				resp := try(fmt.Sprintf("guess-%d", i))
				switch resp.StatusCode {
				case http.StatusUnauthorized:
					checked++
				case http.StatusTooManyRequests:
					throttled++
					if resp.Header.Get("Retry-After") == "" {
						t.Fatalf("429 without Retry-After")
					}
				default:
					t.Fatalf("guess %d: %s", i, resp.Status)
				}
			}
			t.Logf("1000 wrong passwords: %d checked, %d refused with 429", checked, throttled)
			if checked != loginClientFailures || throttled != 1000-loginClientFailures {
				t.Errorf("checked %d, throttled %d; want %d checked", checked, throttled, loginClientFailures)
			}
			lines := strings.Count(logs.String(), "level=WARN")
			if !strings.Contains(logs.String(), "further attempts delayed") || !strings.Contains(logs.String(), "client=127.0.0.1") || lines > 3 {
				t.Errorf("%d warn lines:\n%s", lines, logs)
			}
			// The right password waits for the backoff too.
			if resp := try(password); resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("right password during the backoff: %s", resp.Status)
			}
			clock.add(2 * time.Second)
			if resp := try(password); resp.StatusCode != http.StatusOK {
				t.Errorf("right password after the backoff: %s", resp.Status)
			}
			// The success cleared the failures: one wrong guess is checked.
			if resp := try("again wrong"); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("a wrong guess after a success: %s", resp.Status)
			}
		})
	}
}

// TestServeLoginThrottledRealClock is the 1,000-guess loop with the real
// clock: however long the loop takes, no more guesses are checked than the
// doubling backoff allows in that time (5, then one per elapsed backoff).
func TestServeLoginThrottledRealClock(t *testing.T) {
	ts := newTestServe(t, nil, "real clock password", 0)
	logs := &syncBuffer{}
	ts.s.limiter.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start := time.Now()
	checked := 0
	for i := range 1000 {
		body, _ := json.Marshal(map[string]string{"username": "admin", "password": fmt.Sprintf("guess-%d", i)})
		if resp, _ := ts.request(t, nil, "POST", "/api/login", "application/json", body, nil); resp.StatusCode == http.StatusUnauthorized {
			checked++
		}
	}
	elapsed := time.Since(start)
	// After n backoffs of 1, 2, 4 ... s, 2^n - 1 s have passed.
	allowed := loginClientFailures
	for waited := time.Duration(0); ; allowed++ {
		waited += backoff(allowed - loginClientFailures)
		if waited > elapsed {
			break
		}
	}
	t.Logf("1000 guesses in %v: %d checked (%.0f guesses/s sent, %.1f/s checked)", elapsed.Round(time.Millisecond), checked,
		1000/elapsed.Seconds(), float64(checked)/elapsed.Seconds())
	if checked > allowed || checked < loginClientFailures {
		t.Errorf("%d guesses checked in %v, the backoff allows %d", checked, elapsed, allowed)
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Error("nothing logged")
	}
}

// TestLoginLimiterBackoffAndAccount checks the doubling backoff of one
// client and the account's limit against guesses from many addresses.
func TestLoginLimiterBackoffAndAccount(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	l := newLoginLimiter()
	l.now = clock.now
	l.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	fail := func(client string) bool {
		ok, _ := l.allow(t.Context(), client, "admin", true)
		if ok {
			l.result(t.Context(), client, "admin", true, false)
		}
		return ok
	}
	// One client: 5 failures, then waits of 1, 2, 4 and 8 s.
	for i := range loginClientFailures {
		if !fail("10.0.0.1") {
			t.Fatalf("attempt %d refused", i)
		}
	}
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		clock.add(wait - time.Millisecond)
		if ok, left := l.allow(t.Context(), "10.0.0.1", "admin", true); ok || left <= 0 {
			t.Fatalf("allowed before the %v backoff ended", wait)
		}
		clock.add(time.Millisecond)
		if !fail("10.0.0.1") {
			t.Fatalf("refused after the %v backoff", wait)
		}
	}
	// Many clients, a few guesses each: the account locks after 20 in a row.
	l2 := newLoginLimiter()
	l2.now = clock.now
	l2.log = l.log
	allowed := 0
	for i := range 200 {
		if ok, _ := l2.allow(t.Context(), fmt.Sprintf("10.1.%d.%d", i/250, i%250), "admin", true); ok {
			allowed++
			l2.result(t.Context(), fmt.Sprintf("10.1.%d.%d", i/250, i%250), "admin", true, false)
		}
	}
	if allowed != loginAccountFails {
		t.Errorf("200 clients got %d guesses at the account, want %d", allowed, loginAccountFails)
	}
	// Another user name is not the account: only the client limit holds.
	if ok, _ := l2.allow(t.Context(), "10.2.0.1", "nobody", false); !ok {
		t.Error("a wrong user name from a fresh client is throttled by the account")
	}
	// IPv6 clients are throttled by their /64.
	r1 := &http.Request{RemoteAddr: "[2001:db8:1:2:aaaa::1]:5000"}
	r2 := &http.Request{RemoteAddr: "[2001:db8:1:2:bbbb::2]:6000"}
	if clientKey(r1) != clientKey(r2) || clientKey(&http.Request{RemoteAddr: "192.0.2.7:80"}) != "192.0.2.7" {
		t.Errorf("client keys %q %q", clientKey(r1), clientKey(r2))
	}
	// The table of clients stays bounded.
	l3 := newLoginLimiter()
	l3.now = clock.now
	for i := range loginMaxClients + 500 {
		l3.allow(t.Context(), fmt.Sprintf("c%d", i), "x", false)
	}
	if n := len(l3.clients); n > loginMaxClients {
		t.Errorf("%d clients kept", n)
	}
}

// TestSafeNext checks the post-login redirect against open-redirect forms,
// as values and through POST /login: the Location stays on the site, also
// as a browser reads it (tabs and newlines dropped, backslash = slash).
func TestSafeNext(t *testing.T) {
	hostile := []string{
		"/\t/evil.example", "/%09/evil.example", "//evil.example", "///evil.example", `\\evil.example`, `/\evil.example`,
		`/\/evil.example`, "https:evil.example", "https://evil.example/", "http:/evil.example", "javascript:alert(1)",
		"/\n/evil.example", "/\r\n/evil.example", " //evil.example", "evil.example", "/%2F/evil.example", "/%5Cevil.example",
		"/\u00a0/evil.example", "\x00//evil.example", "/\u2028/evil.example", "",
	}
	for _, n := range hostile {
		got := safeNext(n)
		if got != "/index" && !onSite(got) {
			t.Errorf("safeNext(%q) = %q leaves the site", n, got)
		}
	}
	for _, n := range []string{"/index", "/ask?q=a+b", "/index#jobs", "/api/x?y=%2F"} {
		if got := safeNext(n); got != n {
			t.Errorf("safeNext(%q) = %q, want it kept", n, got)
		}
	}

	ts := newTestServe(t, nil, "long enough password", 0)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, page := ts.request(t, c, "GET", "/login", "", nil, nil)
	tok := regexp.MustCompile(`name="csrf-token" content="([0-9a-f]{32})"`).FindStringSubmatch(page)
	if tok == nil {
		t.Fatal("no CSRF token")
	}
	for _, n := range hostile {
		form := url.Values{"username": {"admin"}, "password": {"long enough password"}, "next": {n}, "csrf": {tok[1]}}
		resp, body := ts.request(t, c, "POST", "/login", "application/x-www-form-urlencoded", []byte(form.Encode()), nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("login with next %q: %s %s", n, resp.Status, body)
		}
		loc := resp.Header.Get("Location")
		base, _ := url.Parse(ts.URL + "/login")
		ref, err := url.Parse(browserClean(loc))
		if err != nil {
			t.Errorf("next %q: Location %q does not parse", n, loc)
			continue
		}
		if got := base.ResolveReference(ref); got.Host != base.Host || got.Scheme != base.Scheme {
			t.Errorf("next %q: Location %q sends the browser to %s", n, loc, got)
		}
	}
	// The raw query form of the issue, through the login page.
	_, page = ts.request(t, c, "GET", "/login?next=/%09/evil.example", "", nil, nil)
	if strings.Contains(page, "evil.example") {
		t.Error("the login page carries the hostile next on")
	}
}

// onSite reports whether a browser following Location p stays on the site.
func onSite(p string) bool {
	p = browserClean(p)
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//")
}

// browserClean is what a browser does to a Location before resolving it:
// drop tabs and newlines, read backslashes as slashes, trim spaces and
// control characters at the ends.
func browserClean(p string) string {
	p = strings.NewReplacer("\t", "", "\n", "", "\r", "", `\`, "/").Replace(p)
	return strings.TrimFunc(p, func(r rune) bool { return r <= ' ' })
}

// TestSessionsSignedAndShared checks the signed session cookies: two
// stores over one data directory (two processes) accept each other's
// tokens; a forged, expired or re-signed token and one issued under
// another password are refused.
func TestSessionsSignedAndShared(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sessionKeyFile)
	// Processes starting at once agree on one secret.
	var wg sync.WaitGroup
	secrets := make([][]byte, 8)
	for i := range secrets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := fileSessionSecret(path)
			if err != nil {
				t.Error(err)
			}
			secrets[i] = b
		}()
	}
	wg.Wait()
	for i := range secrets {
		if !bytes.Equal(secrets[i], secrets[0]) || len(secrets[0]) != 32 {
			t.Fatalf("secret %d differs", i)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode: %v %v", fi.Mode(), err)
	}
	b := &backend{store: &sqliteStore{}}
	open := func(pw string) *sessionStore {
		st, err := newSessionStore(context.Background(), b, serveOptions{user: "admin", password: pw, dataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, other := open("first password!"), open("first password!")
	tok := a.create()
	if !other.valid(tok) || !a.valid(tok) {
		t.Fatal("a token is not valid on the other store")
	}
	if open("second password").valid(tok) {
		t.Error("a token survives a password change")
	}
	last := tok[len(tok)-1]
	flip := byte('A')
	if last == 'A' {
		flip = 'B'
	}
	for _, bad := range []string{"", "v1.", tok[:len(tok)-1] + string(flip), strings.Replace(tok, "v1.", "v2.", 1), tok + "x", "x" + tok} {
		if other.valid(bad) {
			t.Errorf("forged token %q accepted", bad)
		}
	}
	clock := &fakeClock{t: time.Now()}
	other.now = clock.now
	clock.add(sessionTTL + time.Second)
	if other.valid(tok) {
		t.Error("an expired token is accepted")
	}
}

// startServe runs the built binary's serve in dir and returns its base URL
// once it listens; the process is killed at the end of the test.
func startServe(t *testing.T, dir string, env []string, args ...string) (string, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, buildCLI(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = cliEnv(env...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	var log bytes.Buffer
	sc := bufio.NewScanner(pr)
	re := regexp.MustCompile(`askyourdocs serve: (https?://127\.0\.0\.1:\d+)/`)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			// The banner's second line follows at once.
			if sc.Scan() {
				log.WriteString(sc.Text() + "\n")
			}
			go io.Copy(io.Discard, pr)
			return m[1], &log
		}
	}
	t.Fatalf("serve did not start:\n%s", log.String())
	return "", nil
}

// TestServeSessionAcrossProcesses logs in on one serve process and uses
// the cookie on another: over one PostgreSQL database with separate --data
// directories (machines), the secret is in the database.
func TestServeSessionAcrossProcesses(t *testing.T) {
	dsn := cliTestDSN(t)
	work := t.TempDir()
	name := fmt.Sprintf("sess%d", time.Now().UnixNano())
	env := []string{envServePassword + "=shared process password"}
	urlA, _ := startServe(t, work, env, "--pg", dsn, "--name", name, "--data", filepath.Join(work, "a"))
	urlB, _ := startServe(t, work, env, "--pg", dsn, "--name", name, "--data", filepath.Join(work, "b"))
	cookie := loginCookie(t, urlA, "shared process password")
	req, _ := http.NewRequest("GET", urlB+"/api/jobs", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("process A's session on process B: %s", resp.Status)
	}
	// Without the cookie B refuses.
	resp, err = http.Get(urlB + "/api/jobs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("process B without a session: %s", resp.Status)
	}
}

// loginCookie logs in through POST /api/login and returns the session
// cookie.
func loginCookie(t *testing.T, base, password string) *http.Cookie {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": "admin", "password": password})
	resp, err := http.Post(base+"/api/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			return c
		}
	}
	t.Fatalf("login: %s, no session cookie", resp.Status)
	return nil
}

// TestServeCommandHardening runs the built binary: a short password beyond
// loopback is refused, the banner names the default user, and --tls-cert
// serves HTTPS with a certificate made here, with Secure cookies.
func TestServeCommandHardening(t *testing.T) {
	work := t.TempDir()
	r := runCLI(t, work, []string{envServePassword + "=short"}, "serve", "--data", filepath.Join(work, "d"), "--addr", "0.0.0.0:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, fmt.Sprintf("at least %d", minServePassword)) {
		t.Errorf("short password on 0.0.0.0: %v", r)
	}
	r = runCLI(t, work, nil, "serve", "--data", filepath.Join(work, "d"), "--tls-cert", "x.pem")
	if r.code != exitUsage || !strings.Contains(r.stderr, "go together") {
		t.Errorf("--tls-cert alone: %v", r)
	}

	certFile, keyFile, pool := writeTestCert(t, work)
	env := []string{envServePassword + "=tls test password"}
	base, log := startServe(t, work, env, "--data", filepath.Join(work, "d"), "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(base, "https://") || !strings.Contains(log.String(), `need user "admin"`) {
		t.Fatalf("banner:\n%s", log)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	body, _ := json.Marshal(map[string]string{"username": "admin", "password": "tls test password"})
	resp, err := c.Post(base+"/api/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("login over TLS: %s", resp.Status)
	}
	if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "Secure") || !strings.Contains(sc, "HttpOnly") {
		t.Errorf("session cookie over TLS: %q", sc)
	}
	// Plain HTTP on the TLS port gets no app.
	resp, err = http.Get(strings.Replace(base, "https://", "http://", 1) + "/ask")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("plain HTTP answered: %s", b)
		}
	}
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 and returns
// its files and a pool trusting it.
func writeTestCert(t *testing.T, dir string) (string, string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "askyourdocs test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeFilesNeedAdmin: with a password, /files and /api/sources
// answer 401 without credentials and serve the admin; --public-files
// opens them again.
func TestServeFilesNeedAdmin(t *testing.T) {
	const password = "files test password"
	ts := newTestServe(t, nil, password, 0)
	hdr := map[string]string{"X-Requested-With": "test"}
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth("admin", password)
	hdr["Authorization"] = r.Header.Get("Authorization")
	job := ts.uploadAndWait(t, hdr, map[string][]byte{"prices.html": readFixture(t, "prices.html")})
	if job.Status != "done" {
		t.Fatalf("upload: %+v", job)
	}
	srcs, err := ts.s.b.store.Sources(context.Background())
	if err != nil || len(srcs) == 0 {
		t.Fatal(err)
	}
	file := "/files?url=" + url.QueryEscape(srcs[0].URL)
	for _, p := range []string{file, "/api/sources"} {
		resp, body := ts.request(t, nil, "GET", p, "", nil, nil)
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, srcs[0].URL) {
			t.Errorf("GET %s without credentials: %s %s", p, resp.Status, body)
		}
		if resp, _ := ts.request(t, nil, "GET", p, "", nil, map[string]string{"Authorization": hdr["Authorization"]}); resp.StatusCode != 200 {
			t.Errorf("GET %s as admin: %s", p, resp.Status)
		}
	}
	// Answers name no server path to a visitor, and do to the admin.
	body, _ := json.Marshal(askInput{Question: "How much does a tour cost?"})
	resp, out := ts.request(t, nil, "POST", "/api/ask", "application/json", body, nil)
	if resp.StatusCode != 200 || strings.Contains(out, ts.data) || strings.Contains(out, url.QueryEscape(ts.data)) || !strings.Contains(out, "prices.html") {
		t.Errorf("visitor's answer: %s %s", resp.Status, out)
	}
	// The visitor's citation opens the passage it cites (by the source's
	// label), its quote marked, with no path and no file link.
	var visitor askOutput
	if err := json.Unmarshal([]byte(out), &visitor); err != nil || len(visitor.Citations) == 0 {
		t.Fatalf("visitor's answer: %v %s", err, out)
	}
	c := visitor.Citations[0]
	if !strings.HasPrefix(c.URL, "/passage?") || c.File != "" {
		t.Errorf("visitor's citation links %q (file %q), want its passage", c.URL, c.File)
	}
	resp, passage := ts.request(t, nil, "GET", strings.TrimSuffix(c.URL, "#passage"), "", nil, nil)
	first, _, _ := strings.Cut(c.Excerpt, "\n")
	if resp.StatusCode != 200 || !strings.Contains(passage, "<mark>"+html.EscapeString(first)+"</mark>") ||
		strings.Contains(passage, ts.data) || strings.Contains(passage, "/files?") {
		t.Errorf("visitor's passage view: %s, want %q marked, no path:\n%s", resp.Status, first, passage)
	}
	if resp, _ := ts.request(t, nil, "GET", "/passage?src=nothing.html&chunk=x", "", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown passage: %s", resp.Status)
	}
	_, page := ts.request(t, nil, "GET", "/ask?q="+url.QueryEscape("How much does a tour cost?"), "", nil, nil)
	if strings.Contains(page, ts.data) || strings.Contains(page, url.QueryEscape(ts.data)) {
		t.Errorf("visitor's answer page names server paths")
	}
	_, out = ts.request(t, nil, "POST", "/api/ask", "application/json", body, map[string]string{"Authorization": hdr["Authorization"]})
	if !strings.Contains(out, url.QueryEscape(srcs[0].URL)) {
		t.Errorf("admin's answer has no file link: %s", out)
	}
	ts.s.opts.publicFiles = true
	ts.s.handler = ts.s.routes()
	if resp, _ := ts.request(t, nil, "GET", file, "", nil, nil); resp.StatusCode != 200 {
		t.Errorf("GET /files with --public-files: %s", resp.Status)
	}
}
