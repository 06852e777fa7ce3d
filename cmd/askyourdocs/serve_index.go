package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// maxUploadFiles caps the files of one upload.
const maxUploadFiles = 50

// Crawl limits a client may ask for.
const (
	defaultServeCrawlPages = 50
	maxServeCrawlPages     = 500
	defaultServeCrawlDepth = 3
	maxServeCrawlDepth     = 10
)

// indexInput is the input of the index flow: files or folders on the
// server, web pages, or (Crawl) sites to crawl from URLs.
type indexInput struct {
	Paths    []string `json:"paths,omitempty"`
	URLs     []string `json:"urls,omitempty"`
	Crawl    bool     `json:"crawl,omitempty"`
	MaxPages int      `json:"maxPages,omitempty"`
	MaxDepth int      `json:"maxDepth,omitempty"`
	DelayMs  int      `json:"delayMs,omitempty"`
	// Changed, with one folder in Paths, limits its sync to these paths
	// (a serve --watch batch); absent, the whole folder is synced.
	Changed []string `json:"changed,omitempty"`
}

// runIndex indexes in with the CLI's indexer, reporting one progress line
// per source (and per failure). Failures are in the report, not an
// error: a job with a broken file among good ones is done, with the broken
// one listed.
func (s *server) runIndex(ctx context.Context, in indexInput, progress func(string)) (*indexReport, error) {
	start := time.Now()
	defer returnJobMemory()
	rep := newIndexReport()
	var jobs []indexJob
	for _, p := range in.Paths {
		job, err := collectArg(p, rep.Skipped)
		if err != nil {
			rep.Failed = append(rep.Failed, failedSource{Source: s.displayName(p), Reason: err.Error()})
			continue
		}
		if job != nil {
			job.display = s.displayName(p)
			if job.folder != "" {
				job.changed = in.Changed
			}
			jobs = append(jobs, *job)
		}
	}
	if !in.Crawl {
		for _, u := range in.URLs {
			jobs = append(jobs, indexJob{display: u, src: newPageSource(s.pages, u)})
		}
	}
	total := 0
	for _, j := range jobs {
		if j.folder == "" {
			total++ // a folder's files count once it is walked
		}
	}
	maxPages := cmp0(in.MaxPages, defaultServeCrawlPages)
	if in.Crawl {
		total += maxPages
	}
	// What the index held before, so a source is reported unchanged only
	// when it was indexed with the same chunks (not when a new upload's
	// text is already indexed under another name), as the CLI does.
	before, err := s.b.store.Sources(ctx)
	if err != nil {
		return rep, fmt.Errorf("listing the indexed sources: %w", err)
	}
	lw := &lineWriter{fn: progress}
	ix := &indexer{b: s.b, rep: rep, prog: newProgress(lw, total, true), chunkSize: defaultChunkSize,
		overlap: defaultChunkOverlap, oldChunks: chunksByURL(before)}
	err = ix.inBulk(func() error {
		if err := ix.indexJobs(ctx, jobs); err != nil {
			return err
		}
		if in.Crawl && len(in.URLs) > 0 && ctx.Err() == nil {
			ix.crawl(ctx, in.URLs, maxPages, cmp0(in.MaxDepth, defaultServeCrawlDepth), cmp0(in.DelayMs, 250))
		}
		return nil
	})
	lw.flush()
	ix.saveChecks(ctx)
	// An upload that failed is reported under the name it was uploaded
	// as; where the server keeps it is none of the client's business.
	for i, f := range rep.Failed {
		if s.isUpload(f.URL) {
			rep.Failed[i].URL = ""
		}
	}
	rep.Store, rep.Embedder = s.b.store.describe(), s.b.manifest.Embedder
	rep.Seconds = time.Since(start).Seconds()
	if err != nil {
		return rep, fmt.Errorf("saving the index: %w", err)
	}
	if ctx.Err() != nil {
		return rep, fmt.Errorf("%w: finished sources are kept; %s", errInterrupted, interruptedText(rep.Interrupted))
	}
	progress(fmt.Sprintf("done: %d %s, %d chunks, %d failed", rep.Sources, plural(rep.Sources, "source", "sources"),
		rep.Chunks, len(rep.Failed)))
	if rep.Sources == 0 && len(rep.Failed) > 0 {
		return rep, nothingIndexedError(rep.Failed)
	}
	return rep, nil
}

// nothingIndexedError is the error of a job in which every source failed:
// the job is failed, not done, and says why in its error (a failed job
// keeps no result, so the reasons go into the message).
func nothingIndexedError(failed []failedSource) error {
	f := failed[0]
	msg := fmt.Sprintf("nothing indexed: %s: %s", f.Source, f.Reason)
	if len(failed) > 1 {
		msg += fmt.Sprintf(" (and %d more failed)", len(failed)-1)
	}
	return errors.New(msg)
}

