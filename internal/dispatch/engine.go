// Package dispatch hands admitted executions to the workers of a fleet
// through River, the durable job engine, on any database River has a
// driver for. A store driver makes the Engine on its database (New, with
// the database's River driver); the store's rules
// (store/internal/sqlstore) call Insert and Reserve inside the
// transactions that admit executions; the service drives the engine as a
// store.Dispatcher: Start with its run function, Refresh, Stop.
//
// Agents pinned to labelled workers are dispatched on a queue of their own
// label set (QueueFor); a worker works the default queue and the queues of
// every label set it serves, so a dispatch can only be fetched by a worker
// that may run it.
package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// Queue is the River queue of agents without labels.
const Queue = "corral"

// QueueFor returns the River queue of agents requiring labels (sorted, as
// corral.NormalizeLabels returns them): Queue for none, else a name made of
// a hash of the set, which fits River's limits whatever the labels.
func QueueFor(labels []string) string {
	if len(labels) == 0 {
		return Queue
	}
	h := sha256.Sum256([]byte(strings.Join(labels, "\x00")))
	return Queue + "_" + hex.EncodeToString(h[:10])
}

// RescueAfter is how long a dispatch may stay in River's running state
// before River's rescuer hands it out again. A run longer than this is
// not run twice: the re-delivered dispatch finds the execution claimed
// and ends at once (store.Claim lets one win). Runs of dead workers are
// recovered by the service's leases long before this.
const RescueAfter = time.Hour

// RunArgs is the job that runs one execution.
type RunArgs struct {
	ExecutionID string `json:"execution_id"`
}

// Kind names the job in River's tables.
func (RunArgs) Kind() string { return "corral_run" }

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	run func(ctx context.Context, id string) error
	sem chan struct{}
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	id := job.Args.ExecutionID
	// One worker bound over all the queues it works, and its local runs
	// (Reserve).
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.sem }()
	err := w.run(ctx, id)
	if errors.Is(err, store.ErrNotReady) {
		return river.JobSnooze(NotReadyDelay)
	}
	return err
}

// NotReadyDelay is how long a dispatch waits when the worker was not
// ready for it (store.ErrNotReady).
const NotReadyDelay = 5 * time.Second

// Runs are bounded by the service's own timeouts; River must not cut them.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

// Options configure an Engine.
type Options struct {
	// Logger receives River's own warnings; nil discards them.
	Logger *slog.Logger
	// PollInterval is how often an idle queue looks for dispatches when
	// the database cannot notify it; zero means 200 ms.
	PollInterval time.Duration
	// RescueAfter overrides the package's RescueAfter (tests).
	RescueAfter time.Duration
	// InsertStatement has Insert hand a job to River with its one-job
	// INSERT instead of its bulk path without results (COPY FROM on
	// PostgreSQL, a multi-row INSERT on SQLite). Measured in
	// docs/benchmarks.md: the INSERT is the cheaper admission on
	// PostgreSQL, the bulk path on SQLite.
	InsertStatement bool
}

// Config is the configuration of the working side of an Engine.
type Config = store.DispatchConfig

// Engine is a River client pair: one that only inserts (usable from Open
// on) and one that works jobs (from Start to Stop).
type Engine[TTx any] struct {
	driver   riverdriver.Driver[TTx]
	opts     Options
	logger   *slog.Logger
	inserter *river.Client[TTx]

	mu     sync.Mutex
	worker *river.Client[TTx]
	cfg    Config
	queues map[string]bool
	rw     *runWorker
	// Local runs (Reserve) live in lctx, ended by Stop, and are counted
	// in lwg from their reservation.
	lctx    context.Context
	lcancel context.CancelFunc
	lwg     sync.WaitGroup
}

