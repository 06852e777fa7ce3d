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
	"sort"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
	ignore "github.com/sabhiram/go-gitignore"
)

// ignoreFile holds gitignore patterns for the folder it lies in and below.
const ignoreFile = ".askyourdocsignore"

// collected is what a folder walk found.
type collected struct {
	jobs []indexJob
	// found holds the absolute path of every supported file found, also
	// of those whose indexing later fails: sync removes only files that
	// are gone (or excluded) from the index.
	found map[string]bool
	// complete is false when part of the folder could not be read: then
	// nothing is removed by the sync.
	complete bool
	// dir is the absolute folder walked, "" for a single file.
	dir string
	// links are the symlinks not followed, with why (logged by the
	// caller once logging is set up).
	links []skippedLink
}

// skippedLink is a symlink the walk did not follow.
type skippedLink struct {
	link, target, reason string
}

// Skip reasons of symlinks, as the "Skipped" line counts them.
const (
	skipOutside = "symlink out of folder"
	skipSpecial = "special filesystem"
)

// specialRoots are the mount points of Linux's pseudo filesystems: their
// files (/proc/self/environ: the indexing process's environment) are
// process and device state, never documents, and are not read even with
// --follow-symlinks-outside. The engine's readers refuse them too, also
// where statfs finds such a filesystem mounted elsewhere.
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

// walker collects the files of one argument, following symlinks whose
// target lies inside the argument's folder (or anywhere but a special
// filesystem, with outside).
type walker struct {
	arg, root string // as given, and absolute
	realRoot  string // root with its symlinks resolved
	outside   bool   // follow symlinks out of realRoot (--follow-symlinks-outside)
	excludes  *ignore.GitIgnore
	skipped   map[string]int
	out       *collected
	realSeen  map[string]bool // real paths of files collected (no duplicates via symlinks)
}

// ignoreLevel is the patterns of one .askyourdocsignore and its folder.
type ignoreLevel struct {
	dir string
	gi  *ignore.GitIgnore
}

// collectFiles returns the jobs for a file or a folder (recursively,
// following symlinks with loop detection); unsupported files are counted
// by extension in skipped, files matching excludes (gitignore patterns,
// relative to the folder) or a .askyourdocsignore are left out. Hidden
// folders (.git, .askyourdocs) are not entered. A symlink inside the
// folder is followed only when its target lies inside the folder too,
// unless outside is set (--follow-symlinks-outside); files on /proc, /sys
// and /dev are never read. An argument that is itself a symlink is
// followed: the user named it, and its target is the folder.
func collectFiles(arg string, excludes []string, skipped map[string]int, outside bool) (*collected, error) {
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
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	if onSpecialFS(real) {
		return nil, fmt.Errorf("%s is on a special filesystem (process or device state, not documents): not indexed", real)
	}
	out := &collected{found: map[string]bool{}, complete: true}
	if !info.IsDir() && !info.Mode().IsRegular() {
		// A named pipe would block the reader; it is listed as skipped.
		skipped[specialFileKind(info.Mode())]++
		return out, nil
	}
	if !info.IsDir() {
		kind := fileKind(abs)
		if kind == "" && filepath.Ext(abs) == "" {
			kind = "txt" // a file without extension, given explicitly: plain text
		}
		if kind == "" {
			return nil, unsupportedFileError(abs)
		}
		out.found[abs] = true
		out.jobs = []indexJob{{display: arg, src: newFileSource(abs, abs, kind)}}
		return out, nil
	}
	out.dir = abs
	w := &walker{arg: arg, root: abs, realRoot: real, outside: outside, skipped: skipped, out: out, realSeen: map[string]bool{},
		excludes: ignore.CompileIgnoreLines(excludes...)}
	w.walk(abs, "", map[string]bool{real: true}, nil)
	return out, nil
}

