// Package riverengine dispatches admitted executions through River, the
// durable job engine, for any database River has a driver for. A store
// driver hands its River driver to New, calls Insert inside the
// transaction that admits an execution, and Start/Stop with the
// service's run function.
package riverengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
)

// Queue is the River queue executions are dispatched on.
const Queue = "corral"

// RunArgs is the job that runs one execution.
type RunArgs struct {
	ExecutionID string `json:"execution_id"`
}

// Kind names the job in River's tables.
func (RunArgs) Kind() string { return "corral_run" }

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	run func(ctx context.Context, id string) error
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	return w.run(ctx, job.Args.ExecutionID)
}

// Runs are bounded by the service's own timeouts; River must not cut them.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

// Engine is a River client pair: one that only inserts (usable from Open
// on) and one that works jobs (from Start to Stop).
type Engine[TTx any] struct {
	driver   riverdriver.Driver[TTx]
	logger   *slog.Logger
	inserter *river.Client[TTx]

	mu     sync.Mutex
	worker *river.Client[TTx]
}

// New returns an engine on driver. logger receives River's own warnings;
// nil discards them.
func New[TTx any](driver riverdriver.Driver[TTx], logger *slog.Logger) (*Engine[TTx], error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := river.NewClient(driver, &river.Config{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("river: %w", err)
	}
	return &Engine[TTx]{driver: driver, logger: logger, inserter: c}, nil
}

// Insert hands execution id to the engine inside tx: the dispatch commits
// or rolls back with the admission.
func (e *Engine[TTx]) Insert(ctx context.Context, tx TTx, id string) error {
	_, err := e.inserter.InsertManyFastTx(ctx, tx, []river.InsertManyParams{{Args: RunArgs{ExecutionID: id}, InsertOpts: &river.InsertOpts{
		Queue:       Queue,
		MaxAttempts: 25,
	}}})
	if err != nil {
		return fmt.Errorf("dispatch execution %s: %w", id, err)
	}
	return nil
}

// Start starts working jobs with run, at most maxRuns at once.
func (e *Engine[TTx]) Start(ctx context.Context, workerID string, maxRuns int, run func(ctx context.Context, id string) error) error {
	if run == nil {
		return errors.New("engine: no run function")
	}
	if maxRuns <= 0 {
		maxRuns = 256
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.worker != nil {
		return errors.New("engine already started")
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &runWorker{run: run}); err != nil {
		return err
	}
	c, err := river.NewClient(e.driver, &river.Config{
		ID:                workerID,
		Logger:            e.logger,
		Workers:           workers,
		Queues:            map[string]river.QueueConfig{Queue: {MaxWorkers: maxRuns}},
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 200 * time.Millisecond,
		JobTimeout:        -1,
		// A dispatch whose worker died is rescued (and then found already
		// claimed, or redispatched by recovery) after this long.
		RescueStuckJobsAfter:        10 * time.Minute,
		CompletedJobRetentionPeriod: time.Hour,
	})
	if err != nil {
		return fmt.Errorf("river: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("river start: %w", err)
	}
	e.worker = c
	return nil
}

// Stop stops fetching, cancels the jobs in flight and waits for them.
func (e *Engine[TTx]) Stop(ctx context.Context) error {
	e.mu.Lock()
	c := e.worker
	e.worker = nil
	e.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.StopAndCancel(ctx)
}
