package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// FolderOptions configures IndexFolder. A nil *FolderOptions, and every
// zero field, means the default.
type FolderOptions struct {
	// Exclude leaves out the files and folders matching these gitignore
	// patterns, relative to the folder ("drafts/", "*.log"). A
	// .askyourdocsignore file in the folder or any folder below adds
	// patterns for its own subtree. Hidden folders (.git) are never
	// entered.
	Exclude []string
	// FollowSymlinksOutside also follows symlinks whose target lies
	// outside the folder. Off by default: whoever may write to the folder
	// could otherwise make everyone who may ask the index read any file
	// this process can read. Files on /proc, /sys and /dev are never read.
	FollowSymlinksOutside bool
	// KeepRemoved keeps the chunks of files that are gone from the folder
	// (deleted, moved away, or now excluded); by default they leave the
	// index. Nothing is removed when part of the folder could not be read.
	KeepRemoved bool
	// ChunkSize and ChunkOverlap are the chunking of IndexSource, in
	// characters; 0 means 1200 and 150.
	ChunkSize, ChunkOverlap int
	// MaxChunks is the most chunks one file may give (see ChunkLimiter):
	// 0 means 20,000, negative no limit. A Source of the app's own sets
	// its own limit.
	MaxChunks int
	// OCR, when set, reads image files and scanned PDF pages; without it
	// images are skipped as unsupported.
	OCR *OCR
	// Readers is how many files are read and parsed at once, ahead of
	// the one writer that embeds and stores them in walk order; 0 means
	// GOMAXPROCS, 1 reads each file when its turn comes.
	Readers int
	// Source, when set, returns the IngestSource of each file found (its
	// absolute path, and the folder's), for an app that adds its own
	// metadata; nil means a FileSource whose Source is the folder.
	Source func(path, folder string) IngestSource
	// Changed, when set, limits the files indexed to these paths and
	// the files below them (absolute; WatchFolder's batches pass what
	// changed): the other files are known to be unchanged. The walk and
	// the removal of files gone from the folder still cover all of it.
	Changed []string
	// OnWalk, when set, is called once the walk is done with the files
	// about to be indexed, in order (before the first is read), e.g. to
	// size a progress bar.
	OnWalk func(paths []string)
	// OnFile, when set, is called with the outcome of each file once it
	// is indexed, found empty, failed, interrupted or removed, in order,
	// on IndexFolder's goroutine (between two files: a long-running
	// app may persist or report there).
	OnFile func(FolderFile)
}

// FolderFile is the outcome of one file of a folder, or a symlink that
// IndexFolder did not follow.
type FolderFile struct {
	// Path is the file's absolute path as found in the folder (below a
	// symlinked folder, through the link).
	Path string
	// Target is where a symlink not followed points, "" otherwise.
	Target string
	// Chunks is the number of chunks the file has in the index now.
	Chunks int
	// Deleted is the number of chunks of its previous version that were
	// replaced or removed (the store's count; see IndexSource).
	Deleted int
	// Removed is true for a file that is gone from the folder (or now
	// excluded) and whose chunks left the index.
	Removed bool
	// Err is nil for a file indexed or removed. A file without text
	// wraps ErrNoText or ErrNoDocuments (its old chunks are removed); an
	// interrupted file wraps the context's error; any other error is why
	// the file failed, and the index keeps its previous version.
	Err error
}

// noTextError reports whether err says that a source holds no text to
// index (IndexSource's ErrNoText or ErrNoDocuments).
func noTextError(err error) bool {
	return errors.Is(err, ErrNoText) || errors.Is(err, ErrNoDocuments)
}

// FolderResult is what IndexFolder did to one folder.
type FolderResult struct {
	// Folder is the absolute path of the folder.
	Folder string
	// Files holds every file indexed, empty, failed or removed, in walk
	// order (sorted by name per folder), the removed ones last.
	Files []FolderFile
	// Indexed and Chunks count the files indexed and their chunks;
	// Empty, Failed and Removed the files of those outcomes.
	Indexed, Chunks, Empty, Failed, Removed int
	// Skipped counts the files not indexed, by lower-case extension
	// (".png", "(no extension)") or reason ("excluded", "symlink out of
	// folder", "special filesystem", "broken symlink", "symlink loop",
	// "duplicate via symlink", "unreadable", "named pipe", ...).
	Skipped map[string]int
	// NotFollowed are the symlinks the walk did not follow, with their
	// Target and why (Err; ErrSymlinkOutside for a target outside the
	// folder).
	NotFollowed []FolderFile
	// Complete is false when part of the folder could not be read; then
	// no file was removed.
	Complete bool
}

