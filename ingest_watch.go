package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions configures WatchFolder. A nil *WatchOptions, and every
// zero field, means the default.
type WatchOptions struct {
	// Folder is the options of every sync (see IndexFolder): the same
	// ignore and symlink rules apply to what is watched.
	Folder FolderOptions
	// Debounce is how long the folder must stay quiet after a change
	// before the changes are synced as one batch; 0 means 300 ms. A
	// `git checkout` that touches 5,000 files is one batch, and a file
	// still being written is read once its writes pause.
	Debounce time.Duration
	// MaxWait bounds how long a change waits while the folder never
	// stays quiet for Debounce; 0 means 10 s. A file read while it is
	// still being written is read again after its next write.
	MaxWait time.Duration
	// Rescan, when positive, also syncs the whole folder that often,
	// for changes no event reports (network filesystems). When the
	// operating system refuses more watches, the watcher says so once
	// (with the fix) and rescans every Rescan instead, every minute
	// when Rescan is 0.
	Rescan time.Duration
	// Sync, when set, runs each batch instead of the built-in sync: the
	// first sync and rescans with changed nil (the whole folder), event
	// batches with the paths that changed (files and folders, absolute;
	// a folder stands for everything below it). The app then syncs, e.g.
	// by a job that calls IndexFolder. It must not return before the
	// batch is done: batches never overlap.
	Sync func(ctx context.Context, changed []string) error
	// OnSync, when set, is called after each built-in sync with its
	// result and error (not when Sync is set).
	OnSync func(res *FolderResult, err error)
}

// Watch defaults.
const (
	defaultWatchDebounce = 300 * time.Millisecond
	defaultWatchMaxWait  = 10 * time.Second
	defaultWatchRescan   = time.Minute
)

// WatchFolder keeps the index equal to the folder dir until ctx ends: a
// full sync (IndexFolder) at once, to catch up with what changed while
// nothing watched, then one sync per batch of changes the operating system
// reports (github.com/fsnotify/fsnotify; new folders are watched as they
// appear). A batch indexes only the files that changed and removes the
// files gone from the folder; a file created, written, renamed or
// deleted, an editor's save through a temporary file and a rename, and a
// folder moved or deleted whole are all covered. Changes to a
// .askyourdocsignore, or events lost to an overflowing queue, make the
// next batch a full sync.
//
// A sync that fails (the store refuses a write) is logged at Warn and
// retried with the next batch; a file that fails is reported in its
// FolderResult, as IndexFolder reports it. WatchFolder returns nil once
// ctx ends and the running sync is done (cancel ctx to stop it), or an
// error when dir cannot be watched at all (not a folder).
func WatchFolder(ctx context.Context, store Searcher, dir string, opts *WatchOptions) error {
	if store == nil && (opts == nil || opts.Sync == nil) {
		return errors.New("watch folder: store must not be nil")
	}
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = defaultWatchDebounce
	}
	if o.MaxWait <= 0 {
		o.MaxWait = defaultWatchMaxWait
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("watch folder %q: %w", dir, err)
	}
	if info, err := os.Stat(root); err != nil {
		return fmt.Errorf("watch folder %q: %w", dir, err)
	} else if !info.IsDir() {
		return fmt.Errorf("watch folder %q: not a folder", dir)
	}
	w := &folderWatch{store: store, root: root, o: &o, add: func(fw *fsnotify.Watcher, p string) error { return fw.Add(p) }}
	return w.run(ctx)
}

// folderWatch is one WatchFolder run.
type folderWatch struct {
	store Searcher
	root  string
	o     *WatchOptions
	// add adds one folder to the watch list (fw.Add; a test makes it
	// refuse, as a full watch table does).
	add func(fw *fsnotify.Watcher, p string) error
	// polling is set once the operating system refused a watch: the
	// folder is then rescanned periodically.
	polling bool
}

// watchBatch is the changes waiting for the next sync.
type watchBatch struct {
	paths map[string]bool
	full  bool
	first time.Time // when the first change of the batch arrived
}

func (b *watchBatch) empty() bool { return !b.full && len(b.paths) == 0 }