// returnJobMemory gives the memory an index job left as garbage back to
// the operating system at once. The runtime would keep it until a later
// GC and return it slowly (a failed job on a 127 MiB EPUB chapter left
// serve at 593 MiB); a forced GC costs milliseconds next to a job.
func returnJobMemory() {
	t := time.Now()
	debug.FreeOSMemory()
	slog.Debug("serve: index job's memory returned", "took", time.Since(t))
}

// cmp0 returns v, or def when v <= 0.
func cmp0(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// displayName shows an uploaded file by its name, other paths as they are.
func (s *server) displayName(p string) string {
	if s.isUpload(p) {
		return filepath.Base(p)
	}
	return displayPath(p)
}

// isUpload reports whether p is a file in the upload directory.
func (s *server) isUpload(p string) bool {
	abs, err := filepath.Abs(s.uploadDir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(abs, p)
	return err == nil && filepath.IsLocal(rel)
}

// lineWriter turns the progress reporter's lines into progress messages.
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := strings.TrimSpace(string(l.buf[:i])); line != "" {
			l.fn(line)
		}
		l.buf = l.buf[i+1:]
	}
}

func (l *lineWriter) flush() {
	if line := strings.TrimSpace(string(l.buf)); line != "" {
		l.fn(line)
	}
	l.buf = nil
}

// jobRefused answers a job the store did not take: 503 with Retry-After
// when the queue is full or the server is shutting down.
func jobRefused(w http.ResponseWriter, r *http.Request, err error) {
	msg := "the server is shutting down"
	if errors.Is(err, askyourdocs.ErrJobQueueFull) {
		msg = "too many jobs are waiting; try again in a minute"
	}
	w.Header().Set("Retry-After", "60")
	jsonOrPageError(w, r, http.StatusServiceUnavailable, msg)
}

// jobStarted answers a started job: 202 {"jobId"} for scripts, a redirect
// to the Index page (which shows the job's progress) for browsers.
func (s *server) jobStarted(w http.ResponseWriter, r *http.Request, id string) {
	if wantsHTML(r) {
		http.Redirect(w, r, "/index?job="+url.QueryEscape(id)+"#jobs", http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"jobId": id})
}

// webInput reads the url (and crawl limits) of the URL and crawl forms, or
// their JSON bodies.
func webInput(w http.ResponseWriter, r *http.Request) (indexInput, error) {
	var in struct {
		URL      string `json:"url"`
		MaxPages int    `json:"maxPages"`
		MaxDepth int    `json:"maxDepth"`
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		if err := decodeJSON(w, r, &in, 1<<16); err != nil {
			return indexInput{}, err
		}
	} else {
		in.URL = r.PostFormValue("url")
		in.MaxPages, _ = strconv.Atoi(r.PostFormValue("maxPages"))
		in.MaxDepth, _ = strconv.Atoi(r.PostFormValue("maxDepth"))
	}
	u := strings.TrimSpace(in.URL)
	pu, err := url.Parse(u)
	if err != nil || !isURL(u) || pu.Host == "" {
		return indexInput{}, fmt.Errorf("%q is not an http(s) URL", u)
	}
	if in.MaxPages < 0 || in.MaxPages > maxServeCrawlPages || in.MaxDepth < 0 || in.MaxDepth > maxServeCrawlDepth {
		return indexInput{}, fmt.Errorf("maxPages must be 1-%d and maxDepth 1-%d", maxServeCrawlPages, maxServeCrawlDepth)
	}
	return indexInput{URLs: []string{u}, MaxPages: in.MaxPages, MaxDepth: in.MaxDepth}, nil
}

// checkFetch fetches u through the server's fetcher (the engine's SSRF
// guard) before a job is started for it, so a refused address is reported
// to the client at once with the guard's error.
func (s *server) checkFetch(ctx context.Context, u string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, pageFetchTimeout)
	defer cancel()
	_, err := s.pages.FetchWebPage(ctx, u)
	switch {
	case err == nil:
		return http.StatusOK, ""
	case errors.Is(err, askyourdocs.ErrPrivateTarget):
		return http.StatusBadRequest, "refused by the SSRF guard: " + err.Error() +
			" (start serve with --allow-private to index local or intranet sites you trust)"
	}
	return http.StatusBadGateway, "could not fetch " + u + ": " + err.Error()
}

// handleAddURL is POST /index/url: index one web page.
func (s *server) handleAddURL(w http.ResponseWriter, r *http.Request) { s.startWeb(w, r, false) }

