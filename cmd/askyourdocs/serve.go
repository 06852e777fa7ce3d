package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/firebase/genkit/go/core"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Environment variables of serve's credentials.
const (
	envServeUser     = "ASKYOURDOCS_USER"
	envServePassword = "ASKYOURDOCS_PASSWORD"
)

// serveOptions configure a server; the zero value means the defaults.
type serveOptions struct {
	// user and password guard the write and admin routes; without a
	// password they are open and the server must listen on loopback.
	user, password string
	// maxUpload caps one upload request's body (default 32 MiB).
	maxUpload int64
	// dataDir holds uploads, the feedback log and eval datasets.
	dataDir string
	// uploadDir holds the uploaded files (default dataDir/uploads); with
	// several serve processes it is a directory all of them read at the
	// same path. pgDSN, when set, holds the jobs (else dataDir/jobs.sqlite).
	uploadDir, pgDSN string
	// jobDeadAfter is how long a serve process may go without a heartbeat
	// before others run its jobs again (default 15 s).
	jobDeadAfter time.Duration
	// jobNamespace keeps the jobs of each index (--name) apart when
	// several share one database or --data directory.
	jobNamespace string
	// logOut receives the startup notes.
	logOut io.Writer
	// publicFiles serves /files and the file paths of /api/sources to
	// everyone even when a password is set (--public-files).
	publicFiles bool
	// maxAsks caps the asks answered at once; more get 503 with
	// Retry-After (default defaultMaxAsks).
	maxAsks int
	// streamTimeout bounds a streamed answer, which --write-timeout
	// does not (default 10 min).
	streamTimeout time.Duration
	// allowPrivate lets the web pages indexed be on private and loopback
	// addresses (--allow-private).
	allowPrivate bool
}

const defaultMaxUpload = 32 << 20

// server is the web app over one backend.
type server struct {
	b    *backend
	opts serveOptions
	// ctx is the server's long-lived context: jobs run with it.
	ctx      context.Context
	jobs     serveJobs
	feedback feedbackDB
	metrics  *serveMetrics
	askSlots chan struct{} // one per ask in flight (opts.maxAsks)
	sessions *sessionStore
	limiter  *loginLimiter
	// uploadDir holds uploaded files, one random directory per upload;
	// evalDir the eval datasets the eval routes write and serve.
	uploadDir, evalDir string

	askFlow   *core.Flow[askInput, *askOutput, string]
	indexFlow *core.Flow[indexInput, *indexReport, string]
	handler   http.Handler
	// pages fetches the web pages indexed (opts.allowPrivate).
	pages *askyourdocs.Fetcher
	// watch keeps the --watch folders indexed (nil without them).
	watch *serveWatch
}

