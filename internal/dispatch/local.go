package dispatch

import (
	"context"
	"time"
)

// A Reservation is room on this worker's engine for one execution that a
// transaction of this process admits (a queued execution promoted into a
// slot that a run just freed): instead of a job that the engine would
// fetch on its next poll, the execution runs here as soon as the
// transaction commits. It holds one of the worker's Config.MaxRuns until
// it is started or released.
//
// No job is inserted for it, so a crash between the commit and the claim
// leaves an admitted execution that no worker claimed; the service's
// recovery hands those to the engine again (store.Store.Unclaimed and
// Redispatch), as it does for the dispatches of a worker that died. A
// local run that cannot claim its execution (the store failed) hands it
// to the engine at once (Config.Redispatch).
type Reservation struct {
	id         string
	ctx        context.Context
	run        func(ctx context.Context, id string) error
	redispatch func(ctx context.Context, id string) error
	sem        chan struct{}
	done       func()
}

// WorkerID returns the worker id the engine was started with, "" when
// it is not running.
func (e *Engine[TTx]) WorkerID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.worker == nil {
		return ""
	}
	return e.cfg.WorkerID
}

// Reservations are the reservations of one transaction.
type Reservations []*Reservation

// Reserve returns a reservation for execution id of an agent requiring
// labels, or nil when this engine is not running, does not serve their
// queue or has no room: the caller then inserts a job (Insert).
func (e *Engine[TTx]) Reserve(id string, labels []string) *Reservation {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.worker == nil || !e.queues[QueueFor(labels)] {
		return nil
	}
	select {
	case e.rw.sem <- struct{}{}:
	default:
		return nil
	}
	e.lwg.Add(1) // Stop waits for it
	return &Reservation{id: id, ctx: e.lctx, run: e.rw.run, redispatch: e.cfg.Redispatch, sem: e.rw.sem, done: e.lwg.Done}
}

// Start runs each reserved execution in a goroutine of its own (the
// transaction that admitted them committed).
func (rs Reservations) Start() {
	for _, r := range rs {
		go r.start()
	}
}

func (r *Reservation) start() {
	defer r.done()
	defer func() { <-r.sem }()
	if err := r.run(r.ctx, r.id); err != nil && r.redispatch != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.redispatch(ctx, r.id) // on failure, recovery redispatches it
	}
}

// Release gives the room back (the transaction did not commit).
func (rs Reservations) Release() {
	for _, r := range rs {
		<-r.sem
		r.done()
	}
}
