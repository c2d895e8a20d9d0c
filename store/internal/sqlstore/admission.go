package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/dispatch"
	"github.com/corralrun/corral/store"
)

// Submit implements store.Store.
func (s *Store[TTx]) Submit(ctx context.Context, sub *store.Submission) (*store.Admission, error) {
	var adm *store.Admission
	err := s.db.Tx(ctx, func(tx Tx[TTx]) error {
		var err error
		adm, err = s.admit(ctx, tx, sub, time.Now().UTC())
		return err
	})
	return adm, err
}

// admit decides one submission inside tx, holding the agent's row lock:
// a free slot is taken, or the execution queued, or rejected.
func (s *Store[TTx]) admit(ctx context.Context, tx Tx[TTx], sub *store.Submission, now time.Time) (*store.Admission, error) {
	a, err := s.getAgent(ctx, tx, sub.Agent, true)
	if err != nil {
		return nil, err
	}
	e := &store.Run{Execution: &corral.Execution{
		ID:         store.NewID(now),
		Agent:      a.Name,
		Trigger:    sub.Trigger,
		ScheduleID: sub.ScheduleID,
		RetryOf:    sub.RetryOf,
		FireAt:     sub.FireAt,
		Attempt:    max(sub.Attempt, 1),
		Input:      sub.Input,
		Timeout:    sub.Timeout,
		CreatedAt:  now,

		TraceParent: sub.TraceParent,
		TraceState:  sub.TraceState,
	}}
	if n := a.Retry.Attempts(); n > 1 {
		e.MaxAttempts = n
	}
	e.Hooked = len(s.hooksOf(a)) > 0
	if e.Trigger == "" {
		e.Trigger = corral.TriggerAPI
	}
	used, err := countSlots(ctx, tx, a.Name)
	if err != nil {
		return nil, err
	}
	adm := &store.Admission{Execution: e.Execution, Running: used, Capacity: a.MaxParallelTasks, Backlog: a.MaxBacklog}
	spent, reopens, err := budgetSpent(ctx, tx, a, now)
	if err != nil {
		return nil, err
	}
	if spent != "" {
		return adm, s.heldByBudget(ctx, tx, a, e, adm, spent, reopens, now)
	}
	if used < a.MaxParallelTasks {
		// A new task goes to the engine, whichever worker fetches it.
		if _, err := s.takeSlot(ctx, tx, a, e, used, now, false); err != nil {
			return nil, err
		}
		adm.Running++
		return adm, nil
	}
	if a.Overflow == corral.OverflowQueue {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_executions WHERE agent = $1 AND status = 'queued'`, a.Name).Scan(&adm.Queued); err != nil {
			return nil, err
		}
		if adm.Queued < a.MaxBacklog {
			e.Status = corral.StatusQueued
			adm.Queued++
			if err := putExecution(ctx, tx, e); err != nil {
				return nil, err
			}
			return adm, s.emit(ctx, tx, a, e, corral.EventQueued)
		}
		e.Error = fmt.Sprintf("agent at capacity (%d/%d parallel tasks running) and its backlog is full (%d/%d queued)", used, a.MaxParallelTasks, adm.Queued, a.MaxBacklog)
	} else {
		e.Error = fmt.Sprintf("agent at capacity (%d/%d parallel tasks running)", used, a.MaxParallelTasks)
	}
	e.Status = corral.StatusRejected
	e.FinishedAt = &now
	return adm, putExecution(ctx, tx, e)
}

// heldByBudget queues e, an execution of agent a whose budget window is
// spent, when a queues and has room, or rejects it, saying why and when
// the window reopens.
func (s *Store[TTx]) heldByBudget(ctx context.Context, tx Tx[TTx], a *corral.Agent, e *store.Run, adm *store.Admission, spent string, reopens, now time.Time) error {
	adm.RetryAt = reopens
	if a.Overflow == corral.OverflowQueue {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_executions WHERE agent = $1 AND status = 'queued'`, a.Name).Scan(&adm.Queued); err != nil {
			return err
		}
		if adm.Queued < a.MaxBacklog {
			e.Status = corral.StatusQueued
			adm.Queued++
			if err := putExecution(ctx, tx, e); err != nil {
				return err
			}
			return s.emit(ctx, tx, a, e, corral.EventQueued)
		}
	}
	e.Status = corral.StatusRejected
	e.Error = fmt.Sprintf("agent %s: %s", a.Name, spent)
	e.ErrorType = corral.ErrorMaxBudget
	e.FinishedAt = &now
	return putExecution(ctx, tx, e)
}

