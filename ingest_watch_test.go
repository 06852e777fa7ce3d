package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchHarness runs WatchFolder over a real temporary folder and lets a
// test wait, sync by sync, until the index equals a fresh index of the
// folder.
type watchHarness struct {
	t     *testing.T
	dir   string
	store *SQLiteStore
	syncs chan *FolderResult
	stop  func()
	count int // syncs seen
}

// startWatch starts WatchFolder on dir (filled by the caller before or
// after) with opts' fields besides OnSync, and waits for its first sync.
func startWatch(t *testing.T, dir string, opts *WatchOptions) *watchHarness {
	t.Helper()
	h := &watchHarness{t: t, dir: dir, store: newFolderTestStore(t), syncs: make(chan *FolderResult, 1000)}
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	o.OnSync = func(res *FolderResult, err error) {
		if err != nil {
			t.Errorf("sync: %v", err)
		}
		h.syncs <- res
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- WatchFolder(ctx, h.store, dir, &o) }()
	h.stop = func() {
		cancel()
		if err := <-ended; err != nil {
			t.Errorf("WatchFolder: %v", err)
		}
	}
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
	})
	h.next("the first sync")
	return h
}

// watchSyncWait bounds the wait for one sync: a liveness bound, not a
// speed check (a sync of 2,000 files under the race detector took more
// than 30 s on a loaded 2-core machine).
const watchSyncWait = 2 * time.Minute

// next waits for the next sync (at most watchSyncWait).
func (h *watchHarness) next(what string) *FolderResult {
	h.t.Helper()
	select {
	case res := <-h.syncs:
		h.count++
		return res
	case <-time.After(watchSyncWait):
		h.t.Fatalf("%s: no sync within %v", what, watchSyncWait)
		return nil
	}
}

// settle waits, sync by sync, until the index equals a fresh IndexFolder
// of the folder (the same files with the same chunk counts), and returns
// how many syncs that took. The folder must not change meanwhile.
func (h *watchHarness) settle(what string) int {
	h.t.Helper()
	fresh := newFolderTestStore(h.t)
	if _, err := IndexFolder(context.Background(), fresh, h.dir, nil); err != nil {
		h.t.Fatal(err)
	}
	want := indexedFiles(h.t, fresh, h.dir)
	fresh.Close()
	return h.settleTo(what, want)
}

// settleTo waits, sync by sync, until the index lists want (as
// indexedFiles), and returns how many syncs that took.
func (h *watchHarness) settleTo(what string, want []string) int {
	h.t.Helper()
	for n := 0; ; n++ {
		if got := indexedFiles(h.t, h.store, h.dir); slices.Equal(got, want) {
			return n
		}
		h.next(what)
	}
}

