package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// DurableJobStoreOptions configures a DurableJobStore. The zero value (or
// nil) means the defaults.
type DurableJobStoreOptions struct {
	// KindQueues maps a job kind to the River queue its jobs go to (names
	// of lower-case letters, digits, '_' and '-'); kinds not listed go to
	// the queue "default". Jobs in one queue share its workers.
	KindQueues map[string]string
	// QueueWorkers is the number of jobs of a queue this process runs at
	// once (default 1 for every queue: one job at a time per process and
	// queue, the spec's single-worker rule). N processes run up to N.
	QueueWorkers map[string]int
	// MaxAttempts caps the runs of one job (default 3): a job whose
	// process died while running it is run again until then, and marked
	// failed with the reason after the last.
	MaxAttempts int
	// MaxHistory caps the jobs List returns for limit <= 0 (default 100).
	// Finished jobs are deleted by River after its retention periods
	// (completed and cancelled 24 h, failed 7 days).
	MaxHistory int
	// MaxProgress caps the progress messages kept per job (default 1000).
	MaxProgress int
	// MaxQueue caps the pending jobs of all processes (default 64):
	// EnqueueInput returns ErrJobQueueFull while that many wait.
	MaxQueue int
	// Heartbeat is how often this process records that it is alive
	// (default 2 s), and DeadAfter how long another process's silence
	// makes its running jobs count as abandoned (default 15 s).
	Heartbeat, DeadAfter time.Duration
	// Namespace separates the jobs of several apps (or indexes) on one
	// database: a store sees and runs only the jobs of its namespace (its
	// River queues are named namespace_queue). Lower-case letters, digits
	// and inner '-' only; "" is the unprefixed queues.
	Namespace string
	// ID names this process in River's attempted_by and the heartbeat
	// table (default a random ID).
	ID string
	// Logger receives the store's log and River's warnings and errors
	// (default slog.Default).
	Logger *slog.Logger
}

const (
	durableRiverKind       = "askyourdocs_job"
	defaultDurableAttempts = 3
	defaultDurableBeat     = 2 * time.Second
	defaultDurableDead     = 15 * time.Second
	durableOpTimeout       = 30 * time.Second
)

// DurableJobStore is a JobQueue whose jobs live in a database through
// River (github.com/riverqueue/river): on PostgreSQL (NewDurableJobStorePg)
// or an SQLite file (NewDurableJobStoreSQLite). Any number of processes
// may share one database: a job enqueued by one runs on whichever has a
// free worker for its queue, and its status, progress and result (Get,
// List, Wait, read from the database) are visible from all. Jobs survive
// restarts; a job whose process died is run again or, after MaxAttempts
// runs, marked failed with the reason. Jobs are registered kinds with JSON
// inputs: a closure cannot outlive its process. Job IDs are River's, in
// decimal. All methods are safe for concurrent use; docs/app-blocks.md
// has the details.
//
// Register every kind with HandleKind, then call Start, which starts this
// process's workers, heartbeat and reaper: jobs can be enqueued and read
// before Start (and without it, in a process that only enqueues), but
// this process runs none until then. Close stops them: a running job's
// context is cancelled and the job goes back to the queue, without
// counting as a failed attempt; pending jobs stay in the database. Close
// blocks until the running jobs returned, releases what the Open function
// opened, is idempotent and returns nil.
type DurableJobStore interface {
	JobQueue
	Start() error
	Close() error
}

// durableJobStore is the DurableJobStore the Open functions return.
type durableJobStore struct {
	opts   DurableJobStoreOptions
	db     *jobDB
	client riverClient
	exec   riverdriver.Executor
	// closeDB releases what the Open function opened.
	closeDB func()
	// queueList are the River queues of the store's namespace.
	queueList []string

	mu       sync.Mutex
	kinds    map[string]jobInputFunc
	started  bool
	stopping bool
	// local cancels the jobs running in this process, by ID.
	local map[int64]context.CancelCauseFunc

	base      context.Context
	stopBase  context.CancelFunc
	beatDone  chan struct{}
	closeOnce sync.Once
}

