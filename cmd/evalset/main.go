// Command evalset fetches an eval dataset from a running askyourdocs app
// over its normal HTTP port: it starts the app's dataset job, polls it until
// it finishes, downloads the dataset and saves it for genkit eval:flow.
//
//	export EVALSET_PASSWORD=...        # the app's admin password, if it has one
//	evalset -kind injection -url http://localhost:3400 -user admin
//	evalset -kind generated -data '{"dir":"pdf-data","sampleRate":8,"maxPerDoc":5}' -out testdata/my-set.json
//	evalset -kind feedback  -url http://localhost:3400 -user kai -login   # session-cookie apps
//
// Kinds: generated (questions generated from the indexed documents),
// feedback (from logged real usage), injection (fixed prompt-injection
// attacks). The dataset is saved to testdata/<name the app gave it> unless
// -out says otherwise, and the path is printed on stdout; progress and
// errors go to stderr.
//
// Flags and environment:
//
//	-kind     generated, feedback or injection (required)
//	-url      the app's base URL (else EVALSET_URL, else http://localhost:3400)
//	-user     the admin user (else EVALSET_USER)
//	-data     the job's JSON input (default {})
//	-out      where to save the dataset (default testdata/<name>)
//	-login    log in with POST /api/login {"username","password"} and use the
//	          session cookie, instead of HTTP basic auth
//	-timeout  how long to wait for the whole run (default 30m)
//	-poll     how often to ask for the job's status (default 2s)
//
// The password is read from EVALSET_PASSWORD only, to keep it off the
// command line. Without -login, a user or password is sent as basic auth.
//
// The app's routes (see the engine's evalhttp.go), the same for apps built
// on this engine and on the original one: POST /api/eval/<kind> with the
// -data input in an envelope, {"data": {...}}, answers {"jobId": "..."}
// (a 503 "queue full" is retried after its Retry-After); GET
// /api/jobs/<id> answers the job (status pending, running, done or failed,
// also queued or cancelled; progress, the latest message as a string, or
// an older engine's array of messages; result; error); GET
// /api/eval/datasets/<name> serves the dataset, where name is the base
// name of the job result's outPath, or eval_dataset_<kind>.json.
//
// Exit status: 0 success, 1 an error talking to the app (unreachable, an
// unexpected response), 2 wrong usage, 3 authentication failed (401/403),
// 4 the job failed or was cancelled, 5 the timeout passed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitAuth    = 3
	exitJob     = 4
	exitTimeout = 5
)

// maxDataset caps the size of a downloaded dataset.
const maxDataset = 256 << 20

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// config is the parsed command line and environment.
type config struct {
	kind, baseURL, user, password, data, out string
	login                                    bool
	timeout, poll                            time.Duration
}

// cliError is an error with the exit status it causes.
type cliError struct {
	code int
	err  error
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

func fail(code int, format string, args ...any) error {
	return &cliError{code: code, err: fmt.Errorf(format, args...)}
}

// run is the command; it returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "evalset:", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	saved, err := fetch(ctx, cfg, stderr)
	if err != nil {
		code := exitFailure
		var ce *cliError
		switch {
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			code = exitTimeout
			err = fmt.Errorf("timed out after %s: %w", cfg.timeout, err)
		case errors.As(err, &ce):
			code = ce.code
		}
		fmt.Fprintln(stderr, "evalset:", err)
		return code
	}
	fmt.Fprintln(stdout, saved)
	return exitOK
}

// parseArgs reads the flags and the environment.
func parseArgs(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("evalset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.kind, "kind", "", "dataset kind: generated, feedback or injection")
	fs.StringVar(&cfg.baseURL, "url", "", "the app's base URL (default $EVALSET_URL or http://localhost:3400)")
	fs.StringVar(&cfg.user, "user", "", "admin user (default $EVALSET_USER); the password comes from $EVALSET_PASSWORD")
	fs.StringVar(&cfg.data, "data", "{}", "JSON input of the job")
	fs.StringVar(&cfg.out, "out", "", "file to save the dataset to (default testdata/<name>)")
	fs.BoolVar(&cfg.login, "login", false, "log in with POST /api/login and a session cookie instead of basic auth")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "give up after this long")
	fs.DurationVar(&cfg.poll, "poll", 2*time.Second, "interval between job status requests")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch cfg.kind {
	case "generated", "feedback", "injection":
	case "":
		return cfg, errors.New("-kind is required: generated, feedback or injection")
	default:
		return cfg, fmt.Errorf("unknown -kind %q: want generated, feedback or injection", cfg.kind)
	}
	if cfg.baseURL == "" {
		cfg.baseURL = getenv("EVALSET_URL")
	}
	if cfg.baseURL == "" {
		cfg.baseURL = "http://localhost:3400"
	}
	u, err := url.Parse(cfg.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, fmt.Errorf("invalid -url %q: want http(s)://host[:port]", cfg.baseURL)
	}
	cfg.baseURL = strings.TrimRight(cfg.baseURL, "/")
	if cfg.user == "" {
		cfg.user = getenv("EVALSET_USER")
	}
	cfg.password = getenv("EVALSET_PASSWORD")
	if cfg.login && cfg.user == "" {
		return cfg, errors.New("-login needs -user or EVALSET_USER")
	}
	if !json.Valid([]byte(cfg.data)) {
		return cfg, fmt.Errorf("-data is not valid JSON: %q", cfg.data)
	}
	if cfg.timeout <= 0 || cfg.poll <= 0 {
		return cfg, errors.New("-timeout and -poll must be positive")
	}
	return cfg, nil
}