// walk visits dir (rel to the root), with the real paths of the folders
// above it (a symlink back to one of them is a loop) and the ignore files
// in force.
func (w *walker) walk(dir, rel string, ancestors map[string]bool, levels []ignoreLevel) {
	if gi, err := ignore.CompileIgnoreFile(filepath.Join(dir, ignoreFile)); err == nil {
		levels = append(levels, ignoreLevel{dir: dir, gi: gi})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.skipped["unreadable"]++
		w.out.complete = false
		return
	}
	// Real files before symlinks: a file reached both ways is indexed
	// under its own path.
	sort.SliceStable(entries, func(i, j int) bool {
		return entries[i].Type()&fs.ModeSymlink == 0 && entries[j].Type()&fs.ModeSymlink != 0
	})
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		r := filepath.Join(rel, name)
		info, err := os.Stat(p) // follows symlinks
		if err != nil {
			if e.Type()&fs.ModeSymlink != 0 {
				w.skipped["broken symlink"]++
			} else {
				w.skipped["unreadable"]++
				w.out.complete = false
			}
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 && !w.followLink(p) {
			continue
		}
		if info.IsDir() {
			if strings.HasPrefix(name, ".") || w.ignored(p, r, true, levels) {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				w.skipped["unreadable"]++
				w.out.complete = false
				continue
			}
			if ancestors[real] {
				w.skipped["symlink loop"]++
				continue
			}
			next := make(map[string]bool, len(ancestors)+1)
			for k := range ancestors {
				next[k] = true
			}
			next[real] = true
			w.walk(p, r, next, levels)
			continue
		}
		if name == ignoreFile {
			continue
		}
		if !info.Mode().IsRegular() {
			w.skipped[specialFileKind(info.Mode())]++
			continue
		}
		if w.ignored(p, r, false, levels) {
			w.skipped["excluded"]++
			continue
		}
		kind := fileKind(p)
		if kind == "" {
			ext := strings.ToLower(filepath.Ext(p))
			if ext == "" {
				ext = "(no extension)"
			}
			w.skipped[ext]++
			continue
		}
		w.out.found[p] = true
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if w.realSeen[real] {
				w.skipped["duplicate via symlink"]++
				continue
			}
			w.realSeen[real] = true
		}
		w.out.jobs = append(w.out.jobs, indexJob{display: filepath.Join(w.arg, r), src: newFileSource(p, w.root, kind)})
	}
}

// followLink reports whether the walk follows the symlink p: its target
// lies inside the folder (or outside is set) and not on a special
// filesystem. A link not followed is counted and recorded with its reason.
func (w *walker) followLink(p string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		w.skipped["broken symlink"]++
		return false
	}
	reason := ""
	switch {
	case onSpecialFS(real):
		reason = skipSpecial
	case !w.outside && !within(w.realRoot, real):
		reason = skipOutside
	default:
		return true
	}
	w.skipped[reason]++
	w.out.links = append(w.out.links, skippedLink{link: p, target: real, reason: reason})
	return false
}

// logSkippedLinks logs each symlink a walk did not follow, at Info (the
// CLI shows it with --verbose, serve in its log).
func logSkippedLinks(c *collected) {
	for _, l := range c.links {
		hint := ""
		if l.reason == skipOutside {
			hint = "--follow-symlinks-outside indexes it"
		}
		slog.Info("index: symlink not followed", "link", l.link, "target", l.target, "reason", l.reason, "hint", hint)
	}
}

// ignored reports whether the file or folder p (rel to the root) matches
// --exclude or an ignore file above it.
func (w *walker) ignored(p, rel string, dir bool, levels []ignoreLevel) bool {
	match := func(gi *ignore.GitIgnore, r string) bool {
		r = filepath.ToSlash(r)
		if gi.MatchesPath(r) {
			return true
		}
		return dir && gi.MatchesPath(r+"/")
	}
	if match(w.excludes, rel) {
		return true
	}
	for _, l := range levels {
		r, err := filepath.Rel(l.dir, p)
		if err == nil && match(l.gi, r) {
			return true
		}
	}
	return false
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

// root returns the folder a walk started at ("" for a single file).
func (c *collected) root() string { return c.dir }

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