// searchable reports whether the keyword query finds a chunk holding want.
func (h *watchHarness) searchable(query, want string) bool {
	hits, err := h.store.SearchText(context.Background(), query, 5, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, d := range hits {
		if strings.Contains(DocText(d), want) {
			return true
		}
	}
	return false
}

// TestWatchFolderFollowsChanges: on a real folder, each change ends with
// the index equal to a fresh index of the folder: a file created, one
// edited through a temporary file and a rename (as editors save), one
// deleted, a folder moved in and one moved away, a burst of 2,000 files
// (a handful of syncs, not 2,000), and a file written slowly.
func TestWatchFolderFollowsChanges(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"start.md": "# Start\n\nIndexed before the watch began.\n"})
	h := startWatch(t, dir, &WatchOptions{Debounce: 100 * time.Millisecond, MaxWait: 2 * time.Second})
	if got := indexedFiles(t, h.store, dir); !slices.Equal(got, []string{"start.md:1"}) {
		t.Fatalf("first sync: %v", got)
	}

	writeTree(t, dir, map[string]string{"a.md": "# Anchors\n\nThe anchor winch is greased every spring.\n"})
	h.settle("create")

	tmp := filepath.Join(dir, ".a.md.swp")
	if err := os.WriteFile(tmp, []byte("# Anchors\n\nThe anchor winch is greased every autumn.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	h.settle("save through a temp file")
	for !h.searchable("winch autumn", "autumn") {
		h.next("the edit")
	}

	if err := os.Remove(filepath.Join(dir, "start.md")); err != nil {
		t.Fatal(err)
	}
	h.settle("delete")

	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"moved/one.md": "# One\n\nFirst moved note.\n", "moved/deep/two.txt": "Second moved note.\n"})
	if err := os.Rename(filepath.Join(outside, "moved"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	h.settle("a folder moved in")
	if got := indexedFiles(t, h.store, dir); !slices.Contains(got, "moved/deep/two.txt:1") {
		t.Fatalf("moved folder not indexed: %v", got)
	}
	// Written below the moved folder: its watch must be there.
	writeTree(t, dir, map[string]string{"moved/deep/three.md": "# Three\n\nWritten after the move.\n"})
	h.settle("a file in the moved folder")

	if err := os.Rename(filepath.Join(dir, "moved"), filepath.Join(outside, "gone")); err != nil {
		t.Fatal(err)
	}
	h.settle("a folder moved away")
	if got := indexedFiles(t, h.store, dir); len(got) != 1 {
		t.Fatalf("after the move away: %v", got)
	}

	// A file written slowly, in pieces: once its writes stop, the index
	// holds all of it.
	f, err := os.Create(filepath.Join(dir, "slow.md"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("# Slow\n\n")
	for i := range 8 {
		fmt.Fprintf(f, "Part %d of the slowly written log.\n\n", i)
		f.Sync()
		time.Sleep(60 * time.Millisecond) // a slow writer, not synchronisation
	}
	f.WriteString("The last part names the keel.\n")
	f.Close()
	h.settle("a slow file")
	for !h.searchable("keel", "keel") {
		h.next("the slow file's end")
	}

	// A burst of 2,000 one-chunk files: a fresh index of the folder is
	// what it held plus them (computed, not indexed twice: the race
	// detector makes indexing slow).
	burst := map[string]string{}
	want := indexedFiles(t, h.store, dir)
	for i := range 2000 {
		name := fmt.Sprintf("burst/%02d/n%04d.txt", i%20, i)
		burst[name] = fmt.Sprintf("Burst note %d about buoy %d.\n", i, i)
		want = append(want, name+":1")
	}
	slices.Sort(want)
	writeTree(t, dir, burst)
	if n := h.settleTo("a burst of 2,000 files", want); n > 10 {
		t.Errorf("a burst of 2,000 files took %d syncs, want a handful", n)
	}
}

// TestWatchFolderIgnoreRules: the ignore rules of IndexFolder apply to
// what the watcher indexes, and a changed .askyourdocsignore resyncs the
// whole folder.
func TestWatchFolderIgnoreRules(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"keep.md": "# Keep\n\nThis stays.\n"})
	h := startWatch(t, dir, &WatchOptions{Folder: FolderOptions{Exclude: []string{"drafts/"}}, Debounce: 50 * time.Millisecond})
	writeTree(t, dir, map[string]string{
		"drafts/d.md": "# Draft\n\nNot for readers.\n",
		".git/x.md":   "# Hidden\n\nNever indexed.\n",
		"late.md":     "# Late\n\nIndexed.\n",
	})
	for !slices.Contains(indexedFiles(t, h.store, dir), "late.md:1") {
		h.next("late.md")
	}
	if got := indexedFiles(t, h.store, dir); !slices.Equal(got, []string{"keep.md:1", "late.md:1"}) {
		t.Errorf("indexed = %v", got)
	}
	writeTree(t, dir, map[string]string{folderIgnoreFile: "late.md\n"})
	for slices.Contains(indexedFiles(t, h.store, dir), "late.md:1") {
		h.next("the ignore file")
	}
}

// TestWatchFolderFallsBackToRescans: when the operating system refuses a
// watch (its table is full), the watcher rescans the folder periodically
// and still picks the changes up.
func TestWatchFolderFallsBackToRescans(t *testing.T) {
	dir := t.TempDir()
	store := newFolderTestStore(t)
	synced := make(chan struct{}, 100)
	o := &WatchOptions{Rescan: 50 * time.Millisecond, Debounce: 10 * time.Millisecond,
		OnSync: func(*FolderResult, error) { synced <- struct{}{} }}
	w := &folderWatch{store: store, root: dir, o: o,
		add: func(*fsnotify.Watcher, string) error { return fmt.Errorf("inotify_add_watch: %w", syscall.ENOSPC) }}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- w.run(ctx) }()
	defer func() {
		cancel()
		<-ended
	}()
	<-synced
	writeTree(t, dir, map[string]string{"new.md": "# New\n\nFound by a rescan.\n"})
	deadline := time.After(30 * time.Second)
	for !slices.Contains(indexedFiles(t, store, dir), "new.md:1") {
		select {
		case <-synced:
		case <-deadline:
			t.Fatal("the rescan never found new.md")
		}
	}
	if !w.polling {
		t.Error("the watcher did not switch to rescans")
	}
}

// TestWatchFolderSyncHook: with Sync set, the app runs each batch: the
// first with the whole folder (nil), the next with the paths that
// changed.
func TestWatchFolderSyncHook(t *testing.T) {
	dir := t.TempDir()
	batches := make(chan []string, 10)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		ended <- WatchFolder(ctx, nil, dir, &WatchOptions{Debounce: 50 * time.Millisecond,
			Sync: func(_ context.Context, changed []string) error { batches <- changed; return nil }})
	}()
	defer func() {
		cancel()
		if err := <-ended; err != nil {
			t.Error(err)
		}
	}()
	if first := <-batches; first != nil {
		t.Errorf("first batch = %v, want nil (the whole folder)", first)
	}
	writeTree(t, dir, map[string]string{"x.md": "# X\n\nx\n"})
	select {
	case b := <-batches:
		if !slices.Contains(b, filepath.Join(dir, "x.md")) {
			t.Errorf("batch = %v, want x.md", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no batch for x.md")
	}
	if err := WatchFolder(ctx, nil, filepath.Join(dir, "x.md"), &WatchOptions{Sync: func(context.Context, []string) error { return nil }}); err == nil {
		t.Error("watching a file: no error")
	}
}