// handleCrawl is POST /index/crawl: crawl a site from a URL.
func (s *server) handleCrawl(w http.ResponseWriter, r *http.Request) { s.startWeb(w, r, true) }

func (s *server) startWeb(w http.ResponseWriter, r *http.Request, crawl bool) {
	in, err := webInput(w, r)
	if err != nil {
		jsonOrPageError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if status, msg := s.checkFetch(r.Context(), in.URLs[0]); status != http.StatusOK {
		jsonOrPageError(w, r, status, msg)
		return
	}
	in.Crawl = crawl
	kind := "index"
	if crawl {
		kind = "crawl"
	}
	id, err := runFlowAsJob(s.ctx, s.jobs, kind, in)
	if err != nil {
		jobRefused(w, r, err)
		return
	}
	s.jobStarted(w, r, id)
}

// handleDelete is POST /index/delete (url): remove a file, page or crawl
// from the index; an uploaded file is deleted from disk too.
func (s *server) handleDelete(w http.ResponseWriter, r *http.Request) {
	var target string
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		var in struct {
			URL string `json:"url"`
		}
		if err := decodeJSON(w, r, &in, 1<<16); err != nil {
			jsonError(w, http.StatusBadRequest, err.Error())
			return
		}
		target = in.URL
	} else {
		target = r.PostFormValue("url")
	}
	if target == "" {
		jsonOrPageError(w, r, http.StatusBadRequest, "url is missing")
		return
	}
	n, err := s.b.store.DeleteByURL(r.Context(), target)
	if err == nil {
		var m int
		m, err = s.b.store.DeleteBySource(r.Context(), target)
		n += m
	}
	if err != nil {
		slog.Error("serve: delete failed", "url", target, "err", err)
		jsonOrPageError(w, r, http.StatusInternalServerError, "the source could not be deleted")
		return
	}
	if n == 0 {
		jsonOrPageError(w, r, http.StatusNotFound, "nothing indexed under "+target)
		return
	}
	if s.isUpload(target) {
		os.Remove(target)
		os.Remove(filepath.Dir(target)) // only when empty
	}
	if wantsHTML(r) {
		http.Redirect(w, r, "/index#sources", http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": target, "chunks": n})
}

// sourceView is one indexed source as the API and the Index page show it.
type sourceView struct {
	URL    string `json:"url"`
	Source string `json:"source"`
	Chunks int    `json:"chunks"`
	Title  string `json:"title"`
	// Link opens the source (the page, or the file's download route).
	Link string `json:"link"`
	// LastChecked and LastChanged are when an index run (or a watch) last
	// read the source and last found its text changed; null when not
	// recorded (indexed before the dates were kept).
	LastChecked *time.Time `json:"lastChecked"`
	LastChanged *time.Time `json:"lastChanged"`
}

func (s *server) sources(ctx context.Context) ([]sourceView, error) {
	srcs, err := s.b.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, src := range srcs {
		if !isURL(src.URL) {
			files = append(files, src.URL)
		}
	}
	labels := distinctLabels(files, s.isUpload)
	checks, err := s.b.store.loadChecks(ctx)
	if err != nil {
		slog.Warn("serve: the dates of the sources could not be read", "err", err)
	}
	out := make([]sourceView, 0, len(srcs))
	for _, src := range srcs {
		v := sourceView{URL: src.URL, Source: src.Source, Chunks: src.Chunks, Title: src.URL, Link: src.URL}
		if !isURL(src.URL) {
			v.Title = labels[src.URL]
			v.Link = "/files?url=" + url.QueryEscape(src.URL)
		}
		v.LastChecked, v.LastChanged = checkTimes(checks[src.URL])
		out = append(out, v)
	}
	return out, nil
}

// handleSourcesAPI is GET /api/sources.
func (s *server) handleSourcesAPI(w http.ResponseWriter, r *http.Request) {
	srcs, err := s.sources(r.Context())
	if err != nil {
		slog.Error("serve: listing sources failed", "err", err)
		jsonError(w, http.StatusInternalServerError, "the sources could not be listed")
		return
	}
	writeJSON(w, http.StatusOK, srcs)
}

// handleFile is GET /files?url=PATH: the file of an indexed source (only
// files that are in the index are served). PDFs open inline, so a
// citation's #page=N works; everything else is a download.
func (s *server) handleFile(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("url")
	srcs, err := s.b.store.Sources(r.Context())
	if err != nil {
		jsonOrPageError(w, r, http.StatusInternalServerError, "the sources could not be listed")
		return
	}
	indexed, source := false, ""
	for _, src := range srcs {
		if src.URL == p {
			indexed, source = true, src.Source
			break
		}
	}
	if !indexed || isURL(p) {
		jsonOrPageError(w, r, http.StatusNotFound, "no indexed file "+p)
		return
	}
	f, info, err := s.openIndexedFile(r.Context(), p, source)
	if err != nil {
		if errors.Is(err, errNotIndexedFile) {
			slog.Warn("serve: /files refused a file", "url", p, "reason", err)
		}
		jsonOrPageError(w, r, http.StatusNotFound, "the file is no longer the one indexed")
		return
	}
	defer f.Close()
	name := filepath.Base(p)
	disp := "attachment"
	if strings.EqualFold(filepath.Ext(p), ".pdf") {
		disp = "inline"
		w.Header().Set("Content-Type", "application/pdf")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Security-Policy", "sandbox")
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": name}))
	http.ServeContent(w, r, name, info.ModTime(), f)
}

// jobJSON is a job as GET /api/jobs lists it: the keys GET /api/jobs/{id}
// (the engine's Job) gives the same meaning and type, "progress" the
// latest message and "progressLog" the last 30, plus what the Index page
// shows (finished, the failed sources, a summary).
type jobJSON struct {
	ID          string         `json:"id"`
	Kind        string         `json:"kind"`
	Status      string         `json:"status"`
	Finished    bool           `json:"finished"`
	Progress    string         `json:"progress"`
	ProgressLog []string       `json:"progressLog"`
	Error       string         `json:"error"`
	Failed      []failedSource `json:"failed,omitempty"`
	Summary     string         `json:"summary,omitempty"`
}

func toJobJSON(j jobView) jobJSON {
	out := jobJSON{ID: j.ID, Kind: j.Kind, Status: j.Status, Finished: j.Finished, Error: j.Error, ProgressLog: j.Progress}
	if len(out.ProgressLog) > 30 {
		out.ProgressLog = out.ProgressLog[len(out.ProgressLog)-30:]
	}
	if out.ProgressLog == nil {
		out.ProgressLog = []string{}
	}
	if n := len(out.ProgressLog); n > 0 {
		out.Progress = out.ProgressLog[n-1]
	}
	if rep, ok := j.Result.(*indexReport); ok {
		out.Failed = rep.Failed
		out.Summary = fmt.Sprintf("%d %s indexed, %d chunks, %d failed", rep.Sources, plural(rep.Sources, "source", "sources"),
			rep.Chunks, len(rep.Failed))
	}
	return out
}

// handleJobsAPI is GET /api/jobs: the newest jobs, newest first.
func (s *server) handleJobsAPI(w http.ResponseWriter, r *http.Request) {
	views := listJobs(s.jobs, 20)
	out := make([]jobJSON, len(views))
	for i, v := range views {
		out[i] = toJobJSON(v)
	}
	writeJSON(w, http.StatusOK, out)
}

// indexPage is the Index page's data.
type indexPage struct {
	Sources     []sourceView
	Jobs        []jobJSON
	Running     bool
	Accept      string
	Exts        string
	MaxUploadMB int64
	// MaxUploadBytes is the limit the page checks before sending.
	MaxUploadBytes int64
	// UploadError is why the last upload (a form post) was refused.
	UploadError string
	AuthOn      bool
	// Self is the page's own path and query, the target of its refresh
	// without JavaScript: a plain refresh of a URL with a fragment
	// (/index?job=ID#jobs, where an upload lands) is a same-document
	// fragment navigation, which reloads nothing.
	Self string
}

func (s *server) handleIndexPage(w http.ResponseWriter, r *http.Request) {
	s.renderIndex(w, r, http.StatusOK, "")
}

// renderIndex renders the Index page with status; uploadErr, when set,
// is shown in the upload form (a refused upload without JavaScript).
func (s *server) renderIndex(w http.ResponseWriter, r *http.Request, status int, uploadErr string) {
	srcs, err := s.sources(r.Context())
	if err != nil {
		jsonOrPageError(w, r, http.StatusInternalServerError, "the sources could not be listed")
		return
	}
	p := indexPage{Sources: srcs, Accept: strings.Join(supportedUploadExts(), ","),
		Exts: strings.Join(supportedUploadExts(), ", "), MaxUploadMB: s.opts.maxUpload >> 20, AuthOn: s.authRequired(),
		Self: "/index", MaxUploadBytes: s.opts.maxUpload, UploadError: uploadErr}
	if r.Method == http.MethodGet {
		p.Self = r.URL.RequestURI()
	}
	for _, v := range listJobs(s.jobs, 20) {
		j := toJobJSON(v)
		p.Running = p.Running || !j.Finished
		p.Jobs = append(p.Jobs, j)
	}
	s.render(w, r, status, "index.html", p)
}
