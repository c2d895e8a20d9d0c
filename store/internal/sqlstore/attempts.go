package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/dispatch"
	"github.com/corralrun/corral/store"
)

// nextAttempt records the attempt after e (whose row lock tx holds, and
// which o is about to finish) as next says, waiting for its time, and
// links the two.
func (s *Store[TTx]) nextAttempt(ctx context.Context, tx Tx[TTx], e *store.Run, next *store.NextAttempt, o *corral.Outcome) error {
	now := time.Now().UTC()
	at := next.At.UTC()
	cost := o.CostUSD
	if cost == 0 {
		cost = e.CostUSD // salvaged while it ran
	}
	r := &store.Run{Execution: &corral.Execution{
		ID:            store.NewID(now),
		Agent:         e.Agent,
		Trigger:       corral.TriggerRetry,
		ScheduleID:    e.ScheduleID,
		RetryOf:       e.ID,
		Attempt:       e.Attempt + 1,
		MaxAttempts:   e.MaxAttempts,
		RetryReason:   next.Reason,
		NextAttemptAt: &at,
		ResumeSession: next.ResumeSession,
		TraceParent:   e.TraceParent, // the run's trace goes on
		TraceState:    e.TraceState,
		ChainCostUSD:  e.ChainCostUSD + cost,
		Input:         e.Input,
		Timeout:       e.Timeout,
		Outcome:       corral.Outcome{Status: corral.StatusWaiting},
		CreatedAt:     now,
	}, Hooked: e.Hooked}
	e.RetriedBy = r.ID
	return putExecution(ctx, tx, r)
}

// DueAttempts implements store.Store.
func (s *Store[TTx]) DueAttempts(ctx context.Context, now time.Time) ([]string, time.Time, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT doc FROM corral_executions WHERE status = 'waiting' ORDER BY created_at, id`)
	waiting, err := collect(rows, err, scanExecution)
	if err != nil {
		return nil, time.Time{}, err
	}
	var due []string
	var next time.Time
	for _, r := range waiting {
		switch at := r.NextAttemptAt; {
		case at == nil || !at.After(now):
			due = append(due, r.ID)
		case next.IsZero() || at.Before(next):
			next = *at
		}
	}
	return due, next, nil
}

// AdmitAttempt implements store.Store.
func (s *Store[TTx]) AdmitAttempt(ctx context.Context, id string, now time.Time) (*corral.Execution, error) {
	var out *store.Run
	err := s.txLocal(ctx, func(tx Tx[TTx], local *dispatch.Reservations) error {
		e, err := s.getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = e
		if e.Status != corral.StatusWaiting || e.NextAttemptAt != nil && e.NextAttemptAt.After(now) {
			return fmt.Errorf("execution %s is %s: %w", id, e.Status, store.ErrConflict)
		}
		a, err := s.getAgent(ctx, tx, e.Agent, true)
		if err != nil {
			*local, err = s.finish(ctx, tx, e, &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStart,
				Error: fmt.Sprintf("agent %s no longer exists: this attempt cannot run (%v)", e.Agent, err), Ended: now})
			return err
		}
		e.NextAttemptAt = nil
		used, err := countSlots(ctx, tx, a.Name)
		if err != nil {
			return err
		}
		spent, _, err := budgetSpent(ctx, tx, a, now)
		if err != nil {
			return err
		}
		if used < a.MaxParallelTasks && spent == "" {
			_, err := s.takeSlot(ctx, tx, a, e, used, now, false)
			return err
		}
		// Every slot is taken, or the agent's budget is spent: the attempt
		// joins the queue, in the order of its creation, and the next freed
		// slot (or reopened window) promotes it.
		e.Status = corral.StatusQueued
		if err := putExecution(ctx, tx, e); err != nil {
			return err
		}
		return s.emit(ctx, tx, a, e, corral.EventQueued)
	})
	if out == nil {
		return nil, err
	}
	return out.Execution, err
}