// IndexFolder brings the index up to date with the folder dir and every
// folder below it: each file of a type the engine reads is indexed with
// IndexSource (the stores keep the embeddings of chunks whose text is
// unchanged), and the files indexed from the folder before that are gone
// from it (deleted, moved away, or now excluded) leave the index, unless
// opts.KeepRemoved. A file that fails is reported in the result, not as an
// error, and keeps its previous version in the index; the others go on.
// A symlink inside the folder is followed when its target lies inside the
// folder too (see FolderOptions.FollowSymlinksOutside); dir itself may be
// a symlink. Chunks carry MetaURL = the file's absolute path and
// MetaSource = the folder's.
//
// Files are read and parsed in parallel (opts.Readers) and written one at
// a time, in walk order. On a LocalvecStore or PgvecStore the run is one
// Bulk run; on an SQLiteStore each file is its own transaction, so a
// write the database refuses is reported for that file.
//
// The error is non-nil when the folder cannot be walked, the store cannot
// list or remove sources, or ctx ends: then the result holds what was
// done (finished files are kept; the interrupted one is rolled back and
// listed with the context's error) and nothing was removed.
func IndexFolder(ctx context.Context, store Searcher, dir string, opts *FolderOptions) (*FolderResult, error) {
	var o FolderOptions
	if opts != nil {
		o = *opts
	}
	if store == nil {
		return nil, errors.New("index folder: store must not be nil")
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("index folder %q: %w", dir, err)
	}
	scan, err := scanFolder(root, o.Exclude, o.FollowSymlinksOutside, o.OCR != nil)
	if err != nil {
		return nil, fmt.Errorf("index folder %q: %w", dir, err)
	}
	files := scan.files
	if o.Changed != nil {
		changed := make(map[string]bool, len(o.Changed))
		for _, p := range o.Changed {
			changed[filepath.Clean(p)] = true
		}
		files = slices.DeleteFunc(files, func(p string) bool { return !underAny(p, changed) })
	}
	res := &FolderResult{Folder: root, Skipped: scan.skipped, NotFollowed: scan.notFollowed, Complete: scan.complete}
	before, err := store.Sources(ctx)
	if err != nil {
		return res, fmt.Errorf("index folder %s: listing the indexed sources: %w", root, err)
	}
	err = folderBulk(ctx, store, func(w VectorStore) error {
		if err := indexFolderFiles(ctx, w, root, files, &o, res); err != nil {
			return err
		}
		if o.KeepRemoved || !scan.complete {
			return nil
		}
		return removeGoneFiles(ctx, w, root, before, scan.found, &o, res)
	})
	if err != nil {
		return res, fmt.Errorf("index folder %s: %w", root, err)
	}
	return res, nil
}

// folderBulk runs fn with what the folder's writes go through: the writer
// of a Bulk run for the stores whose Bulk a folder needs (a LocalvecStore
// rewrites its file per source otherwise, and a PgvecStore commits in
// batches), else the store itself (an SQLiteStore commits per source, so
// that a refused write is reported for its own file).
func folderBulk(ctx context.Context, store VectorStore, fn func(w VectorStore) error) error {
	switch s := store.(type) {
	case *LocalvecStore:
		return s.Bulk(ctx, fn)
	case *PgvecStore:
		return s.Bulk(ctx, fn)
	}
	return fn(store)
}

