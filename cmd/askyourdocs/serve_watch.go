package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// watchLeaseTable holds, per job namespace and folder, which serve process
// watches it (serve --watch on a shared PostgreSQL database).
const watchLeaseTable = "askyourdocs_watch_lease"

// watchState is what serve knows about one watched folder, for /readyz,
// doctor and the sources listing.
type watchState struct {
	Folder   string    `json:"folder"`
	Watching bool      `json:"watching"` // this process holds the folder's lease (always, without PostgreSQL)
	Holder   string    `json:"holder"`   // the process that watches it, when known
	LastSync time.Time `json:"lastSync"` // when this process's last batch ended (zero: none yet)
	LastErr  string    `json:"lastError"`
}

// serveWatch keeps serve's --watch folders indexed: each batch of changes
// is an "index" job in the durable queue (visible in /api/jobs, run again
// by another process when this one dies); with PostgreSQL, one process per
// folder watches, holding a lease in the database that another takes over
// once it expires.
type serveWatch struct {
	s      *server
	holder string
	ttl    time.Duration
	pool   *pgxpool.Pool // nil without PostgreSQL: this process watches
	mu     sync.Mutex
	state  map[string]*watchState
	// synced, when set (tests), gets the folder after each batch ends.
	synced chan string
	// recrawl is serve --recrawl's period (0: off).
	recrawl time.Duration
}