// riverClient is what the store uses of a *river.Client, whatever its
// transaction type.
type riverClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
}

// durableArgs are the River arguments of every job: the app's kind and
// its input.
type durableArgs struct {
	JobKind string          `json:"kind"`
	Input   json.RawMessage `json:"input"`
}

// Kind is River's kind of all the store's jobs.
func (durableArgs) Kind() string { return durableRiverKind }

// durableWorker runs the store's jobs.
type durableWorker struct {
	river.WorkerDefaults[durableArgs]
	s *durableJobStore
}

func (w *durableWorker) Work(ctx context.Context, job *river.Job[durableArgs]) error {
	return w.s.work(ctx, job)
}

// Timeout is no timeout: an index run takes as long as it takes.
func (w *durableWorker) Timeout(*river.Job[durableArgs]) time.Duration { return -1 }

// NextRetry retries a job River saw fail (only shutdowns and database
// errors reach River) after a second.
func (w *durableWorker) NextRetry(*river.Job[durableArgs]) time.Time {
	return time.Now().Add(time.Second)
}

// withDefaults fills in the zero options.
func (o DurableJobStoreOptions) withDefaults() DurableJobStoreOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = defaultDurableAttempts
	}
	if o.MaxHistory <= 0 {
		o.MaxHistory = defaultJobMaxHistory
	}
	if o.MaxProgress <= 0 {
		o.MaxProgress = defaultJobMaxProgress
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = defaultJobMaxQueue
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = defaultDurableBeat
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = defaultDurableDead
	}
	if o.DeadAfter < 3*o.Heartbeat {
		o.DeadAfter = 3 * o.Heartbeat
	}
	if o.ID == "" {
		o.ID = "ayd-" + NewRandomHexID(8)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// queueName is River's name of the options' queue q.
func (o DurableJobStoreOptions) queueName(q string) string {
	if q == "" {
		q = river.QueueDefault
	}
	if o.Namespace == "" {
		return q
	}
	return o.Namespace + "_" + q
}

// queues returns River's queue names of the options and their workers.
func (o DurableJobStoreOptions) queues() (map[string]river.QueueConfig, error) {
	if o.Namespace != "" && !durableNameRE().MatchString(o.Namespace) {
		return nil, fmt.Errorf("namespace %q: use lower-case letters, digits and inner '-'", o.Namespace)
	}
	queues := map[string]river.QueueConfig{o.queueName(""): {MaxWorkers: 1}}
	for _, q := range o.KindQueues {
		queues[o.queueName(q)] = river.QueueConfig{MaxWorkers: 1}
	}
	for q, n := range o.QueueWorkers {
		if _, ok := queues[o.queueName(q)]; !ok {
			return nil, fmt.Errorf("QueueWorkers names queue %q, which no kind uses", q)
		}
		if n < 1 {
			return nil, fmt.Errorf("QueueWorkers[%q] = %d: need at least 1", q, n)
		}
		queues[o.queueName(q)] = river.QueueConfig{MaxWorkers: n}
	}
	return queues, nil
}

// durableNameRE is what a Namespace may be.
var durableNameRE = lazyRegexp(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// riverConfig returns the River client configuration of the options.
func (o DurableJobStoreOptions) riverConfig(w *durableWorker) (*river.Config, error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely[durableArgs](workers, w); err != nil {
		return nil, err
	}
	queues, err := o.queues()
	if err != nil {
		return nil, err
	}
	return &river.Config{
		ID:                o.ID,
		Logger:            slog.New(warnHandler{o.Logger.Handler()}),
		Queues:            queues,
		Workers:           workers,
		MaxAttempts:       o.MaxAttempts,
		JobTimeout:        -1,
		FetchPollInterval: 200 * time.Millisecond,
		// The heartbeat reaper finds abandoned jobs; River's own rescuer
		// only catches what is left after a week.
		RescueStuckJobsAfter: 7 * 24 * time.Hour,
	}, nil
}

// HandleKind registers fn as the work of jobs of kind, replacing an
// earlier registration. Register every kind before Start: a job this
// process picks up whose kind it does not know fails with that reason.
func (s *durableJobStore) HandleKind(kind string, fn jobInputFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kinds[kind] = fn
}

// Start starts this process's workers, heartbeat and reaper. Jobs can be
// enqueued and read before Start (and without it: a process that only
// enqueues), but this process runs none until then.
func (s *durableJobStore) Start() error {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return ErrJobStoreClosed
	}
	if s.started {
		s.mu.Unlock()
		return nil
	}
	s.started = true
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.base, durableOpTimeout)
	defer cancel()
	if err := s.db.beat(ctx, s.opts.ID); err != nil {
		return fmt.Errorf("start job store: heartbeat: %w", err)
	}
	go s.beatLoop()
	if err := s.client.Start(s.base); err != nil {
		return fmt.Errorf("start job store: %w", err)
	}
	return nil
}

