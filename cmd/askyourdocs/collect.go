package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// ignoreFile holds gitignore patterns for the folder it lies in and
// below (read by askyourdocs.IndexFolder).
const ignoreFile = ".askyourdocsignore"

// specialRoots are the mount points of Linux's pseudo filesystems: their
// files (/proc/self/environ: the indexing process's environment) are
// process and device state, never documents. /files and /view refuse a
// path that resolves below them, as the engine's readers do.
var specialRoots = []string{"/proc", "/sys", "/dev"}

// onSpecialFS reports whether the resolved path real lies below one of
// specialRoots.
func onSpecialFS(real string) bool {
	for _, root := range specialRoots {
		if within(root, real) {
			return true
		}
	}
	return false
}

// within reports whether path p is root or lies below it (both cleaned,
// absolute).
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// collectArg returns the job of one file or folder argument: a folder is
// synced by askyourdocs.IndexFolder when its turn comes (its walk, ignore
// files, symlink rules and removal of files gone from it), a file is
// indexed alone. An argument that is itself a symlink is followed: the
// user named it. A named pipe or device is counted in skipped, not read.
func collectArg(arg string, skipped map[string]int) (*indexJob, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs) // follows a symlinked argument
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if looksLikeHost(arg) {
				return nil, withHint(errors.New("no such file or directory"),
					fmt.Sprintf("to index a web page, give its URL: askyourdocs index https://%s", arg))
			}
			if hint := localURLHint(arg); hint != "" {
				return nil, withHint(errors.New("no such file or directory"), hint)
			}
			return nil, errors.New("no such file or directory")
		}
		return nil, err
	}
	if info.IsDir() {
		return &indexJob{display: arg, folder: abs}, nil
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && onSpecialFS(real) {
		return nil, fmt.Errorf("%s is on a special filesystem (process or device state, not documents): not indexed", real)
	}
	if !info.Mode().IsRegular() {
		skipped[specialFileKind(info.Mode())]++ // a named pipe would block the reader
		return nil, nil
	}
	kind := fileKind(abs)
	if kind == "" && filepath.Ext(abs) == "" {
		kind = "txt" // a file without extension, given explicitly: plain text
	}
	if kind == "" {
		return nil, unsupportedFileError(abs)
	}
	return &indexJob{display: arg, src: newFileSource(abs, abs, kind)}, nil
}

// logSkippedLinks logs each symlink a folder sync did not follow, at Info
// (the CLI shows it with --verbose, serve in its log).
func logSkippedLinks(res *askyourdocs.FolderResult) {
	for _, l := range res.NotFollowed {
		hint := ""
		if errors.Is(l.Err, askyourdocs.ErrSymlinkOutside) {
			hint = "--follow-symlinks-outside indexes it"
		}
		slog.Info("index: symlink not followed", "link", l.Path, "target", l.Target, "reason", l.Err, "hint", hint)
	}
}

// hostLike matches "example.com/faq.html" or "www.example.org".
var hostLike = regexp.MustCompile(`^[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}(/|$)`)

// looksLikeHost reports whether a missing path looks like a URL without
// its scheme: a host name with a dot before the first slash, and not a
// file name with a supported extension only.
func looksLikeHost(arg string) bool {
	if !hostLike.MatchString(arg) {
		return false
	}
	host, _, _ := strings.Cut(arg, "/")
	return fileKind(host) == "" && !strings.HasPrefix(arg, ".")
}

// hostPortLike matches a host with a port ("localhost:8765/x.html",
// "127.0.0.1:8000", "[::1]:80/", "docs.example.com:8080/a"), or localhost
// alone ("localhost/x.html").
var hostPortLike = regexp.MustCompile(`^((localhost|[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*|\[[0-9a-fA-F:.]+\]):[0-9]{1,5}|localhost)(/|$)`)

// localURLHint is the "give its URL" hint for a missing path that names a
// host with a port, or localhost: http:// for loopback and private hosts,
// with --allow-private, which fetching them needs.
func localURLHint(arg string) string {
	m := hostPortLike.FindStringSubmatch(arg)
	if m == nil {
		return ""
	}
	host := m[1]
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsPrivate())) {
		return fmt.Sprintf("to index a web page on this machine or network, give its URL: askyourdocs index --allow-private http://%s", arg)
	}
	return fmt.Sprintf("to index a web page, give its URL: askyourdocs index https://%s", arg)
}

// unsupportedFileError is the error for a file the CLI does not index: the
// Reason of the engine's *DocumentError (for the legacy formats .doc,
// .xls, .ppt and .rtf it says how to convert the file), then the types
// the CLI reads.
func unsupportedFileError(abs string) error {
	ext := filepath.Ext(abs)
	if askyourdocs.SupportedImageExt(ext) {
		return fmt.Errorf("unsupported file type %q: images are read through OCR, which is not installed: %s", ext, ocrInstallAdvice)
	}
	var de *askyourdocs.DocumentError
	if _, err := askyourdocs.NewFileSource(abs); errors.As(err, &de) && errors.Is(err, askyourdocs.ErrUnsupportedFormat) {
		return fmt.Errorf("%s (supported: %s)", de.Reason, supportedExtList)
	}
	return fmt.Errorf("unsupported file type %q (supported: %s)", ext, supportedExtList)
}

// specialFileKind names a file that is neither a folder nor a regular file,
// for the "Skipped" line of an index run.
func specialFileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