// run watches until ctx ends.
func (w *folderWatch) run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		// No watcher at all (fs.inotify.max_user_instances reached).
		w.fallBack(err)
	} else {
		defer fw.Close()
		w.addTree(fw, w.root)
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw != nil {
		events, errs = fw.Events, fw.Errors
	}
	var rescan <-chan time.Time
	startRescan := func() {
		if every := w.rescanEvery(); every > 0 && rescan == nil {
			t := time.NewTicker(every)
			rescan = t.C
			context.AfterFunc(ctx, t.Stop)
		}
	}
	startRescan()

	batch := &watchBatch{paths: map[string]bool{}, full: true} // the catch-up sync
	var done chan error                                        // gets the running sync's outcome
	quiet := time.NewTimer(0)                                  // fires when the batch may run
	defer quiet.Stop()
	schedule := func() {
		if batch.first.IsZero() {
			batch.first = time.Now()
		}
		wait := min(w.o.Debounce, time.Until(batch.first.Add(w.o.MaxWait)))
		quiet.Reset(max(wait, 0))
	}
	for {
		select {
		case <-ctx.Done():
			if done != nil {
				<-done
			}
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if w.note(fw, ev, batch) {
				schedule()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// Lost events (a full kernel queue): only a full sync is
			// sure to see every change.
			slog.WarnContext(ctx, "watch folder: events lost; the whole folder is synced again", "folder", w.root, "err", err)
			batch.full = true
			schedule()
		case <-rescan:
			batch.full = true
			schedule()
		case <-quiet.C:
			if done != nil || batch.empty() {
				continue // the end of the running sync schedules it
			}
			run := batch
			batch = &watchBatch{paths: map[string]bool{}}
			done = make(chan error, 1)
			go func(d chan error) { d <- w.sync(ctx, run) }(done)
		case err := <-done:
			done = nil
			if w.polling {
				startRescan()
			}
			if err != nil && ctx.Err() == nil {
				// The store refused: the whole folder again, after
				// MaxWait, so that a lasting failure does not spin.
				slog.WarnContext(ctx, "watch folder: sync failed; retrying", "folder", w.root, "in", w.o.MaxWait, "err", err)
				batch.full = true
				if batch.first.IsZero() {
					batch.first = time.Now()
				}
				quiet.Reset(w.o.MaxWait)
				continue
			}
			if !batch.empty() {
				schedule()
			}
		}
	}
}

// rescanEvery is the period of full syncs: Rescan, or once watching
// failed, Rescan or a minute.
func (w *folderWatch) rescanEvery() time.Duration {
	switch {
	case w.o.Rescan > 0:
		return w.o.Rescan
	case w.polling:
		return defaultWatchRescan
	}
	return 0
}

// note adds the event ev to batch and reports whether it needs a sync.
func (w *folderWatch) note(fw *fsnotify.Watcher, ev fsnotify.Event, batch *watchBatch) bool {
	p := filepath.Clean(ev.Name)
	rel, err := filepath.Rel(w.root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	if hiddenPath(rel) {
		return false // never indexed
	}
	if ev.Op == fsnotify.Chmod {
		return false // a delete also sends one; the Remove follows
	}
	if filepath.Base(p) == folderIgnoreFile {
		batch.full = true // the rules changed: every file may be in or out
		return true
	}
	if ev.Has(fsnotify.Create) {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			// A folder created or moved in: watch it, and sync what it
			// already holds (its files may predate the watch).
			w.addTree(fw, p)
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A folder deleted or moved away: its watches go (moved, they
		// would report under the old path).
		w.removeTree(fw, p)
	}
	batch.paths[p] = true
	return true
}

// hiddenPath reports whether the relative path rel lies in a hidden
// folder (.git and the like), which the walk never enters. A hidden file
// counts as any other: the walk indexes one of a supported type.
func hiddenPath(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, part := range parts[:len(parts)-1] {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// addTree watches the folder p and every folder below it that the walk
// enters (not hidden ones; symlinked ones inside the folder or, with
// FollowSymlinksOutside, anywhere but a special filesystem). A refused
// watch (the watch table is full) turns on periodic rescans.
func (w *folderWatch) addTree(fw *fsnotify.Watcher, p string) {
	if fw == nil {
		return
	}
	realRoot, err := filepath.EvalSymlinks(w.root)
	if err != nil {
		realRoot = w.root
	}
	seen := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] || specialFilesystem(real) != "" {
			return
		}
		if !w.o.Folder.FollowSymlinksOutside && !withinFolder(realRoot, real) {
			return
		}
		seen[real] = true
		if err := w.add(fw, dir); err != nil {
			if watchLimit(err) {
				w.fallBack(err)
			} else {
				slog.Debug("watch folder: a folder could not be watched", "folder", dir, "err", err)
			}
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || w.polling {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			if e.IsDir() || (e.Type()&fs.ModeSymlink != 0 && isDir(sub)) {
				walk(sub)
			}
		}
	}
	walk(p)
}

// isDir reports whether p is a folder (following symlinks).
func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// removeTree stops watching p and the folders below it.
func (w *folderWatch) removeTree(fw *fsnotify.Watcher, p string) {
	if fw == nil {
		return
	}
	for _, watched := range fw.WatchList() {
		if withinFolder(p, watched) {
			_ = fw.Remove(watched) // gone already: inotify dropped it
		}
	}
}

// watchLimit reports whether err says the operating system's table of
// watches (or of watchers) is full.
func watchLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// fallBack turns on periodic rescans after the operating system refused a
// watch, saying so once with the fix.
func (w *folderWatch) fallBack(err error) {
	if w.polling {
		return
	}
	w.polling = true
	every := w.rescanEvery()
	slog.Warn("watch folder: the operating system refuses more watches; rescanning the folder periodically instead "+
		"(raise the limit: sysctl fs.inotify.max_user_watches=524288, and fs.inotify.max_user_instances=512)",
		"folder", w.root, "every", every, "err", err)
}

// sync runs one batch, the whole folder or the changed paths, and
// returns its error.
func (w *folderWatch) sync(ctx context.Context, b *watchBatch) error {
	var changed []string
	if !b.full {
		for p := range b.paths {
			changed = append(changed, p)
		}
		slices.Sort(changed)
	}
	if w.o.Sync != nil {
		return w.o.Sync(ctx, changed)
	}
	o := w.o.Folder
	o.Changed = changed
	if b.full {
		o.Changed = nil
	}
	res, err := IndexFolder(ctx, w.store, w.root, &o)
	if w.o.OnSync != nil {
		w.o.OnSync(res, err)
	}
	return err
}

// underAny reports whether p is one of paths or lies below one of them.
func underAny(p string, paths map[string]bool) bool {
	for q := p; ; {
		if paths[q] {
			return true
		}
		parent := filepath.Dir(q)
		if parent == q {
			return false
		}
		q = parent
	}
}
