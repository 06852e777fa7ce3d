package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firebase/genkit/go/genkit"
)

// writeTree writes files (relative path -> content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newFolderTestStore opens an SQLiteStore with the built-in embedder in a
// folder of its own.
func newFolderTestStore(t *testing.T) *SQLiteStore {
	t.Helper()
	s, err := NewSQLiteStore(context.Background(), nil, NewLocalEmbedder(0), filepath.Join(t.TempDir(), "i.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// indexedFiles returns the store's sources as "rel:chunks", sorted, rel
// to dir.
func indexedFiles(t *testing.T, s Searcher, dir string) []string {
	t.Helper()
	srcs, err := s.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, src := range srcs {
		rel, err := filepath.Rel(dir, src.URL)
		if err != nil {
			rel = src.URL
		}
		out = append(out, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), src.Chunks))
	}
	slices.Sort(out)
	return out
}

// TestIndexFolderSync indexes a folder, changes it (a file deleted, one
// edited, one added, one emptied) and syncs again: the index then equals a
// fresh index of the folder, the ignore rules hold, and the result counts
// what happened; on every store.
func TestIndexFolderSync(t *testing.T) {
	for name, open := range conformanceStores() {
		t.Run(name, func(t *testing.T) {
			emb := newTestEmbedder(64)
			testIndexFolderSync(t, open(t, emb), open(t, emb))
		})
	}
}

// testIndexFolderSync is TestIndexFolderSync on one kind of store: s and
// fresh are two empty stores of it.
func testIndexFolderSync(t *testing.T, s, fresh Searcher) {
	ctx := context.Background()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.md":                    "# Ferries\n\nThe ferry to the island leaves at nine from pier four.\n",
		"sub/b.txt":               "Opening hours\n\nThe boathouse opens at eight and closes at six.\n",
		"sub/draft-plan.md":       "# Draft\n\nNot ready for readers.\n",
		"sub/" + folderIgnoreFile: "draft*\n",
		"private/p.md":            "# Private\n\nSalary bands of the crew.\n",
		".git/x.md":               "# Hidden\n\nNever indexed.\n",
		"logo.png":                "not an image",
		"Makefile":                "all:\n",
		"e.md":                    "# Empty soon\n\nThis file will be emptied.\n",
	})
	var walked []string
	var seen []string
	opts := &FolderOptions{Exclude: []string{"private/"}, Readers: 2,
		OnWalk: func(paths []string) { walked = paths },
		OnFile: func(f FolderFile) { seen = append(seen, filepath.Base(f.Path)) }}
	res, err := IndexFolder(ctx, s, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := indexedFiles(t, s, dir); !slices.Equal(got, []string{"a.md:1", "e.md:1", "sub/b.txt:1"}) {
		t.Errorf("indexed = %v", got)
	}
	if res.Indexed != 3 || res.Chunks != 3 || res.Failed != 0 || res.Removed != 0 || !res.Complete {
		t.Errorf("result = %+v", res)
	}
	want := map[string]int{".png": 1, "(no extension)": 1, "excluded": 1}
	for k, n := range want {
		if res.Skipped[k] != n {
			t.Errorf("skipped[%q] = %d, want %d (all: %v)", k, res.Skipped[k], n, res.Skipped)
		}
	}
	if len(walked) != 3 || strings.Join(seen, ",") != "a.md,e.md,b.txt" {
		t.Errorf("OnWalk got %v, OnFile saw %v", walked, seen)
	}

	// The folder changes while nothing watches.
	if err := os.Remove(filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{
		"sub/b.txt": "Opening hours\n\nThe boathouse now opens at seven and closes at nine.\n",
		"d.md":      "# Kayaks\n\nA day tour costs 95 euros.\n",
		"e.md":      "",
	})
	seen = nil
	res, err = IndexFolder(ctx, s, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Indexed != 2 || res.Empty != 1 || res.Removed != 1 {
		t.Errorf("second sync: %+v", res)
	}
	last := res.Files[len(res.Files)-1]
	if !last.Removed || filepath.Base(last.Path) != "a.md" || last.Deleted != 1 {
		t.Errorf("removed entry = %+v", last)
	}
	if _, err := IndexFolder(ctx, fresh, dir, opts); err != nil {
		t.Fatal(err)
	}
	if got, want := indexedFiles(t, s, dir), indexedFiles(t, fresh, dir); !slices.Equal(got, want) {
		t.Errorf("synced index %v, fresh index %v", got, want)
	}
	hits, err := s.SearchText(ctx, "boathouse seven", 3, nil)
	if err != nil || len(hits) == 0 || !strings.Contains(DocText(hits[0]), "seven") {
		t.Errorf("the edit is not searchable: %v", err)
	}

	// KeepRemoved keeps a gone file.
	if err := os.Remove(filepath.Join(dir, "d.md")); err != nil {
		t.Fatal(err)
	}
	keep := *opts
	keep.KeepRemoved = true
	if res, err := IndexFolder(ctx, s, dir, &keep); err != nil || res.Removed != 0 {
		t.Fatalf("KeepRemoved: %v, %+v", err, res)
	}
	if got := indexedFiles(t, s, dir); !slices.Contains(got, "d.md:1") {
		t.Errorf("KeepRemoved dropped d.md: %v", got)
	}

	// Changed limits what is read to those paths; removal still covers
	// the whole folder.
	only := *opts
	only.Changed = []string{filepath.Join(dir, "sub")}
	res, err = IndexFolder(ctx, s, dir, &only)
	if err != nil || res.Indexed != 1 || res.Removed != 1 || filepath.Base(res.Files[0].Path) != "b.txt" {
		t.Errorf("Changed sub/: %v, %+v", err, res)
	}
}

// TestIndexFolderFailuresKeepTheRest: a broken file is reported and keeps
// its previous version; the other files are indexed; a file that is not a
// folder and a missing folder are errors.
func TestIndexFolderFailuresKeepTheRest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"good.md":     "# Good\n\nThe lighthouse keeper logs the weather at dawn.\n",
		"report.docx": "# Report\n\nPlain text, for now.\n",
	})
	s := newFolderTestStore(t)
	// The first run reads report.docx through a source of the app's own
	// (as text); the second reads it as the broken .docx it is.
	asText := func(p, folder string) IngestSource {
		return &textSource{FileSource: FileSource{Path: p, Source: folder}}
	}
	if _, err := IndexFolder(ctx, s, dir, &FolderOptions{Source: asText}); err != nil {
		t.Fatal(err)
	}
	res, err := IndexFolder(ctx, s, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || res.Indexed != 1 {
		t.Fatalf("result = %+v", res)
	}
	var failed FolderFile
	for _, f := range res.Files {
		if f.Err != nil {
			failed = f
		}
	}
	if filepath.Base(failed.Path) != "report.docx" || strings.Contains(failed.Err.Error(), "Plain text") {
		t.Errorf("failure = %+v (the error must not carry the file's bytes)", failed)
	}
	if got := indexedFiles(t, s, dir); !slices.Equal(got, []string{"good.md:1", "report.docx:1"}) {
		t.Errorf("indexed = %v, want the failed file's previous version kept", got)
	}
	if _, err := IndexFolder(ctx, s, filepath.Join(dir, "good.md"), nil); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a file: err = %v", err)
	}
	if _, err := IndexFolder(ctx, s, filepath.Join(dir, "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing folder: err = %v", err)
	}
}

