package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"
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

// sessionStore holds the login sessions in memory (a restart logs
// everybody out).
type sessionStore struct {
	mu       sync.Mutex
	sessions map[string]time.Time // token -> expiry
}

func newSessionStore() *sessionStore { return &sessionStore{sessions: map[string]time.Time{}} }

// create returns a new session token.
func (st *sessionStore) create() string {
	tok := newID()
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	for t, exp := range st.sessions {
		if now.After(exp) {
			delete(st.sessions, t)
		}
	}
	st.sessions[tok] = now.Add(sessionTTL)
	return tok
}

// valid reports whether tok is a live session.
func (st *sessionStore) valid(tok string) bool {
	if tok == "" {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	exp, ok := st.sessions[tok]
	return ok && time.Now().Before(exp)
}

func (st *sessionStore) remove(tok string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.sessions, tok)
}

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
	if !s.authRequired() {
		return true
	}
	if u, p, ok := r.BasicAuth(); ok && s.checkPassword(u, p) {
		return true
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && s.sessions.valid(c.Value)
}

// requireAdmin answers 401 to requests without the admin's credentials: a
// JSON error with a basic-auth challenge for the API, a page linking to
// the login form otherwise.
func (s *server) requireAdmin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.isAdmin(r) {
			next(w, r)
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
			jsonOrPageError(w, r, http.StatusForbidden, "missing or wrong CSRF token: reload the page and try again")
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
		next.ServeHTTP(w, r)
	})
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
	if !s.checkPassword(r.PostFormValue("username"), r.PostFormValue("password")) {
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
	if !s.authRequired() || !s.checkPassword(in.Username, in.Password) {
		jsonError(w, http.StatusUnauthorized, "wrong user name or password")
		return
	}
	s.startSession(w, r)
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (s *server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/ask", http.StatusSeeOther)
}

func (s *server) startSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.sessions.create(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionTTL / time.Second)})
}

// safeNext keeps a post-login redirect on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/index"
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