// newServer sets up the app over b: the feedback log, the job store, the
// Genkit flows and the routes. Close stops the job worker.
func newServer(ctx context.Context, b *backend, opts serveOptions) (*server, error) {
	if opts.maxUpload <= 0 {
		opts.maxUpload = defaultMaxUpload
	}
	if opts.user == "" {
		opts.user = "admin"
	}
	if opts.logOut == nil {
		opts.logOut = io.Discard
	}
	s := &server{b: b, opts: opts, ctx: ctx, limiter: newLoginLimiter(), pages: newPageFetcher(opts.allowPrivate)}
	s.uploadDir = filepath.Join(opts.dataDir, "uploads")
	if opts.uploadDir != "" {
		s.uploadDir = opts.uploadDir
	}
	s.evalDir = filepath.Join(opts.dataDir, "eval")
	for _, d := range []string{s.uploadDir, s.evalDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	sessions, err := newSessionStore(ctx, b, opts)
	if err != nil {
		return nil, err
	}
	s.sessions = sessions
	if s.authRequired() {
		if s.limiter.shared, err = openLoginShared(ctx, b, opts.dataDir); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	fb, err := openServeFeedback(ctx, b, opts.dataDir, opts.logOut)
	if err != nil {
		return nil, err
	}
	s.feedback = fb
	if s.jobs, err = openServeJobs(ctx, opts); err != nil {
		return nil, err
	}
	s.initOps()
	s.defineFlows()
	s.handleJobKinds()
	s.handler = s.routes()
	if err := s.jobs.Start(); err != nil {
		s.jobs.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	return s, nil
}

// Close stops the job workers: a running job is cancelled and goes back
// to the queue, for the next start or another serve process.
func (s *server) Close() error {
	err := s.jobs.Close()
	if s.limiter.shared != nil {
		err = errors.Join(err, s.limiter.shared.Close())
	}
	return err
}

// ServeHTTP serves the app.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// routes returns the app's handler: every route, then the security
// middleware (headers, host check, panic recovery) around them.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	admin := s.requireAdmin
	// Pages and read routes, open to everyone who can reach the server.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ask", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ask", s.limitAsk(s.handleAskPage))
	mux.HandleFunc("POST /ask", s.csrf(s.limitAsk(s.handleAskForm)))
	mux.HandleFunc("POST /api/ask", s.csrf(s.limitAsk(s.handleAskAPI)))
	mux.HandleFunc("POST /api/feedback", s.csrf(s.handleFeedbackAPI))
	mux.HandleFunc("POST /feedback", s.csrf(s.handleFeedbackForm))
	mux.HandleFunc("GET /api/sources", s.filesAccess(s.handleSourcesAPI))
	mux.HandleFunc("GET /files", s.filesAccess(s.handleFile))
	mux.HandleFunc("GET /view", s.handleView) // files: filesAccess inside
	mux.HandleFunc("GET /passage", s.handlePassageView)
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/static/favicon.svg", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /login", s.handleLoginPage)
	mux.HandleFunc("POST /login", s.csrf(s.handleLoginForm))
	mux.HandleFunc("POST /api/login", s.csrf(s.handleLoginAPI))
	mux.HandleFunc("POST /logout", s.csrf(s.handleLogout))

	// Write and admin routes.
	mux.HandleFunc("GET /index", admin(s.handleIndexPage))
	mux.HandleFunc("POST /index/upload", admin(s.csrf(s.handleUpload)))
	mux.HandleFunc("POST /index/url", admin(s.csrf(s.handleAddURL)))
	mux.HandleFunc("POST /index/crawl", admin(s.csrf(s.handleCrawl)))
	mux.HandleFunc("POST /index/delete", admin(s.csrf(s.handleDelete)))
	mux.HandleFunc("GET /api/jobs", admin(s.handleJobsAPI))
	mux.HandleFunc("GET /api/jobs/{id}", admin(askyourdocs.JobStatusHandler(s.jobs)))
	mux.HandleFunc("GET /api/watch", admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"folders": s.watch.states()})
	}))
	mux.HandleFunc("GET /api/feedback", admin(s.handleFeedbackLog))
	s.evalRoutes(mux, admin)
	s.opsRoutes(mux, admin)
	return s.secure(mux)
}

