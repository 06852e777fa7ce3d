package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The HTTP contract cmd/evalset speaks with an app (all routes behind the
// app's admin check), the same as the original engine's:
//
//	POST /api/eval/{kind}            EvalJobHandler: body {"data": {...}} (or the bare input),
//	                                 starts the job, 202 {"jobId": "..."}; 503 + Retry-After when the queue is full
//	GET  /api/jobs/{id}              JobStatusHandler: {"status", "progress", "error", "result", ...},
//	                                 polled until the status is done or failed
//	GET  /api/eval/datasets/{name}   EvalDatasetHandler: the dataset file
//
// The job's result names the dataset: a JSON object with an outPath (as
// GenerateEvalSetResult has), whose base name is fetched; without one the
// client fetches eval_dataset_<kind>.json.

// evalMaxBody caps the JSON body EvalJobHandler reads: an eval job's input
// is a few small fields, and bodies held by pending jobs add up.
const evalMaxBody = 64 << 10

// evalRetryAfter is the Retry-After (seconds) EvalJobHandler sends with
// 503 when the job queue is full.
const evalRetryAfter = "5"

// RestrictEvalPaths makes a client-supplied eval job input safe to run on
// the server. It clears *outPath, so the job writes where the server
// decides (the default path of GenerateEvalSet, or the app's own for the
// feedback and injection sets), never where a client asks. It rejects a
// *dir that is absolute or that leaves the working directory after
// cleaning ("../x", "a/../../x"), or contains a NUL byte or a backslash,
// with an error wrapping ErrUnsafeEvalPath; an accepted *dir is replaced by
// its cleaned form ("./docs/" becomes "docs"), an empty one stays empty.
// Either pointer may be nil. A dir is interpreted relative to the server's
// working directory; symbolic links inside it are the operator's business.
func RestrictEvalPaths(dir *string, outPath *string) error {
	if outPath != nil {
		*outPath = ""
	}
	if dir == nil || *dir == "" {
		return nil
	}
	d := *dir
	switch {
	case strings.ContainsRune(d, 0):
		return fmt.Errorf("%w: dir %q contains a NUL byte", ErrUnsafeEvalPath, d)
	case strings.ContainsRune(d, '\\'):
		return fmt.Errorf("%w: dir %q contains a backslash", ErrUnsafeEvalPath, d)
	case strings.HasPrefix(d, "/") || filepath.IsAbs(d) || filepath.VolumeName(d) != "":
		return fmt.Errorf("%w: dir %q is absolute; give a directory relative to the server's working directory", ErrUnsafeEvalPath, d)
	}
	clean := filepath.Clean(d)
	if !filepath.IsLocal(clean) {
		return fmt.Errorf("%w: dir %q leaves the server's working directory", ErrUnsafeEvalPath, d)
	}
	for _, el := range strings.Split(filepath.ToSlash(clean), "/") {
		if el == ".." {
			return fmt.Errorf("%w: dir %q contains ..", ErrUnsafeEvalPath, d)
		}
	}
	*dir = clean
	return nil
}

// EvalJobHandler returns a handler that starts an eval dataset job: it
// decodes the request body into an In, runs validate on it (nil means
// none; typically RestrictEvalPaths), enqueues run on jobs as a job of the
// given kind and answers 202 Accepted with {"jobId": "..."}.
//
// The body is JSON of at most 64 KiB (more gets 413). It is either the
// original engine's envelope {"data": {...}}, as its evalset sends, or the
// bare input object; an empty body, and "data": null, are the zero In.
// Unknown fields are rejected. An In that itself accepts a field named
// "data" is always decoded from the bare body. A malformed body or a
// validation error gets 400 with {"error": "..."}; methods other than POST
// get 405. When the job store's queue is full (ErrJobQueueFull) or it is
// closed, the handler answers 503 with a Retry-After header and starts
// nothing.
//
// The job runs with ctx, the app's long-lived context, not the request's:
// the response is sent before the job starts. The handler registers run as
// the work of kind on jobs (HandleKind), so on a DurableJobStore the job
// may run on another instance, from its JSON-encoded input. Clients poll the job through
// JobStatusHandler. Mount the handler behind the app's admin check: it
// starts model work and reads server files.
func EvalJobHandler[In any](jobs JobQueue, ctx context.Context, kind string, run func(ctx context.Context, in In) (any, error), validate func(in *In) error) http.HandlerFunc {
	jobs.HandleKind(kind, func(ctx context.Context, raw json.RawMessage, _ func(string)) (any, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("decode %s job input: %w", kind, err)
		}
		return run(ctx, in)
	})
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			evalHTTPError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		in, status, err := evalDecodeBody[In](w, r)
		if err != nil {
			evalHTTPError(w, status, err.Error())
			return
		}
		if validate != nil {
			if err := validate(&in); err != nil {
				evalHTTPError(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		job, err := jobs.EnqueueInput(ctx, kind, in)
		if err != nil {
			// Queue full or store closed: nothing was recorded, the
			// client may try again.
			w.Header().Set("Retry-After", evalRetryAfter)
			evalHTTPError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		evalHTTPJSON(w, http.StatusAccepted, map[string]string{"jobId": job.ID})
	}
}

// evalDecodeBody decodes r's body as one JSON value of type In, bare or in
// a {"data": ...} envelope.
func evalDecodeBody[In any](w http.ResponseWriter, r *http.Request) (In, int, error) {
	var in In
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, evalMaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return in, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", tooBig.Limit)
		}
		return in, http.StatusBadRequest, fmt.Errorf("read request body: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return in, 0, nil
	}
	if inner, ok := evalEnvelope(body); ok && !evalAcceptsDataField[In]() {
		body = inner
		if len(bytes.TrimSpace(body)) == 0 || string(bytes.TrimSpace(body)) == "null" {
			return in, 0, nil
		}
	}
	if err := evalDecodeStrict(body, &in); err != nil {
		return in, http.StatusBadRequest, err
	}
	return in, 0, nil
}

// evalEnvelope returns the value of "data" when body is a JSON object whose
// only key is "data".
func evalEnvelope(body []byte) (json.RawMessage, bool) {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil || len(env) != 1 {
		return nil, false
	}
	inner, ok := env["data"]
	return inner, ok
}

// evalAcceptsDataField reports whether In decodes {"data": null} without
// an unknown-field error: a struct with a field of its own named "data"
// (matched as encoding/json does), or a map.
func evalAcceptsDataField[In any]() bool {
	var probe In
	return evalDecodeStrict([]byte(`{"data": null}`), &probe) == nil
}

// evalDecodeStrict decodes exactly one JSON value from data into v,
// rejecting unknown fields and trailing data.
func evalDecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed JSON body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("malformed JSON body: data after the JSON value")
	}
	return nil
}