// Close stops this process's workers: a running job's context is
// cancelled and the job goes back to the queue for another run (here
// after a restart, or on another process), without counting as a failed
// attempt. Pending jobs stay in the database. Close blocks until the
// running jobs returned; it is idempotent and returns nil.
func (s *durableJobStore) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.stopping = true
		started := s.started
		s.mu.Unlock()
		if started {
			ctx, cancel := context.WithTimeout(context.Background(), durableOpTimeout)
			if err := s.client.StopAndCancel(ctx); err != nil {
				s.opts.Logger.Warn("job store: stop", "err", err)
			}
			cancel()
		}
		s.stopBase()
		if started {
			<-s.beatDone
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := s.db.forget(ctx, s.opts.ID); err != nil {
				s.opts.Logger.Warn("job store: remove heartbeat", "err", err)
			}
			cancel()
		}
		s.closeDB()
	})
	return nil
}

// EnqueueInput records a pending job of kind with input, encoded as JSON,
// and returns its snapshot; the ID is River's job ID in decimal. ctx
// bounds the insert only: the job runs with the store's context. See
// JobQueue for the errors.
func (s *durableJobStore) EnqueueInput(ctx context.Context, kind string, input any) (*Job, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("enqueue %s job: encode input: %w", kind, err)
	}
	s.mu.Lock()
	fn, stopping := s.kinds[kind], s.stopping
	s.mu.Unlock()
	if stopping {
		return nil, fmt.Errorf("enqueue %s job: %w", kind, ErrJobStoreClosed)
	}
	if fn == nil {
		return nil, fmt.Errorf("enqueue %s job: %w", kind, ErrJobKindUnknown)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	n, err := s.db.pending(ctx, s.queueList)
	if err != nil {
		return nil, fmt.Errorf("enqueue %s job: count pending: %w", kind, err)
	}
	if n >= s.opts.MaxQueue {
		return nil, fmt.Errorf("enqueue %s job: %w (%d pending)", kind, ErrJobQueueFull, n)
	}
	queue := s.opts.queueName(s.opts.KindQueues[kind])
	res, err := s.client.Insert(ctx, durableArgs{JobKind: kind, Input: raw}, &river.InsertOpts{Queue: queue})
	if err != nil {
		return nil, fmt.Errorf("enqueue %s job: %w", kind, err)
	}
	j := s.snapshot(res.Job, jobState{})
	return &j, nil
}

// Get returns a snapshot of the job with the given ID, read from the
// database, and false if it does not know it (or cannot be read: the
// error is logged).
func (s *durableJobStore) Get(id string) (Job, bool) {
	ctx, cancel := context.WithTimeout(s.base, durableOpTimeout)
	defer cancel()
	j, err := s.lookup(ctx, id)
	if err != nil {
		if !errors.Is(err, ErrJobNotFound) {
			s.opts.Logger.Warn("job store: get", "id", id, "err", err)
		}
		return Job{}, false
	}
	return j, true
}