// TestIndexFolderInterrupted: a cancelled run keeps the finished files,
// lists the interrupted one with the context's error and removes nothing.
func TestIndexFolderInterrupted(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("f%d.md", i)] = fmt.Sprintf("# Note %d\n\nHarbour note number %d about tides.\n", i, i)
	}
	writeTree(t, dir, files)
	s := newFolderTestStore(t)
	if _, err := IndexFolder(context.Background(), s, dir, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "f5.md")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := IndexFolder(ctx, s, dir, &FolderOptions{OnFile: func(f FolderFile) {
		if filepath.Base(f.Path) == "f1.md" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("err = %v", err)
	}
	if res.Removed != 0 || len(indexedFiles(t, s, dir)) != 6 {
		t.Errorf("an interrupted run removed files: %+v, %v", res, indexedFiles(t, s, dir))
	}
}

// TestIndexFolderSymlinksStayInside: by default the walk follows a link
// only to a target inside the folder; links out of it and into /proc are
// counted and listed with their reasons; FollowSymlinksOutside follows
// the outside ones but never /proc.
func TestIndexFolderSymlinksStayInside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	root := t.TempDir()
	shared, private := filepath.Join(root, "shared"), filepath.Join(root, "private")
	writeTree(t, root, map[string]string{
		"shared/real/public.md":  "# Ferry\n\nThe ferry leaves at nine.\n",
		"private/secret.txt":     "db_password = hunter2-zebra-quartz\n",
		"private/dir/keys.md":    "# Keys\n\nThe vault passphrase is orchid-lantern-seven.\n",
		"shared/loop/readme.txt": "A folder that links back to its parent.\n",
	})
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(shared, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(private, "secret.txt"), "notes.txt")
	link(filepath.Join(private, "dir"), "outdir")
	link("/proc/self/environ", "env.txt")
	link(filepath.Join("real", "public.md"), "inside.md")
	link(shared, "loop/up")
	link(filepath.Join(root, "nowhere"), "broken.md")

	scan, err := scanFolder(shared, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range scan.files {
		names = append(names, filepath.Base(p))
	}
	if got := strings.Join(names, ","); got != "readme.txt,public.md" {
		t.Errorf("files = %s, want readme.txt,public.md (inside.md is a duplicate)", got)
	}
	for k, n := range map[string]int{skipOutside: 2, skipSpecialFS: 1, skipDuplicate: 1, skipLinkLoop: 1, skipBrokenLink: 1} {
		if scan.skipped[k] != n {
			t.Errorf("skipped[%q] = %d, want %d (%v)", k, scan.skipped[k], n, scan.skipped)
		}
	}
	outside := 0
	for _, l := range scan.notFollowed {
		if errors.Is(l.Err, ErrSymlinkOutside) {
			outside++
			if !strings.HasPrefix(l.Target, private) {
				t.Errorf("link %s: target %s", l.Path, l.Target)
			}
		}
	}
	if len(scan.notFollowed) != 3 || outside != 2 {
		t.Errorf("not followed = %+v", scan.notFollowed)
	}

	scan, err = scanFolder(shared, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, p := range scan.files {
		names = append(names, filepath.Base(p))
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, "notes.txt") || !strings.Contains(got, "keys.md") || strings.Contains(got, "env.txt") {
		t.Errorf("with outside: files = %s, want notes.txt and keys.md, never env.txt", got)
	}

	// Indexed, the secret stays out and the environment is never read.
	s := newFolderTestStore(t)
	if _, err := IndexFolder(context.Background(), s, shared, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"hunter2", "orchid lantern", "PATH"} {
		if hits, _ := s.SearchText(context.Background(), q, 5, nil); len(hits) > 0 {
			t.Errorf("%q is searchable through a symlink out of the folder", q)
		}
	}
	if _, err := IndexFolder(context.Background(), s, "/proc/self", nil); err == nil || !strings.Contains(err.Error(), "filesystem") {
		t.Errorf("/proc/self: err = %v", err)
	}
}

// TestIndexFolderLocalvecWritesOnce: on a LocalvecStore a folder sync is
// one Bulk run, one file write, not one per file.
func TestIndexFolderLocalvecWritesOnce(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nBuoy %d marks the channel.\n", i, i)
	}
	writeTree(t, dir, files)
	s, err := NewLocalvecStore(genkit.Init(t.Context()), "docs", NewLocalEmbedder(0), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := s.fileWrites.Load()
	res, err := IndexFolder(context.Background(), s, dir, nil)
	if err != nil || res.Indexed != 20 {
		t.Fatalf("%v, %+v", err, res)
	}
	if n := s.fileWrites.Load() - before; n != 1 {
		t.Errorf("%d file writes for 20 files, want 1", n)
	}
}

// textSource reads its file as plain text, whatever its extension.
type textSource struct{ FileSource }

func (s *textSource) Fetch(context.Context) ([]Paragraph, error) {
	b, err := os.ReadFile(s.Path)
	return []Paragraph{{Text: string(b)}}, err
}

// countingSource is a source whose Fetch counts its calls and returns its
// own paragraph or error.
type countingSource struct {
	FileSource
	i     int
	reads *atomic.Int32
	block bool
}

func (c *countingSource) Fetch(ctx context.Context) ([]Paragraph, error) {
	c.reads.Add(1)
	if c.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if c.i%5 == 0 {
		return nil, fmt.Errorf("file %d is broken", c.i)
	}
	return []Paragraph{{Text: fmt.Sprintf("text %d", c.i)}}, nil
}

// TestPrefetchSourcesKeepsEachResult: prefetched sources return their own
// fetch's paragraphs or error, each read once, the chunk limit passed
// on; a second Fetch reads again; a cancelled writer gets the context's
// error and stop returns.
func TestPrefetchSourcesKeepsEachResult(t *testing.T) {
	reads := make([]atomic.Int32, 40)
	srcs := make([]IngestSource, len(reads))
	for i := range srcs {
		srcs[i] = &countingSource{FileSource: FileSource{Path: fmt.Sprintf("/f%d", i), ChunkLimit: 7}, i: i, reads: &reads[i]}
	}
	stop := prefetchSources(context.Background(), srcs, 3)
	for i, src := range srcs {
		paras, err := src.Fetch(context.Background())
		switch {
		case i%5 == 0:
			if err == nil || err.Error() != fmt.Sprintf("file %d is broken", i) {
				t.Errorf("source %d: error %v", i, err)
			}
		case err != nil || len(paras) != 1 || paras[0].Text != fmt.Sprintf("text %d", i):
			t.Errorf("source %d: %v, %v", i, paras, err)
		}
		if sourceChunkLimit(src) != 7 {
			t.Errorf("source %d: chunk limit %d, want 7", i, sourceChunkLimit(src))
		}
	}
	stop()
	for i := range reads {
		if n := reads[i].Load(); n != 1 {
			t.Errorf("source %d read %d times", i, n)
		}
	}
	if _, err := srcs[1].Fetch(context.Background()); err != nil || reads[1].Load() != 2 {
		t.Errorf("second Fetch: %v, %d reads", err, reads[1].Load())
	}

	blocked := make([]IngestSource, 3)
	for i := range blocked {
		blocked[i] = &countingSource{i: i + 1, reads: &reads[i], block: true}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop = prefetchSources(ctx, blocked, 2)
	cancel()
	if _, err := blocked[0].Fetch(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	stop()
}
