package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// folderIgnoreFile is the name of the ignore file IndexFolder reads in the
// folder and every subfolder: gitignore patterns for the files and folders
// below it.
const folderIgnoreFile = ".askyourdocsignore"

// Reasons a folder walk gives for what it did not index, the keys of
// FolderResult.Skipped besides file extensions.
const (
	skipExcluded    = "excluded"
	skipOutside     = "symlink out of folder"
	skipSpecialFS   = "special filesystem"
	skipBrokenLink  = "broken symlink"
	skipLinkLoop    = "symlink loop"
	skipUnreadable  = "unreadable"
	skipDuplicate   = "duplicate via symlink"
	skipNoExtension = "(no extension)"
	skipSpecialFile = "special file"
	skipNamedPipe   = "named pipe"
	skipSocket      = "socket"
	skipDeviceFile  = "device"
)

// folderScan is what a walk of one folder found.
type folderScan struct {
	// files are the absolute paths of the files to index, in walk order
	// (sorted by name per folder, real files before symlinks).
	files []string
	// found holds every supported file found, also a second path of a
	// file reached twice through a symlink: the removal of files gone
	// from the folder keeps all of them.
	found map[string]bool
	// complete is false when part of the folder could not be read: then
	// nothing is removed.
	complete    bool
	skipped     map[string]int
	notFollowed []FolderFile
}

// folderWalker walks one folder, following symlinks whose target lies in
// the folder (or anywhere but a special filesystem, with outside).
type folderWalker struct {
	root     string // absolute, as given
	realRoot string // root with its symlinks resolved
	outside  bool
	ocr      bool // images are indexed (an OCR is set)
	excludes *ignore.GitIgnore
	out      *folderScan
	realSeen map[string]bool // real paths of files taken (no duplicates via symlinks)
}

// ignoreLevel is the patterns of one ignore file and its folder.
type ignoreLevel struct {
	dir string
	gi  *ignore.GitIgnore
}

// scanFolder walks the folder root (absolute; a symlink to a folder is
// followed: the caller named it) for the files IndexFolder indexes.
// Hidden folders (.git, .askyourdocs) are not entered; files matching
// excludes or an ignore file are left out; a symlink is followed only when
// its target lies inside the folder, unless outside; files on a special
// filesystem are never read.
func scanFolder(root string, excludes []string, outside, ocr bool) (*folderScan, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder (index a single file with IndexSource and NewFileSource)", root)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if kind := specialFilesystem(real); kind != "" {
		return nil, fmt.Errorf("%s is on the %s filesystem (process or device state, not documents): not indexed", real, kind)
	}
	out := &folderScan{found: map[string]bool{}, complete: true, skipped: map[string]int{}}
	w := &folderWalker{root: root, realRoot: real, outside: outside, ocr: ocr, out: out,
		realSeen: map[string]bool{}, excludes: ignore.CompileIgnoreLines(excludes...)}
	w.walk(root, "", map[string]bool{real: true}, nil)
	return out, nil
}

// walk visits dir (rel to the root), with the real paths of the folders
// above it (a symlink back to one of them is a loop) and the ignore files
// in force.
func (w *folderWalker) walk(dir, rel string, ancestors map[string]bool, levels []ignoreLevel) {
	if gi, err := ignore.CompileIgnoreFile(filepath.Join(dir, folderIgnoreFile)); err == nil {
		levels = append(levels, ignoreLevel{dir: dir, gi: gi})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.out.skipped[skipUnreadable]++
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
		link := e.Type()&fs.ModeSymlink != 0
		info, err := os.Stat(p) // follows symlinks
		if err != nil {
			if link {
				w.out.skipped[skipBrokenLink]++
			} else {
				w.out.skipped[skipUnreadable]++
				w.out.complete = false
			}
			continue
		}
		if link && !w.followLink(p) {
			continue
		}
		if info.IsDir() {
			w.enter(p, r, name, ancestors, levels)
			continue
		}
		if name == folderIgnoreFile {
			continue
		}
		w.file(p, r, info, levels)
	}
}