// New returns an engine on driver.
func New[TTx any](driver riverdriver.Driver[TTx], opts Options) (*Engine[TTx], error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.RescueAfter <= 0 {
		opts.RescueAfter = RescueAfter
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	// Every insert notifies the workers (River debounces them per queue
	// by the inserter's FetchCooldown): a queued execution promoted into a
	// freed slot is fetched at once by whichever worker hears it first.
	c, err := river.NewClient(driver, &river.Config{Logger: logger, FetchCooldown: river.FetchCooldownMin})
	if err != nil {
		return nil, fmt.Errorf("river: %w", err)
	}
	return &Engine[TTx]{driver: driver, opts: opts, logger: logger, inserter: c}, nil
}

// Insert hands execution id of an agent requiring labels to the engine
// inside tx: the dispatch commits or rolls back with the admission.
func (e *Engine[TTx]) Insert(ctx context.Context, tx TTx, id string, labels []string) error {
	opts := &river.InsertOpts{Queue: QueueFor(labels), MaxAttempts: 25}
	var err error
	if e.opts.InsertStatement {
		_, err = e.inserter.InsertTx(ctx, tx, RunArgs{ExecutionID: id}, opts)
	} else {
		_, err = e.inserter.InsertManyFastTx(ctx, tx, []river.InsertManyParams{{Args: RunArgs{ExecutionID: id}, InsertOpts: opts}})
	}
	if err != nil {
		return fmt.Errorf("dispatch execution %s: %w", id, err)
	}
	return nil
}

// Start starts working jobs with cfg.Run, at most cfg.MaxRuns at once,
// on the queues this worker serves.
func (e *Engine[TTx]) Start(ctx context.Context, cfg Config) error {
	if cfg.Run == nil {
		return errors.New("engine: no run function")
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = 256
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.worker != nil {
		return errors.New("engine already started")
	}
	queues, err := e.served(ctx, cfg)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	rw := &runWorker{run: cfg.Run, sem: make(chan struct{}, cfg.MaxRuns)}
	if err := river.AddWorkerSafely(workers, rw); err != nil {
		return err
	}
	qc := map[string]river.QueueConfig{}
	for q := range queues {
		qc[q] = river.QueueConfig{MaxWorkers: cfg.MaxRuns}
	}
	c, err := river.NewClient(e.driver, &river.Config{
		ID:                          cfg.WorkerID,
		Logger:                      e.logger,
		Workers:                     workers,
		Queues:                      qc,
		FetchCooldown:               5 * time.Millisecond,
		FetchPollInterval:           e.opts.PollInterval,
		JobTimeout:                  -1,
		RescueStuckJobsAfter:        e.opts.RescueAfter,
		CompletedJobRetentionPeriod: time.Hour,
	})
	if err != nil {
		return fmt.Errorf("river: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("river start: %w", err)
	}
	e.worker, e.cfg, e.queues, e.rw = c, cfg, queues, rw
	e.lctx, e.lcancel = context.WithCancel(context.Background())
	return nil
}

// served returns the queues of the label sets cfg's worker serves.
func (e *Engine[TTx]) served(ctx context.Context, cfg Config) (map[string]bool, error) {
	queues := map[string]bool{Queue: true}
	if cfg.LabelSets == nil || len(cfg.Labels) == 0 {
		return queues, nil
	}
	sets, err := cfg.LabelSets(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: read the agents' labels: %w", err)
	}
	for _, set := range sets {
		if corral.Serves(cfg.Labels, set) {
			queues[QueueFor(set)] = true
		}
	}
	return queues, nil
}

// Refresh starts working the queues of label sets that appeared since
// Start and that this worker serves.
func (e *Engine[TTx]) Refresh(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.worker == nil {
		return nil
	}
	queues, err := e.served(ctx, e.cfg)
	if err != nil {
		return err
	}
	for q := range queues {
		if e.queues[q] {
			continue
		}
		if err := e.worker.Queues().Add(q, river.QueueConfig{MaxWorkers: e.cfg.MaxRuns}); err != nil {
			return fmt.Errorf("engine: work queue %s: %w", q, err)
		}
		e.queues[q] = true
	}
	return nil
}

// Stop stops fetching and waits for the jobs in flight until ctx is
// done; then it cancels them and waits for them to end.
func (e *Engine[TTx]) Stop(ctx context.Context) error {
	e.mu.Lock()
	c := e.worker
	e.worker = nil
	e.mu.Unlock()
	if c == nil {
		return nil
	}
	defer e.lwg.Wait()
	defer e.lcancel()
	if ctx.Err() == nil {
		if err := c.Stop(ctx); err == nil {
			if waitCtx(ctx, &e.lwg) {
				return nil
			}
		}
	}
	// The runs did not end in time: cancel them. Their teardown is
	// bounded by the supervision core's guarantees.
	e.lcancel()
	hctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return c.StopAndCancel(hctx)
}

// waitCtx waits for wg until ctx is done, and reports whether wg was done.
func waitCtx(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
