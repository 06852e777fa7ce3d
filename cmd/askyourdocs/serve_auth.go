package main

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Cookies and headers of serve's security.
const (
	sessionCookie = "ayd_session"
	csrfCookie    = "ayd_csrf"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
	sessionTTL    = 12 * time.Hour
)

// contentSecurityPolicy allows only the app's own scripts, styles and
// forms: no inline script, no framing, no plugins.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// authRequired reports whether the write and admin routes need
// credentials (a password is configured).
func (s *server) authRequired() bool { return s.opts.password != "" }

// checkPassword compares user and password in constant time.
func (s *server) checkPassword(user, password string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(s.opts.user))
	p := subtle.ConstantTimeCompare([]byte(password), []byte(s.opts.password))
	return u&p == 1
}

// isAdmin reports whether r carries the admin's credentials: basic auth
// or a session cookie. Without configured credentials everyone is.
func (s *server) isAdmin(r *http.Request) bool {
	ok, _ := s.adminAuth(r)
	return ok
}

// adminAuth is isAdmin that also says how long to wait when basic-auth
// credentials were not checked because the login limiter refused them.
func (s *server) adminAuth(r *http.Request) (bool, time.Duration) {
	if !s.authRequired() {
		return true, 0
	}
	if c, err := r.Cookie(sessionCookie); err == nil && s.sessions.valid(c.Value) {
		return true, 0
	}
	if u, p, ok := r.BasicAuth(); ok {
		return s.login(r, u, p)
	}
	return false, 0
}

// login checks a user name and password through the login limiter: it
// returns false and the wait when the client or the account is throttled
// (the password is not looked at then).
func (s *server) login(r *http.Request, user, password string) (bool, time.Duration) {
	client := clientKey(r)
	account := user == s.opts.user
	if ok, wait := s.limiter.allow(r.Context(), client, user, account); !ok {
		return false, wait
	}
	ok := s.checkPassword(user, password)
	s.limiter.result(r.Context(), client, user, account, ok)
	return ok, 0
}