// takeSlot gives e the lowest free slot of a (whose row lock tx holds),
// marks it running and dispatches it, all inside tx: to the job engine,
// or, when local is set and this process's engine has room for it, to
// that engine directly (the returned reservation, to run once tx
// commits).
func (s *Store[TTx]) takeSlot(ctx context.Context, tx Tx[TTx], a *corral.Agent, e *store.Run, held int, now time.Time, local bool) (*dispatch.Reservation, error) {
	// The lowest free slot number: 1; or, when the held slots are 1 to
	// their highest without a gap (the highest is the count of held
	// slots, which the caller counted under the agent's lock), the next;
	// or the number after the lowest held slot whose next is free, found
	// in the order of the primary key, so the walk stops at the first gap.
	// (Probing every held slot's next cost an agent of thousands of slots
	// an index probe per held slot per admission: 14 % of a worker's CPU
	// holding 3,000 runs, its admissions quadratic in its runs; counting
	// the held slots again read them all once more.)
	var no int
	err := tx.QueryRow(ctx, `SELECT CASE
		WHEN NOT EXISTS (SELECT 1 FROM corral_slots WHERE agent = $1 AND slot_no = 1) THEN 1
		WHEN (SELECT max(slot_no) FROM corral_slots WHERE agent = $1) = $2 THEN $2 + 1
		ELSE (SELECT s.slot_no + 1 FROM corral_slots s WHERE s.agent = $1
			AND NOT EXISTS (SELECT 1 FROM corral_slots t WHERE t.agent = $1 AND t.slot_no = s.slot_no + 1)
			ORDER BY s.slot_no LIMIT 1)
		END`, a.Name, held).Scan(&no)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO corral_slots (agent, slot_no, execution_id, acquired_at) VALUES ($1, $2, $3, $4)`,
		a.Name, no, e.ID, now); err != nil {
		return nil, fmt.Errorf("take slot %d of agent %s: %w", no, a.Name, err)
	}
	e.Status = corral.StatusRunning
	e.Slot = no
	e.AdmittedAt = &now
	if err := putExecution(ctx, tx, e); err != nil {
		return nil, err
	}
	if local {
		if r := s.engine.Reserve(e.ID, a.Labels); r != nil {
			return r, nil
		}
	}
	return nil, s.engine.Insert(ctx, tx.Raw, e.ID, a.Labels)
}

// promote admits the oldest queued executions of a (whose row lock tx
// holds) into its free slots. On a lone worker, those its engine has
// room for are reserved to it rather than handed to the job engine: the
// caller starts them once tx commits (local.Start), or releases them if
// it does not (local.Release). Where several workers share the database,
// every promotion goes to the job engine, so that the work spreads over
// them.
func (s *Store[TTx]) promote(ctx context.Context, tx Tx[TTx], a *corral.Agent, now time.Time) (local dispatch.Reservations, err error) {
	if now.IsZero() {
		now = time.Now().UTC()
	}
	defer func() {
		if err != nil {
			local.Release()
			local = nil
		}
	}()
	if spent, _, err := budgetSpent(ctx, tx, a, now); err != nil || spent != "" {
		return nil, err // its window is spent: the queue waits for it
	}
	used, err := countSlots(ctx, tx, a.Name)
	if err != nil {
		return nil, err
	}
	checked, alone := false, false
	for ; used < a.MaxParallelTasks; used++ {
		// Only a cancellation locks a queued row; skipping it is right.
		var doc []byte
		err = tx.QueryRow(ctx, `SELECT doc FROM corral_executions WHERE agent = $1 AND status = 'queued'
			ORDER BY created_at, id LIMIT 1`+s.skipLocked, a.Name).Scan(&doc)
		if errors.Is(err, sql.ErrNoRows) {
			return local, nil
		}
		if err != nil {
			return local, err
		}
		e, err := decodeExecution(doc)
		if err != nil {
			return local, err
		}
		if !checked {
			if alone, err = s.alone(ctx, tx); err != nil {
				return local, err
			}
			checked = true
		}
		r, err := s.takeSlot(ctx, tx, a, e, used, now, alone)
		if err != nil {
			return local, err
		}
		if r != nil {
			local = append(local, r)
		}
	}
	return local, nil
}

// alone reports whether this process's engine runs and its worker is
// the only one registered.
func (s *Store[TTx]) alone(ctx context.Context, tx Tx[TTx]) (bool, error) {
	id := s.engine.WorkerID()
	if id == "" {
		return false, nil
	}
	rows, err := tx.Query(ctx, `SELECT id FROM corral_workers ORDER BY id LIMIT 2`)
	ids, err := collect(rows, err, func(r Rows) (string, error) {
		var w string
		return w, r.Scan(&w)
	})
	return len(ids) == 1 && ids[0] == id, err
}