// lookup reads one job; the error wraps ErrJobNotFound for an unknown ID.
func (s *durableJobStore) lookup(ctx context.Context, id string) (Job, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return Job{}, fmt.Errorf("job %q: %w", id, ErrJobNotFound)
	}
	row, err := s.client.JobGet(ctx, n)
	if errors.Is(err, river.ErrNotFound) {
		return Job{}, fmt.Errorf("job %s: %w", id, ErrJobNotFound)
	}
	if err != nil {
		return Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	if row.Kind != durableRiverKind || !slices.Contains(s.queueList, row.Queue) {
		return Job{}, fmt.Errorf("job %s (River kind %s, queue %s): %w", id, row.Kind, row.Queue, ErrJobNotFound)
	}
	st, err := s.db.state(ctx, n, s.opts.MaxProgress)
	if err != nil {
		return Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	return s.snapshot(row, st), nil
}

// List returns snapshots of the limit most recent jobs of all processes,
// newest first; limit <= 0 means MaxHistory. A database error is logged
// and gives the jobs read so far.
func (s *durableJobStore) List(limit int) []Job {
	if limit <= 0 || limit > s.opts.MaxHistory {
		limit = s.opts.MaxHistory
	}
	ctx, cancel := context.WithTimeout(s.base, durableOpTimeout)
	defer cancel()
	res, err := s.client.JobList(ctx, river.NewJobListParams().Kinds(durableRiverKind).Queues(s.queueList...).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(limit))
	if err != nil {
		s.opts.Logger.Warn("job store: list", "err", err)
		return nil
	}
	out := make([]Job, 0, len(res.Jobs))
	for _, row := range res.Jobs {
		st, err := s.db.state(ctx, row.ID, s.opts.MaxProgress)
		if err != nil {
			s.opts.Logger.Warn("job store: list", "id", row.ID, "err", err)
			return out
		}
		out = append(out, s.snapshot(row, st))
	}
	return out
}

// durableWaitPoll is how often Wait reads a job's state.
const durableWaitPoll = 100 * time.Millisecond

// Wait blocks until the job with the given ID has finished (in any
// process) or ctx is done, reading its state every 100 ms, and returns the
// final snapshot. The error wraps ErrJobNotFound for an unknown ID, or is
// ctx's.
func (s *durableJobStore) Wait(ctx context.Context, id string) (Job, error) {
	t := time.NewTicker(durableWaitPoll)
	defer t.Stop()
	for {
		j, err := s.lookup(ctx, id)
		if err != nil && (errors.Is(err, ErrJobNotFound) || ctx.Err() != nil) {
			return Job{}, fmt.Errorf("wait for job %s: %w", id, err)
		}
		if err == nil && j.Status.final() {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return Job{}, fmt.Errorf("wait for job %s: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}

// Cancel cancels the job with the given ID: a pending job at once, a
// running one (in any process) by cancelling its context, as River's
// JobCancel does; it is marked cancelled when its function returns an
// error, or done if it completes anyway. The error wraps ErrJobNotFound
// for an unknown ID and ErrJobFinished for a finished job.
func (s *durableJobStore) Cancel(id string) error {
	ctx, cancel := context.WithTimeout(s.base, durableOpTimeout)
	defer cancel()
	j, err := s.lookup(ctx, id)
	if err != nil {
		return fmt.Errorf("cancel job %s: %w", id, err)
	}
	if j.Status.final() {
		return fmt.Errorf("cancel job %s (%s): %w", id, j.Status, ErrJobFinished)
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	s.mu.Lock()
	if c := s.local[n]; c != nil {
		c(ErrJobCancelled)
	}
	s.mu.Unlock()
	if _, err := s.client.JobCancel(ctx, n); err != nil {
		return fmt.Errorf("cancel job %s: %w", id, err)
	}
	return nil
}

// warnHandler passes on River's records from warnings up: its info
// records (client started, migrations) are noise in an app's log.
type warnHandler struct{ slog.Handler }

func (h warnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return warnHandler{h.Handler.WithAttrs(a)}
}

func (h warnHandler) WithGroup(n string) slog.Handler { return warnHandler{h.Handler.WithGroup(n)} }