// requireAdmin answers 401 to requests without the admin's credentials: a
// JSON error with a basic-auth challenge for the API, a page linking to
// the login form otherwise; 429 when the login limiter refused them.
func (s *server) requireAdmin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ok, wait := s.adminAuth(r)
		if ok {
			next(w, r)
			return
		}
		if wait > 0 {
			refuseThrottled(w, r, wait)
			return
		}
		if wantsHTML(r) {
			s.render(w, r, http.StatusUnauthorized, "login.html", loginPage{Next: r.URL.RequestURI(), Message: "Please log in to use this page."})
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="askyourdocs", charset="UTF-8"`)
		jsonError(w, http.StatusUnauthorized, "credentials required: basic auth or a session from POST /api/login")
	}
}

// wantsHTML reports whether r comes from a browser page rather than a
// script: not an /api/ route and HTML accepted.
func wantsHTML(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/api/") && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// csrfToken returns the request's CSRF token, setting the cookie that
// carries it when the browser has none yet.
func (s *server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	tok := newID()
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	// Later reads in this request see it too.
	r.AddCookie(&http.Cookie{Name: csrfCookie, Value: tok})
	return tok
}

// csrfRefusal is the 403 message of a request without a valid CSRF token:
// what a person does, and what a script must send.
const csrfRefusal = "missing or wrong CSRF token: reload the page and try again " +
	"(a script sends the header X-Requested-With: any value, or a JSON body, or " + csrfHeader + " with the " + csrfCookie + " cookie's value)"

// csrf protects a state-changing route against cross-site requests. A
// request passes when it carries the CSRF token of its cookie (form field
// "csrf", query parameter "csrf" for multipart forms, or the X-CSRF-Token
// header), or when it is a request a cross-site page cannot send without
// the server's consent (a JSON body, or an X-Requested-With header, both
// of which need a CORS preflight this server never grants). A request
// whose Origin is another site is refused in any case.
func (s *server) csrf(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && o != "null" {
			u, err := url.Parse(o)
			if err != nil || u.Host != r.Host {
				jsonOrPageError(w, r, http.StatusForbidden, "cross-site request refused")
				return
			}
		}
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt == "application/json" || r.Header.Get("X-Requested-With") != "" {
			next(w, r)
			return
		}
		c, err := r.Cookie(csrfCookie)
		sent := r.Header.Get(csrfHeader)
		if sent == "" {
			sent = r.URL.Query().Get(csrfField)
		}
		if sent == "" && mt == "application/x-www-form-urlencoded" {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			sent = r.PostFormValue(csrfField)
		}
		if err != nil || sent == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(c.Value)) != 1 {
			jsonOrPageError(w, r, http.StatusForbidden, csrfRefusal)
			return
		}
		next(w, r)
	}
}

// secure wraps the app: security headers on every response, the host
// check of an unprotected server, and panics turned into a plain 500.
func (s *server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		// Without credentials the admin routes rely on loopback: refuse
		// other host names, so a DNS-rebinding page cannot reach them.
		if !s.authRequired() && !loopbackHost(r.Host) {
			jsonError(w, http.StatusMisdirectedRequest, "this server answers only to localhost")
			return
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				slog.Error("serve: handler panicked", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				jsonOrPageError(w, r, http.StatusInternalServerError, "internal error")
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, r)))
	})
}

// requestKey carries the request in its context, for hidePaths.
type requestKey struct{}

// hidePaths takes the server's file paths out of an answer for a visitor
// who may not open files (a password is set, --public-files is not, and
// the request of ctx is not the admin's): a citation of a file keeps its
// label as source and links to the passage by that label (passageLink)
// instead of the passage view and the file, whose links name the path. Answers outside a request (eval
// jobs) keep them.
func (s *server) hidePaths(ctx context.Context, out *askOutput) {
	r, _ := ctx.Value(requestKey{}).(*http.Request)
	if r == nil || !s.authRequired() || s.opts.publicFiles || s.isAdmin(r) {
		return
	}
	for i, c := range out.Citations {
		if isURL(c.Source) {
			continue
		}
		label, _, _ := strings.Cut(c.Title, " – ")
		out.Citations[i].Source = label
		ref := ""
		if u, err := url.Parse(c.URL); err == nil {
			ref = u.Query().Get("chunk")
		}
		out.Citations[i].URL = passageLink(label, ref, c.Excerpt)
		out.Citations[i].File = ""
	}
	for i, src := range out.Sources {
		if !isURL(src.URL) {
			out.Sources[i].URL = ""
		}
	}
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loginPage is the login form's data.
type loginPage struct {
	Next, Message string
}

func (s *server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login.html", loginPage{Next: safeNext(r.URL.Query().Get("next"))})
}

func (s *server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.PostFormValue("next"))
	ok, wait := s.login(r, r.PostFormValue("username"), r.PostFormValue("password"))
	if wait > 0 {
		refuseThrottled(w, r, wait)
		return
	}
	if !ok {
		s.render(w, r, http.StatusUnauthorized, "login.html", loginPage{Next: next, Message: "Wrong user name or password."})
		return
	}
	s.startSession(w, r)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// handleLoginAPI is POST /api/login {"username","password"} as evalset
// -login sends it.
func (s *server) handleLoginAPI(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := decodeJSON(w, r, &in, 1<<16); err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.authRequired() {
		jsonError(w, http.StatusUnauthorized, "wrong user name or password")
		return
	}
	ok, wait := s.login(r, in.Username, in.Password)
	if wait > 0 {
		refuseThrottled(w, r, wait)
		return
	}
	if !ok {
		jsonError(w, http.StatusUnauthorized, "wrong user name or password")
		return
	}
	s.startSession(w, r)
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (s *server) handleLogout(w http.ResponseWriter, r *http.Request) {
	// The cookie is signed, not stored: logging out deletes it in this
	// browser (a copy stays valid until it expires or the password changes).
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/ask", http.StatusSeeOther)
}

func (s *server) startSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.sessions.create(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionTTL / time.Second)})
}

// safeNext keeps a post-login redirect on this site: next must be a path
// ("/..." but not "//..."), with no backslash (browsers read it as a
// slash), no control character or space (browsers drop tabs and newlines,
// so "/\t/evil.example" would become "//evil.example"), and parse as a
// URL without scheme or host. Anything else becomes "/index".
func safeNext(next string) string {
	const fallback = "/index"
	if len(next) < 1 || len(next) > 2000 || next[0] != '/' || strings.HasPrefix(next, "//") {
		return fallback
	}
	for _, r := range next {
		if r <= ' ' || r == 0x7f || r == '\\' || (r >= 0x80 && r <= 0x9f) || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fallback
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") ||
		strings.HasPrefix(u.Path, "//") {
		return fallback
	}
	return next
}

// writeJSON writes v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// jsonError writes {"error": msg}.
func jsonError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// jsonOrPageError writes an error as JSON for scripts, as a page for
// browsers.
func jsonOrPageError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if wantsHTML(r) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		errorTemplate.Execute(w, pageData{P: struct {
			Status int
			Text   string
			Msg    string
		}{status, http.StatusText(status), msg}})
		return
	}
	jsonError(w, status, msg)
}

// errMaxBody is returned by decodeJSON for a body over its limit.
var errMaxBody = errors.New("request body too large")

// decodeJSON decodes r's JSON body (at most limit bytes) into v.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errMaxBody
		}
		return errors.New("malformed JSON body: " + err.Error())
	}
	return nil
}

// minServePassword is the shortest ASKYOURDOCS_PASSWORD serve accepts
// when it listens beyond loopback, where anyone on the network can guess.
const minServePassword = 12

// checkServePassword refuses a short password on a non-loopback address.
func checkServePassword(addr, password string) error {
	if password == "" || loopbackAddr(addr) || utf8.RuneCountInString(password) >= minServePassword {
		return nil
	}
	return fmt.Errorf("%w: %s has %d characters; serving on %s (beyond loopback) needs at least %d",
		errUsage, envServePassword, utf8.RuneCountInString(password), addr, minServePassword)
}

// serveTLSConfig loads --tls-cert and --tls-key; nil when both are empty
// (plain HTTP).
func serveTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("%w: --tls-cert and --tls-key go together", errUsage)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serve: TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// filesAccess guards /files and /api/sources (indexed files and their
// absolute paths on the server): admin only when a password is set,
// unless --public-files.
func (s *server) filesAccess(next http.HandlerFunc) http.HandlerFunc {
	if s.opts.publicFiles {
		return next
	}
	return s.requireAdmin(next)
}