// client talks to the app.
type client struct {
	cfg  config
	http *http.Client
}

// fetch runs the job, downloads the dataset and returns the saved path.
func fetch(ctx context.Context, cfg config, stderr io.Writer) (string, error) {
	jar, _ := cookiejar.New(nil)
	c := &client{cfg: cfg, http: &http.Client{Jar: jar}}
	if cfg.login {
		if err := c.login(ctx); err != nil {
			return "", err
		}
	}
	started, err := c.start(ctx, stderr)
	if err != nil {
		return "", fmt.Errorf("start %s job: %w", cfg.kind, err)
	}
	if started.JobID == "" {
		return "", fail(exitFailure, "start %s job: the app answered without a jobId", cfg.kind)
	}
	fmt.Fprintf(stderr, "evalset: job %s started\n", started.JobID)
	result, err := c.wait(ctx, started.JobID, stderr)
	if err != nil {
		return "", err
	}
	name := datasetName(result, cfg.kind)
	if !validDatasetName(name) {
		return "", fail(exitFailure, "the app named the dataset %q, which is not an eval_dataset_*.json name", name)
	}
	data, err := c.download(ctx, name)
	if err != nil {
		return "", err
	}
	out := cfg.out
	if out == "" {
		out = filepath.Join("testdata", name)
	}
	if err := writeFile(out, data); err != nil {
		return "", fail(exitFailure, "save dataset: %w", err)
	}
	return out, nil
}

// started is the app's answer to starting a job.
type started struct {
	JobID string `json:"jobId"`
}

// start posts the job's input in the {"data": ...} envelope both engines
// accept. While the app answers 503 (its job queue is full) it waits for
// the Retry-After the app gives (1 s to 1 min; 5 s without one) and tries
// again, until ctx ends.
func (c *client) start(ctx context.Context, stderr io.Writer) (started, error) {
	body := []byte(`{"data": ` + strings.TrimSpace(c.cfg.data) + `}`)
	for {
		var s started
		err := c.doJSON(ctx, "POST", "/api/eval/"+c.cfg.kind, body, &s)
		var busy *busyError
		if !errors.As(err, &busy) {
			return s, err
		}
		fmt.Fprintf(stderr, "evalset: the app is busy (%s), retrying in %s\n", busy.msg, busy.retryAfter)
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("%w (the app was busy: %s)", ctx.Err(), busy.msg)
		case <-time.After(busy.retryAfter):
		}
	}
}

// busyError is a 503 answer: the app cannot take the job now.
type busyError struct {
	retryAfter time.Duration
	msg        string
}

func (e *busyError) Error() string {
	return fmt.Sprintf("503 Service Unavailable %s (retry after %s)", e.msg, e.retryAfter)
}

// retryAfter reads a Retry-After header in seconds, clamped to 1 s..1 min;
// 5 s when it is missing or not a number of seconds.
func retryAfter(h string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil {
		return 5 * time.Second
	}
	return time.Duration(min(max(n, 1), 60)) * time.Second
}

// login posts the credentials to /api/login; the cookie jar keeps the
// session.
func (c *client) login(ctx context.Context) error {
	body, _ := json.Marshal(map[string]string{"username": c.cfg.user, "password": c.cfg.password})
	if err := c.doJSON(ctx, "POST", "/api/login", body, nil); err != nil {
		return fmt.Errorf("log in as %s: %w", c.cfg.user, err)
	}
	return nil
}

// job is the part of the app's job JSON evalset reads. Apps on the
// original engine send progress as a string (the latest message); apps on
// this engine send that too, plus progressLog (the newest messages) and
// progressCount (all messages); older versions of this engine sent the
// messages as a progress array.
type job struct {
	Status        string          `json:"status"`
	Progress      json.RawMessage `json:"progress"`
	ProgressLog   []string        `json:"progressLog"`
	ProgressCount int             `json:"progressCount"`
	Result        json.RawMessage `json:"result"`
	Error         string          `json:"error"`
}

// progressTracker copies a polled job's progress messages to stderr once
// each, whichever shape the app sends.
type progressTracker struct {
	shown  int    // messages of a counted log already shown
	latest string // the latest message shown, for apps that send only it
}

