package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// supportedUploadExts are the file extensions the engine reads, for the
// upload form and its error messages; images only when OCR is installed.
func supportedUploadExts() []string {
	var out []string
	for _, e := range []string{".pdf", ".docx", ".html", ".htm", ".xhtml", ".md", ".markdown", ".txt", ".text", ".odt",
		".ods", ".odp", ".pptx", ".xlsx", ".epub", ".rtf", ".csv", ".doc", ".png", ".jpg", ".jpeg", ".tif", ".tiff"} {
		if fileKind("x"+e) != "" {
			out = append(out, e)
		}
	}
	return out
}

// uploadError is an upload refused with a status.
type uploadError struct {
	status int
	msg    string
}

func (e *uploadError) Error() string { return e.msg }

// handleUpload is POST /index/upload (multipart, field "files"): the files
// are written to a fresh directory below the upload directory only when
// the whole request was read and every file passed the checks (size,
// type); then an index job starts. A refused upload leaves nothing behind.
func (s *server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > s.opts.maxUpload {
		s.uploadFailed(w, r, &uploadError{http.StatusRequestEntityTooLarge, s.tooLargeMsg()})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.maxUpload)
	dir, files, err := s.receiveUpload(r)
	if err != nil {
		var ue *uploadError
		if !errors.As(err, &ue) {
			slog.Error("serve: upload failed", "err", err)
			ue = &uploadError{http.StatusInternalServerError, "the upload could not be stored"}
		}
		s.uploadFailed(w, r, ue)
		return
	}
	id, err := runFlowAsJob(s.ctx, s.jobs, "index", indexInput{Paths: files})
	if err != nil {
		os.RemoveAll(dir)
		jobRefused(w, r, err)
		return
	}
	s.jobStarted(w, r, id)
}

func (s *server) tooLargeMsg() string {
	return fmt.Sprintf("the upload is larger than %d MiB", s.opts.maxUpload>>20)
}

// uploadFailed answers a refused upload; the rest of a refused body is
// not read (the connection closes).
func (s *server) uploadFailed(w http.ResponseWriter, r *http.Request, e *uploadError) {
	w.Header().Set("Connection", "close")
	if wantsHTML(r) {
		// The form's own page, with the reason in the form.
		s.renderIndex(w, r, e.status, e.msg)
		return
	}
	jsonOrPageError(w, r, e.status, e.msg)
}

// receiveUpload reads the multipart body into a temporary directory and
// renames it into place; it returns the directory and the files' paths.
func (s *server) receiveUpload(r *http.Request) (dir string, files []string, err error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return "", nil, &uploadError{http.StatusBadRequest, "expected a multipart/form-data upload"}
	}
	id := newID()
	tmp := filepath.Join(s.uploadDir, ".incoming-"+id)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	var names []string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, bodyError(err)
		}
		if part.FileName() == "" {
			io.Copy(io.Discard, part)
			continue
		}
		name := uploadName(part.FileName())
		if name == "" {
			return "", nil, &uploadError{http.StatusBadRequest, fmt.Sprintf("invalid file name %q", part.FileName())}
		}
		if fileKind(name) == "" {
			return "", nil, &uploadError{http.StatusUnsupportedMediaType, fmt.Sprintf("%s: unsupported file type %q (supported: %s)",
				name, filepath.Ext(name), strings.Join(supportedUploadExts(), ", "))}
		}
		if len(names) == maxUploadFiles {
			return "", nil, &uploadError{http.StatusBadRequest, fmt.Sprintf("at most %d files per upload", maxUploadFiles)}
		}
		for slices.Contains(names, name) {
			name = "_" + name
		}
		if err := writePart(filepath.Join(tmp, name), part); err != nil {
			return "", nil, err
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return "", nil, &uploadError{http.StatusBadRequest, "choose at least one file"}
	}
	dir = filepath.Join(s.uploadDir, id)
	if err := os.Rename(tmp, dir); err != nil {
		return "", nil, err
	}
	ok = true
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	for _, n := range names {
		files = append(files, filepath.Join(abs, n))
	}
	return dir, files, nil
}

// writePart writes one uploaded file and checks that its content matches
// its type (a .pdf starts with %PDF-, a .docx is a zip archive).
func writePart(path string, part io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	head := make([]byte, 5)
	n, err := io.ReadFull(part, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		f.Close()
		return bodyError(err)
	}
	head = head[:n]
	name := filepath.Base(path)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pdf":
		if !bytes.HasPrefix(head, []byte("%PDF-")) {
			f.Close()
			return &uploadError{http.StatusUnsupportedMediaType, name + ": not a PDF file (it does not start with %PDF-)"}
		}
	case ".docx", ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".epub":
		if !bytes.HasPrefix(head, []byte("PK\x03\x04")) {
			f.Close()
			return &uploadError{http.StatusUnsupportedMediaType, name + ": not a " + filepath.Ext(path) + " file (not a zip archive)"}
		}
	}
	if _, err := f.Write(head); err != nil {
		f.Close()
		return err
	}
	if _, err := io.Copy(f, part); err != nil {
		f.Close()
		return bodyError(err)
	}
	return f.Close()
}

// bodyError maps a failed body read to 413 (over the limit) or 400.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &uploadError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is larger than %d MiB", tooBig.Limit>>20)}
	}
	return &uploadError{http.StatusBadRequest, "the upload could not be read: " + err.Error()}
}

// uploadName returns the base name of a client's file name, "" when
// nothing usable is left.
func uploadName(n string) string {
	n = filepath.Base(strings.ReplaceAll(n, `\`, "/"))
	n = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' {
			return -1
		}
		return r
	}, n)
	n = strings.TrimLeft(strings.TrimSpace(n), ".")
	if len(n) > 200 {
		ext := filepath.Ext(n)
		n = n[:200-len(ext)] + ext
	}
	if n == "" || !filepath.IsLocal(n) {
		return ""
	}
	return n
}
