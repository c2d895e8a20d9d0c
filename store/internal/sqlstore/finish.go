package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/dispatch"
	"github.com/corralrun/corral/store"
)

// Finish implements store.Store: a compare-and-set on the status, which
// releases the execution's own slot and promotes queued work in the same
// transaction.
func (s *Store[TTx]) Finish(ctx context.Context, id string, o *corral.Outcome, next *store.NextAttempt) (*corral.Execution, bool, error) {
	if !o.Status.Terminal() {
		return nil, false, fmt.Errorf("finish execution %s: status %q is not terminal", id, o.Status)
	}
	var out *store.Run
	var applied bool
	err := s.txLocal(ctx, func(tx Tx[TTx], local *dispatch.Reservations) error {
		applied = false
		e, err := s.getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = e
		if e.Status.Terminal() {
			return nil // compare-and-set lost: the first terminal state stands
		}
		applied = true
		if next != nil {
			if err := s.nextAttempt(ctx, tx, e, next, o); err != nil {
				return err
			}
		}
		*local, err = s.finish(ctx, tx, e, o)
		return err
	})
	if out == nil {
		return nil, false, err
	}
	return out.Execution, applied && err == nil, err
}

// finish applies o to the non-terminal e (whose row lock tx holds),
// releases e's own slot and promotes queued work, inside tx. It returns
// the promoted executions reserved to this process's engine (promote).
func (s *Store[TTx]) finish(ctx context.Context, tx Tx[TTx], e *store.Run, o *corral.Outcome) (dispatch.Reservations, error) {
	wasRunning := e.Status == corral.StatusRunning
	var a *corral.Agent
	if wasRunning {
		// The agent's lock first, as admission takes it.
		var err error
		a, err = s.getAgent(ctx, tx, e.Agent, true)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	now := o.Ended
	if now.IsZero() {
		now = time.Now().UTC()
	}
	e.Apply(o, now)
	if err := putExecution(ctx, tx, e); err != nil {
		return nil, err
	}
	if err := s.emit(ctx, tx, a, e, eventOf(e.Execution)); err != nil {
		return nil, err
	}
	if e.ErrorType == corral.ErrorStall {
		if err := s.emit(ctx, tx, a, e, corral.EventStalled); err != nil {
			return nil, err
		}
	}
	if e.RetriedBy != "" {
		if err := s.emit(ctx, tx, a, e, corral.EventRetrying); err != nil {
			return nil, err
		}
	}
	if !wasRunning {
		return nil, nil
	}
	if err := releaseSlot(ctx, tx, e); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, nil
	}
	return s.promote(ctx, tx, a, now)
}

// cancelledBeforeStart is the outcome of an execution cancelled before
// a worker claimed it.
func cancelledBeforeStart(now time.Time) *corral.Outcome {
	return &corral.Outcome{Status: corral.StatusCancelled, ErrorType: corral.ErrorCancelled, Error: "cancelled before it started", Ended: now}
}

// RequestCancel implements store.Store.
func (s *Store[TTx]) RequestCancel(ctx context.Context, id string, now time.Time) (*corral.Execution, error) {
	var out *store.Run
	err := s.txLocal(ctx, func(tx Tx[TTx], local *dispatch.Reservations) error {
		e, err := s.getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = e
		switch {
		case e.Status.Terminal():
			return fmt.Errorf("execution %s is already %s: %w", id, e.Status, store.ErrConflict)
		case e.Status == corral.StatusQueued || e.Status == corral.StatusWaiting || e.WorkerID == "":
			// Nothing runs yet: cancel it here, releasing an admitted slot.
			*local, err = s.finish(ctx, tx, e, cancelledBeforeStart(now))
			return err
		}
		var owners int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_workers WHERE id = $1`, e.WorkerID).Scan(&owners); err != nil {
			return err
		}
		if owners == 0 {
			// Its worker is gone without recording the end (a worker
			// forgets itself only once its runs are torn down): nobody
			// would ever finish it.
			*local, err = s.finish(ctx, tx, e, &corral.Outcome{Status: corral.StatusCancelled, ErrorType: corral.ErrorCancelled,
				Error: fmt.Sprintf("cancelled on request; the worker that ran it (%s) is gone, its run with it", e.WorkerID), Ended: now})
			return err
		}
		e.CancelRequested = true
		if err := putExecution(ctx, tx, e); err != nil {
			return err
		}
		if s.notify == nil {
			return nil
		}
		// Wake the owner at once; it polls too.
		return s.notify(ctx, tx, e.WorkerID, e.ID)
	})
	if out == nil {
		return nil, err
	}
	return out.Execution, err
}

// CancelRequested implements store.Store.
func (s *Store[TTx]) CancelRequested(ctx context.Context, workerID string) ([]string, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT id FROM corral_executions WHERE status = 'running' AND worker_id = $1 AND cancel_requested = true`, workerID)
	return collect(rows, err, func(r Rows) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
}