// enter walks the subfolder p unless it is hidden, ignored or a loop.
func (w *folderWalker) enter(p, rel, name string, ancestors map[string]bool, levels []ignoreLevel) {
	if strings.HasPrefix(name, ".") {
		return // .git, .askyourdocs: never documents, not counted
	}
	if w.ignored(p, rel, true, levels) {
		return // its files are not counted one by one
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		w.out.skipped[skipUnreadable]++
		w.out.complete = false
		return
	}
	if ancestors[real] {
		w.out.skipped[skipLinkLoop]++
		return
	}
	next := make(map[string]bool, len(ancestors)+1)
	for k := range ancestors {
		next[k] = true
	}
	next[real] = true
	w.walk(p, rel, next, levels)
}

// file takes the file p (rel to the root) when it is a regular file of a
// supported type that no pattern excludes.
func (w *folderWalker) file(p, rel string, info fs.FileInfo, levels []ignoreLevel) {
	if !info.Mode().IsRegular() {
		w.out.skipped[specialFileKind(info.Mode())]++ // a named pipe would block the reader
		return
	}
	if w.ignored(p, rel, false, levels) {
		w.out.skipped[skipExcluded]++
		return
	}
	if ext := filepath.Ext(p); !folderFileSupported(ext, w.ocr) {
		ext = strings.ToLower(ext)
		if ext == "" {
			ext = skipNoExtension
		}
		w.out.skipped[ext]++
		return
	}
	w.out.found[p] = true
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if w.realSeen[real] {
			w.out.skipped[skipDuplicate]++
			return
		}
		w.realSeen[real] = true
	}
	w.out.files = append(w.out.files, p)
}

// folderFileSupported reports whether a folder's file with extension ext
// is indexed: the formats the readers know, and images when an OCR reads
// them. A file without extension is not taken from a folder (most are
// scripts and binaries); named alone, NewFileSource reads it as text.
func folderFileSupported(ext string, ocr bool) bool {
	return isHTMLExt(ext) || (ext != "" && SupportedDocumentExt(ext)) || (ocr && SupportedImageExt(ext))
}

// followLink reports whether the walk follows the symlink p: its target
// lies inside the folder (or outside is set) and not on a special
// filesystem. A link not followed is counted and recorded with its reason.
func (w *folderWalker) followLink(p string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		w.out.skipped[skipBrokenLink]++
		return false
	}
	var reason error
	switch kind := specialFilesystem(real); {
	case kind != "":
		w.out.skipped[skipSpecialFS]++
		reason = fmt.Errorf("%s: target on the %s filesystem is never read", skipSpecialFS, kind)
	case !w.outside && !withinFolder(w.realRoot, real):
		w.out.skipped[skipOutside]++
		reason = fmt.Errorf("%w: FollowSymlinksOutside follows it", ErrSymlinkOutside)
	default:
		return true
	}
	w.out.notFollowed = append(w.out.notFollowed, FolderFile{Path: p, Target: real, Err: reason})
	return false
}

// ignored reports whether the file or folder p (rel to the root) matches
// the excludes or an ignore file above it.
func (w *folderWalker) ignored(p, rel string, dir bool, levels []ignoreLevel) bool {
	match := func(gi *ignore.GitIgnore, r string) bool {
		r = filepath.ToSlash(r)
		return gi.MatchesPath(r) || (dir && gi.MatchesPath(r+"/"))
	}
	if match(w.excludes, rel) {
		return true
	}
	for _, l := range levels {
		if r, err := filepath.Rel(l.dir, p); err == nil && match(l.gi, r) {
			return true
		}
	}
	return false
}

// withinFolder reports whether path p is root or lies below it (both
// cleaned, absolute).
func withinFolder(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// specialFileKind names a file that is neither a folder nor a regular
// file, as FolderResult.Skipped counts it.
func specialFileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return skipNamedPipe
	case m&fs.ModeSocket != 0:
		return skipSocket
	case m&fs.ModeDevice != 0:
		return skipDeviceFile
	}
	return skipSpecialFile
}