// show prints the messages of j not shown yet.
func (p *progressTracker) show(j job, stderr io.Writer) {
	log := j.ProgressLog
	var latest string
	if log == nil && json.Unmarshal(j.Progress, &log) != nil {
		log = nil
		_ = json.Unmarshal(j.Progress, &latest)
	}
	if log != nil {
		count := max(j.ProgressCount, len(log))
		// log holds the newest messages; count counts all.
		first := count - len(log)
		for i, msg := range log {
			if first+i >= p.shown {
				fmt.Fprintf(stderr, "evalset: %s\n", msg)
			}
		}
		p.shown = max(p.shown, count)
		if len(log) > 0 {
			p.latest = log[len(log)-1]
		}
		return
	}
	if latest != "" && latest != p.latest {
		fmt.Fprintf(stderr, "evalset: %s\n", latest)
		p.latest = latest
	}
}

// wait polls the job until it finishes and returns its result; progress
// messages are copied to stderr.
func (c *client) wait(ctx context.Context, id string, stderr io.Writer) (json.RawMessage, error) {
	var progress progressTracker
	last := "pending"
	for {
		var j job
		if err := c.doJSON(ctx, "GET", "/api/jobs/"+url.PathEscape(id), nil, &j); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("waiting for job %s (last status %s): %w", id, last, ctx.Err())
			}
			return nil, fmt.Errorf("poll job %s: %w", id, err)
		}
		last = j.Status
		progress.show(j, stderr)
		switch j.Status {
		case "done":
			return j.Result, nil
		case "failed", "cancelled":
			msg := j.Error
			if msg == "" {
				msg = "no error message"
			}
			return nil, fail(exitJob, "job %s %s: %s", id, j.Status, msg)
		case "pending", "queued", "running":
		default:
			return nil, fail(exitFailure, "job %s has unknown status %q", id, j.Status)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for job %s (last status %s): %w", id, j.Status, ctx.Err())
		case <-time.After(c.cfg.poll):
		}
	}
}

// datasetName returns the base name of the result's outPath (or path,
// name), or eval_dataset_<kind>.json.
func datasetName(result json.RawMessage, kind string) string {
	var r map[string]any
	if json.Unmarshal(result, &r) == nil {
		for _, k := range []string{"outPath", "path", "name"} {
			if s, ok := r[k].(string); ok && s != "" {
				return path.Base(strings.ReplaceAll(s, `\`, "/"))
			}
		}
	}
	return "eval_dataset_" + kind + ".json"
}

// validDatasetName mirrors the name rule of the engine's EvalDatasetHandler
// (both are tested on testdata/eval/dataset-names.json), so a
// misbehaving server cannot make evalset write outside testdata/.
func validDatasetName(name string) bool {
	const prefix, suffix = "eval_dataset_", ".json"
	if len(name) > 255 || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) ||
		len(name) <= len(prefix)+len(suffix) || strings.Contains(name, "..") {
		return false
	}
	for _, c := range []byte(name[len(prefix) : len(name)-len(suffix)]) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// download fetches the dataset and checks that it is a JSON array.
func (c *client) download(ctx context.Context, name string) ([]byte, error) {
	resp, err := c.do(ctx, "GET", "/api/eval/datasets/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDataset+1))
	if err != nil {
		return nil, fail(exitFailure, "download %s: %w", name, err)
	}
	if len(data) > maxDataset {
		return nil, fail(exitFailure, "download %s: larger than %d bytes", name, maxDataset)
	}
	var cases []json.RawMessage
	if err := json.Unmarshal(data, &cases); err != nil {
		return nil, fail(exitFailure, "download %s: not a JSON array of cases: %w", name, err)
	}
	return data, nil
}

// doJSON sends body (JSON, or nothing when nil) and decodes a 2xx JSON
// response into v (unless v is nil).
func (c *client) doJSON(ctx context.Context, method, p string, body []byte, v any) error {
	resp, err := c.do(ctx, method, p, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if v == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(v); err != nil {
		return fail(exitFailure, "%s %s: response is not JSON: %w", method, p, err)
	}
	return nil
}

// do sends a request with the configured credentials and returns a 2xx
// response; any other status is an error carrying the app's message.
func (c *client) do(ctx context.Context, method, p string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.baseURL+p, r)
	if err != nil {
		return nil, fail(exitFailure, "%s %s: %w", method, p, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if !c.cfg.login && (c.cfg.user != "" || c.cfg.password != "") {
		req.SetBasicAuth(c.cfg.user, c.cfg.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, p, ctx.Err())
		}
		return nil, fail(exitFailure, "cannot reach the app at %s: %w", c.cfg.baseURL, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	msg := appMessage(resp.Body)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint := "check -user/EVALSET_USER and EVALSET_PASSWORD"
		if !c.cfg.login {
			hint += ", or use -login for an app with session login"
		}
		return nil, fail(exitAuth, "%s %s: %s (wrong user or password?) %s; %s", method, p, resp.Status, msg, hint)
	case http.StatusServiceUnavailable:
		return nil, &cliError{code: exitFailure, err: &busyError{retryAfter: retryAfter(resp.Header.Get("Retry-After")), msg: msg}}
	}
	return nil, fail(exitFailure, "%s %s: %s %s", method, p, resp.Status, msg)
}

// appMessage returns the error message of an app response body
// ({"error": "..."} or text), shortened.
func appMessage(body io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(body, 4096))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(data))
}

// writeFile writes data to a temporary file beside path and renames it to
// path, creating the parent directories.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
