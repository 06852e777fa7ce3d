package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// watchSync is one sync of a watched folder as `index --watch --json`
// prints it, one JSON object a line. Every key is always present.
type watchSync struct {
	Folder  string    `json:"folder"`
	Time    time.Time `json:"time"`
	Indexed int       `json:"indexed"`
	Chunks  int       `json:"chunks"`
	// Embedded is the chunks embedded (new or changed text): 0 when the
	// files read were unchanged.
	Embedded int64          `json:"embedded"`
	Empty    int            `json:"empty"`
	Removed  []string       `json:"removed"`
	Failed   []failedSource `json:"failed"`
	Skipped  map[string]int `json:"skipped"`
	Error    string         `json:"error"`
}

// watchFolders keeps the folders of jobs indexed until ctx ends (index
// --watch): askyourdocs.WatchFolder per folder, its first sync catching
// up with what changed since the last run, then one sync per batch of
// changes. Each sync that changed something prints a line (a JSON object
// with --json); the watch ends with Ctrl-C, which is not an error.
func (a *cliApp) watchFolders(ctx context.Context, ix *indexer, jobs []indexJob, asJSON bool) error {
	var mu sync.Mutex // one sync's lines at a time
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	n := 0
	for _, j := range jobs {
		if j.folder == "" {
			continue
		}
		n++
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The embeddings of a sync: the embedder's count from its
			// walk to its end (another folder's sync at the same time
			// may add to it).
			var before, last int64
			first := true
			var checks []sourceCheck
			var gone []string
			folder := ix.folderOptions()
			folder.OnWalk = func([]string) { before = ix.b.emb.docs.Load(); last = before }
			folder.OnFile = func(f askyourdocs.FolderFile) {
				now := ix.b.emb.docs.Load()
				switch {
				case f.Removed:
					gone = append(gone, f.Path)
				case f.Err == nil || errors.Is(f.Err, askyourdocs.ErrNoDocuments) || errors.Is(f.Err, askyourdocs.ErrNoText):
					checks = append(checks, sourceCheckAt(f.Path, time.Now(), now > last || f.Chunks == 0 && f.Deleted > 0))
				}
				last = now
			}
			opts := &askyourdocs.WatchOptions{Folder: folder, OnSync: func(res *askyourdocs.FolderResult, err error) {
				if serr := ix.b.store.saveChecks(context.WithoutCancel(ctx), checks, gone); serr != nil {
					slog.Warn("index --watch: the dates of the sources were not recorded", "err", serr)
				}
				checks, gone = checks[:0], gone[:0]
				mu.Lock()
				defer mu.Unlock()
				a.printWatchSync(j, res, err, ix.b.emb.docs.Load()-before, first, asJSON)
				first = false
			}}
			if err := askyourdocs.WatchFolder(ctx, ix.b.store, j.folder, opts); err != nil {
				errs <- err
			}
		}()
	}
	if n == 0 {
		return usageError("index", "--watch needs at least one folder")
	}
	if !asJSON && !a.quiet {
		fmt.Fprintf(a.stderr, "Watching %s for changes; Ctrl-C stops.\n", count(n, "folder", "folders"))
	}
	wg.Wait()
	close(errs)
	return <-errs // nil once every watch ended with ctx
}

// printWatchSync prints one sync of the watched folder j: a line naming
// what changed, failures below it. A later sync that changed nothing
// prints nothing (with --json every sync is a line).
func (a *cliApp) printWatchSync(j indexJob, res *askyourdocs.FolderResult, err error, embedded int64, first, asJSON bool) {
	ws := watchSync{Folder: j.folder, Time: time.Now().UTC(), Embedded: embedded, Removed: []string{}, Failed: []failedSource{},
		Skipped: map[string]int{}}
	if err != nil {
		ws.Error = err.Error()
	}
	if res != nil {
		ws.Indexed, ws.Chunks, ws.Empty, ws.Skipped = res.Indexed, res.Chunks, res.Empty, res.Skipped
		for _, f := range res.Files {
			switch {
			case f.Removed:
				ws.Removed = append(ws.Removed, f.Path)
			case errors.Is(f.Err, askyourdocs.ErrNoDocuments) || errors.Is(f.Err, askyourdocs.ErrNoText):
			case f.Err != nil:
				ws.Failed = append(ws.Failed, failedSource{Source: shortPath(f.Path, j.folder), URL: f.Path, Reason: explainIndexError(f.Err)})
			}
		}
	}
	if asJSON {
		line, _ := json.Marshal(ws) // plain fields: cannot fail
		fmt.Fprintf(a.stdout, "%s\n", line)
		return
	}
	if !first && ws.Embedded == 0 && ws.Empty == 0 && len(ws.Removed) == 0 && len(ws.Failed) == 0 && ws.Error == "" {
		return // files read again, nothing changed (a save without edits)
	}
	line := fmt.Sprintf("%s %s: %s read, %s, %d embedded", ws.Time.Local().Format("15:04:05"), printable(displayPath(j.folder)),
		count(ws.Indexed, "file", "files"), count(ws.Chunks, "chunk", "chunks"), ws.Embedded)
	if len(ws.Removed) > 0 {
		line += fmt.Sprintf(", %d removed", len(ws.Removed))
	}
	if ws.Empty > 0 {
		line += fmt.Sprintf(", %d without text", ws.Empty)
	}
	fmt.Fprintln(a.stdout, line)
	for _, f := range ws.Failed {
		fmt.Fprintf(a.stdout, "  failed %s: %s\n", printable(f.Source), printable(f.Reason))
	}
	if ws.Error != "" {
		fmt.Fprintf(a.stdout, "  sync failed (retried): %s\n", printable(ws.Error))
	}
}