// JobStatusHandler returns a handler for GET /api/jobs/{id}: the Job with
// the id path value as JSON, 404 for an unknown ID. The JSON has the
// original engine's keys, "status" (pending, running, done, failed; ours
// adds cancelled), "progress" (the latest message), "error" and "result",
// plus ours: "progressLog" (the newest messages), "progressCount", "id",
// "kind" and the timestamps. It is the route cmd/evalset polls after starting a job;
// mount it behind the same admin check as the eval routes, since a job's
// result may hold what its run returned.
func JobStatusHandler(jobs JobQueue) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			evalHTTPError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		id := r.PathValue("id")
		job, ok := jobs.Get(id)
		if !ok {
			evalHTTPError(w, http.StatusNotFound, fmt.Sprintf("job %q not found", id))
			return
		}
		evalHTTPJSON(w, http.StatusOK, job)
	}
}

// EvalDatasetHandler returns a handler for GET /api/eval/datasets/{name}
// that serves the file name from dir. Only names of the form
// eval_dataset_<letters, digits, '.', '_', '-'>.json are served (a short
// name, "feedback" or "eval_dataset_feedback", is completed to
// eval_dataset_feedback.json); any other
// (paths, "..", NUL bytes, other files) gets 404, as the original engine
// answers. Only a regular file is served: the name is checked with Lstat
// inside dir first, so a symbolic link, a directory, a FIFO or a device
// gets 404 without being opened (a FIFO would block the request), and the
// file is then opened non-blocking inside dir with os.Root and checked to
// be the same regular file, so nothing swapped in between is served.
func EvalDatasetHandler(dir string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			evalHTTPError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		name := evalDatasetFileName(r.PathValue("name"))
		if !validEvalDatasetName(name) {
			evalHTTPError(w, http.StatusNotFound, fmt.Sprintf("dataset %q not found: names are eval_dataset_<name>.json", name))
			return
		}
		f, info, err := evalOpenDataset(dir, name)
		if err != nil {
			evalHTTPError(w, http.StatusNotFound, fmt.Sprintf("dataset %s not found", name))
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		http.ServeContent(w, r, name, info.ModTime(), f)
	}
}

// evalDatasetFileName completes a short dataset name: "feedback" and
// "eval_dataset_feedback" both name eval_dataset_feedback.json.
func evalDatasetFileName(name string) string {
	if !strings.HasSuffix(name, ".json") {
		name += ".json"
	}
	if !strings.HasPrefix(name, "eval_dataset_") {
		name = "eval_dataset_" + name
	}
	return name
}

// evalOpenDataset opens the regular file name inside dir, never leaving dir
// and never opening anything but a regular file.
func evalOpenDataset(dir, name string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	before, err := root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", name, before.Mode().Type())
	}
	// Non-blocking, in case a FIFO was swapped in after the Lstat.
	f, err := root.OpenFile(name, os.O_RDONLY|evalOpenNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !os.SameFile(before, info) {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed while being opened", name)
	}
	return f, info, nil
}

// validEvalDatasetName reports whether name is a dataset name
// EvalDatasetHandler serves: "eval_dataset_" followed by at least one
// ASCII letter, digit, '.', '_' or '-', then ".json", without "..", at
// most 255 bytes. Such a name is a plain file name on every platform.
func validEvalDatasetName(name string) bool {
	const prefix, suffix = "eval_dataset_", ".json"
	if len(name) > 255 || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) ||
		len(name) <= len(prefix)+len(suffix) || strings.Contains(name, "..") {
		return false
	}
	for _, c := range []byte(name[len(prefix) : len(name)-len(suffix)]) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// evalHTTPJSON writes v as a JSON response with the given status.
func evalHTTPJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		evalHTTPError(w, http.StatusInternalServerError, fmt.Sprintf("encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

// evalHTTPError writes {"error": msg} with the given status.
func evalHTTPError(w http.ResponseWriter, status int, msg string) {
	data, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