func (a *cliApp) cmdServe(ctx context.Context, args []string) error {
	fset, cf := a.flags("serve")
	addr := fset.String("addr", "127.0.0.1:3400", "address to listen on (host:port)")
	maxUploadMB := fset.Int("max-upload-mb", defaultMaxUpload>>20, "largest upload request in MiB")
	tlsCert := fset.String("tls-cert", "", "serve HTTPS with this PEM certificate (chain) file; needs --tls-key")
	tlsKey := fset.String("tls-key", "", "the PEM private key of --tls-cert")
	publicFiles := fset.Bool("public-files", false, "serve /files and /api/sources to everyone even when "+envServePassword+" is set")
	uploads := fset.String("uploads", "", "directory of uploaded files, shared by all serve processes (default DATA/uploads)")
	jobDeadAfter := fset.Duration("job-dead-after", 15*time.Second, "run a job again when the serve process running it has been silent this long")
	recrawl := fset.Duration("recrawl", 0, "re-index the web pages and crawls of the index this often (e.g. 24h; "+
		"unchanged chunks are not embedded again, pages answering 404/410 leave the index; with --pg one process does it)")
	var watch stringList
	fset.Var(&watch, "watch", "keep this folder indexed while serving: each batch of changes is an index job "+
		"(repeatable; with --pg one serve process watches each folder)")
	ops := addOpsFlags(fset)
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: serve takes no arguments", errUsage)
	}
	if *maxUploadMB < 1 {
		return fmt.Errorf("%w: --max-upload-mb must be at least 1", errUsage)
	}
	if err := ops.check(); err != nil {
		return err
	}
	watched, err := watchFolderArgs(watch)
	if err != nil {
		return err
	}
	opts := serveOptions{
		user:      strings.TrimSpace(a.getenv(envServeUser)),
		password:  a.getenv(envServePassword),
		maxUpload: int64(*maxUploadMB) << 20,
		dataDir:   cf.data,
		uploadDir: *uploads,
		pgDSN:     cf.pg,

		jobDeadAfter: *jobDeadAfter,
		jobNamespace: jobNamespace(cf.name),
		logOut:       a.stderr,

		publicFiles:   *publicFiles,
		maxAsks:       ops.maxAsks,
		streamTimeout: ops.streamTimeout,
		allowPrivate:  cf.allowPrivate,
	}
	if opts.pgDSN == "" {
		opts.pgDSN = strings.TrimSpace(a.getenv("ASKYOURDOCS_DSN"))
	}
	if opts.password == "" && !loopbackAddr(*addr) {
		return fmt.Errorf("%w: without %s the write and admin routes have no protection, so serve listens only on loopback "+
			"(127.0.0.1, ::1, localhost); set %s (and %s, default admin) to serve on %s",
			errUsage, envServePassword, envServePassword, envServeUser, *addr)
	}
	if err := checkServePassword(*addr, opts.password); err != nil {
		return err
	}
	tlsConfig, err := serveTLSConfig(*tlsCert, *tlsKey)
	if err != nil {
		return err
	}
	askyourdocs.SetAllowPrivateTargets(cf.allowPrivate)
	if err := os.MkdirAll(cf.data, 0o755); err != nil {
		return err
	}
	b, err := a.open(ctx, cf, openOptions{models: true, write: true, reads: true})
	if err != nil {
		return err
	}
	defer b.Close()
	s, err := newServer(ctx, b, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if *recrawl < 0 {
		return fmt.Errorf("%w: --recrawl must not be negative", errUsage)
	}
	if len(watched) > 0 || *recrawl > 0 {
		if s.watch, err = newServeWatch(ctx, s, watched, opts.pgDSN, opts.jobDeadAfter, *recrawl); err != nil {
			return err
		}
		wctx, stopWatch := context.WithCancel(ctx)
		watchDone := make(chan struct{})
		go func() {
			defer close(watchDone)
			s.watch.run(wctx)
		}()
		defer func() { // before the jobs and the store close
			stopWatch()
			<-watchDone
		}()
		if len(watched) > 0 {
			fmt.Fprintf(a.stderr, "askyourdocs serve: watching %s\n", strings.Join(watched, ", "))
		}
		if *recrawl > 0 {
			fmt.Fprintf(a.stderr, "askyourdocs serve: re-indexing the web sources every %s\n", *recrawl)
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := newHTTPServer(s, *ops)
	srv.TLSConfig = tlsConfig
	llm := "none: answers are extractive (set LLM_MODEL for generated answers)"
	if b.llm != nil {
		llm = b.llmSpec
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	fmt.Fprintf(a.stderr, "askyourdocs serve: %s://%s/ (index %s, embedder %s, LLM %s)\n",
		scheme, ln.Addr(), b.store.describe(), b.manifest.Embedder, llm)
	if opts.password == "" {
		fmt.Fprintf(a.stderr, "askyourdocs serve: %s is not set, so uploads, deletes and the admin routes are open to anyone "+
			"on this machine; listening on loopback only\n", envServePassword)
	} else {
		fmt.Fprintf(a.stderr, "askyourdocs serve: write and admin routes need user %q and %s (basic auth or /login)\n",
			s.opts.user, envServePassword)
		if tlsConfig == nil && !loopbackAddr(*addr) {
			fmt.Fprintf(a.stderr, "askyourdocs serve: warning: plain HTTP on %s: the password crosses the network unencrypted; "+
				"use --tls-cert/--tls-key or a TLS proxy\n", *addr)
		}
	}
	errc := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintln(a.stderr, "askyourdocs serve: stopped")
	return nil
}

// loopbackAddr reports whether addr's host is a loopback address or
// localhost (an empty host means every interface: not loopback).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