// newServeWatch prepares the watch of folders (absolute) for s; with a
// PostgreSQL DSN it opens a small pool for the leases and creates their
// table.
func newServeWatch(ctx context.Context, s *server, folders []string, dsn string, ttl, recrawl time.Duration) (*serveWatch, error) {
	if ttl <= 0 {
		ttl = 15 * time.Second // --job-dead-after's default
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	w := &serveWatch{s: s, ttl: ttl, state: map[string]*watchState{},
		holder: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))}
	for _, f := range folders {
		w.state[f] = &watchState{Folder: f}
	}
	if recrawl > 0 {
		w.recrawl = recrawl
		w.state[recrawlKey] = &watchState{Folder: recrawlKey}
	}
	if dsn == "" {
		return w, nil
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("serve --watch: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("serve --watch: %w", err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+watchLeaseTable+` (
		namespace text NOT NULL, folder text NOT NULL, holder text NOT NULL, expires_at timestamptz NOT NULL,
		PRIMARY KEY (namespace, folder))`); err != nil {
		pool.Close()
		return nil, fmt.Errorf("serve --watch: creating %s: %w", watchLeaseTable, err)
	}
	w.pool = pool
	return w, nil
}

// run watches every folder until ctx ends.
func (w *serveWatch) run(ctx context.Context) {
	var wg sync.WaitGroup
	for key := range w.state {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if key == recrawlKey {
				w.runLeased(ctx, key, w.recrawlLoop)
				return
			}
			w.runFolder(ctx, key)
		}()
	}
	wg.Wait()
	if w.pool != nil {
		w.pool.Close()
	}
}

// runFolder watches folder while this process holds its lease (always
// without PostgreSQL).
func (w *serveWatch) runFolder(ctx context.Context, folder string) {
	w.runLeased(ctx, folder, func(ctx context.Context) { w.watch(ctx, folder) })
}

// runLeased runs work while this process holds the lease of key (always
// without PostgreSQL), trying to take it every ttl/3 otherwise; work runs
// until its context ends, which happens when the lease is lost.
func (w *serveWatch) runLeased(ctx context.Context, key string, work func(context.Context)) {
	if w.pool == nil {
		w.setWatching(key, true, w.holder)
		work(ctx)
		return
	}
	tick := time.NewTicker(w.ttl / 3)
	defer tick.Stop()
	for {
		holder, ok, err := w.takeLease(ctx, key)
		switch {
		case err != nil && ctx.Err() == nil:
			slog.Warn("serve --watch: the lease could not be read", "key", key, "err", err)
		case ok:
			w.setWatching(key, true, w.holder)
			slog.Info("serve: holding the lease", "key", key, "holder", w.holder)
			w.workWhileLeased(ctx, key, work)
			w.setWatching(key, false, "")
		default:
			w.setWatching(key, false, holder)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// workWhileLeased runs work until ctx ends or the lease of key is lost
// (renewed every ttl/3), then gives the lease up.
func (w *serveWatch) workWhileLeased(ctx context.Context, key string, work func(context.Context)) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(wctx)
	}()
	tick := time.NewTicker(w.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-done:
			w.releaseLease(key)
			return
		case <-tick.C:
			if _, ok, err := w.takeLease(wctx, key); !ok || err != nil {
				slog.Warn("serve: lease lost; another process may take the work over", "key", key, "err", err)
				cancel()
				<-done
				return
			}
		}
	}
}

// takeLease takes or renews the lease of folder for this process and
// reports whether it holds it, and who does.
func (w *serveWatch) takeLease(ctx context.Context, folder string) (holder string, ok bool, err error) {
	err = w.pool.QueryRow(ctx, `INSERT INTO `+watchLeaseTable+` AS l (namespace, folder, holder, expires_at)
		VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
		ON CONFLICT (namespace, folder) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
		WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder
		RETURNING holder`, w.s.opts.jobNamespace, folder, w.holder, w.ttl.Milliseconds()).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		err = w.pool.QueryRow(ctx, `SELECT holder FROM `+watchLeaseTable+` WHERE namespace = $1 AND folder = $2`,
			w.s.opts.jobNamespace, folder).Scan(&holder)
		return holder, false, err
	}
	return holder, err == nil && holder == w.holder, err
}

// releaseLease gives up folder's lease (at shutdown), so that another
// process need not wait for it to expire.
func (w *serveWatch) releaseLease(folder string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := w.pool.Exec(ctx, `DELETE FROM `+watchLeaseTable+` WHERE namespace = $1 AND folder = $2 AND holder = $3`,
		w.s.opts.jobNamespace, folder, w.holder); err != nil {
		slog.Debug("serve --watch: releasing the lease", "folder", folder, "err", err)
	}
}

// watch runs askyourdocs.WatchFolder on folder with each batch an index
// job, waited for, so that batches never overlap.
func (w *serveWatch) watch(ctx context.Context, folder string) {
	err := askyourdocs.WatchFolder(ctx, nil, folder, &askyourdocs.WatchOptions{
		Sync: func(ctx context.Context, changed []string) error {
			err := w.runBatch(ctx, folder, changed)
			w.mu.Lock()
			st := w.state[folder]
			st.LastSync, st.LastErr = time.Now().UTC(), ""
			if err != nil {
				st.LastErr = err.Error()
			}
			w.mu.Unlock()
			if w.synced != nil {
				w.synced <- folder
			}
			return err
		},
	})
	if err != nil {
		slog.Error("serve --watch: the folder cannot be watched", "folder", folder, "err", err)
		w.mu.Lock()
		w.state[folder].LastErr = err.Error()
		w.mu.Unlock()
	}
}

// runBatch enqueues one batch as an index job and waits for it.
func (w *serveWatch) runBatch(ctx context.Context, folder string, changed []string) error {
	job, err := w.s.jobs.EnqueueInput(ctx, "index", indexInput{Paths: []string{folder}, Changed: changed})
	if err != nil {
		return fmt.Errorf("enqueueing the sync of %s: %w", folder, err)
	}
	done, err := w.s.jobs.Wait(ctx, job.ID)
	if err != nil {
		return err
	}
	if done.Error != "" {
		return fmt.Errorf("job %s: %s", job.ID, done.Error)
	}
	return nil
}

// setWatching records whether this process watches folder, and who does.
func (w *serveWatch) setWatching(folder string, watching bool, holder string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.state[folder]
	st.Watching, st.Holder = watching, holder
}

// states returns the watched folders' states, sorted by folder.
func (w *serveWatch) states() []watchState {
	if w == nil {
		return []watchState{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]watchState, 0, len(w.state))
	for _, st := range w.state {
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b watchState) int { return strings.Compare(a.Folder, b.Folder) })
	return out
}

// watchFolderArgs returns the absolute folders of serve's --watch flags,
// failing for one that is not a folder.
func watchFolderArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		abs, err := filepath.Abs(a)
		if err != nil {
			return nil, err
		}
		if info, err := os.Stat(abs); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("%w: --watch %s: not a folder", errUsage, a)
		}
		out = append(out, abs)
	}
	return out, nil
}