// indexFolderFiles indexes files (absolute paths in root) in order,
// adding each outcome to res; it returns the context's error when ctx
// ends.
func indexFolderFiles(ctx context.Context, store VectorStore, root string, files []string, o *FolderOptions, res *FolderResult) error {
	size, overlap := o.ChunkSize, o.ChunkOverlap
	if size <= 0 {
		size, overlap = 1200, 150
	}
	srcs := make([]IngestSource, len(files))
	for i, p := range files {
		if o.Source != nil {
			srcs[i] = o.Source(p, root)
		}
		if srcs[i] == nil {
			srcs[i] = &FileSource{Path: p, Source: root, OCR: o.OCR, ChunkLimit: o.MaxChunks}
		}
	}
	if o.OnWalk != nil {
		o.OnWalk(slices.Clone(files))
	}
	stop := prefetchSources(ctx, srcs, o.Readers)
	defer stop()
	for i, src := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := FolderFile{Path: files[i]}
		f.Chunks, f.Deleted, f.Err = IndexSource(ctx, store, src, size, overlap, nil)
		switch {
		case f.Err == nil:
			res.Indexed++
			res.Chunks += f.Chunks
		case ctx.Err() != nil:
			// IndexSource rolled the file back.
			f.Err = fmt.Errorf("%w (the file keeps its previous version)", ctx.Err())
		case noTextError(f.Err):
			// Nothing to index, which stays so on every run: the old
			// chunks of the file go.
			n, err := store.DeleteByURL(ctx, files[i])
			if err != nil {
				f.Err = errors.Join(f.Err, fmt.Errorf("removing its old chunks: %w", err))
				res.Failed++
				break
			}
			f.Deleted = n
			res.Empty++
		default:
			res.Failed++
		}
		slog.DebugContext(ctx, "index folder: file", "path", f.Path, "chunks", f.Chunks, "err", f.Err)
		res.Files = append(res.Files, f)
		if o.OnFile != nil {
			o.OnFile(f)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// removeGoneFiles removes the chunks of every file source below root that
// the walk did not find (found), adding each to res.
func removeGoneFiles(ctx context.Context, store VectorStore, root string, before []Source, found map[string]bool, o *FolderOptions, res *FolderResult) error {
	prefix := strings.TrimSuffix(root, string(filepath.Separator)) + string(filepath.Separator)
	seen := map[string]bool{}
	for _, s := range before {
		if !strings.HasPrefix(s.URL, prefix) || found[s.URL] || seen[s.URL] {
			continue
		}
		seen[s.URL] = true
		n, err := store.DeleteByURL(ctx, s.URL)
		if err != nil {
			return fmt.Errorf("removing %s, which is gone from the folder: %w", s.URL, err)
		}
		f := FolderFile{Path: s.URL, Deleted: n, Removed: true}
		slog.DebugContext(ctx, "index folder: removed", "path", f.Path, "chunks", n)
		res.Removed++
		res.Files = append(res.Files, f)
		if o.OnFile != nil {
			o.OnFile(f)
		}
	}
	return nil
}

// prefetchedSource is a source whose paragraphs a reader goroutine
// fetches ahead of the writer.
type prefetchedSource struct {
	IngestSource
	done  chan struct{} // closed when paras and err are set
	taken bool
	paras []Paragraph
	err   error
	// window gets one value back when the writer takes the paragraphs.
	window chan struct{}
}

// Fetch returns what the reader fetched (once; a second call reads
// again).
func (s *prefetchedSource) Fetch(ctx context.Context) ([]Paragraph, error) {
	if s.taken {
		return s.IngestSource.Fetch(ctx)
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.taken = true
	<-s.window
	paras, err := s.paras, s.err
	s.paras = nil
	return paras, err
}

// MaxChunks passes the wrapped source's chunk limit on.
func (s *prefetchedSource) MaxChunks() int { return sourceChunkLimit(s.IngestSource) }

// prefetchSources replaces each of srcs by a prefetchedSource and starts
// readers goroutines (0: GOMAXPROCS) that fetch them in order, at most
// 2 x readers ahead of the writer; stop ends them (call it when no Fetch
// of these sources follows). With one reader, or one CPU, nothing is
// fetched ahead.
func prefetchSources(ctx context.Context, srcs []IngestSource, readers int) (stop func()) {
	if readers <= 0 {
		readers = runtime.GOMAXPROCS(0)
	}
	if readers < 2 || len(srcs) < 2 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	window := make(chan struct{}, 2*readers) // fetched, not yet taken
	slots := make([]*prefetchedSource, len(srcs))
	for i, src := range srcs {
		slots[i] = &prefetchedSource{IngestSource: src, done: make(chan struct{}), window: window}
		srcs[i] = slots[i]
	}
	todo := make(chan *prefetchedSource)
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range todo {
				s.paras, s.err = s.IngestSource.Fetch(ctx)
				close(s.done)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(todo)
		for _, s := range slots {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case todo <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
