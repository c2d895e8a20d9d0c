package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/dispatch"
	"github.com/corralrun/corral/store"
)

// claimKeys are the document fields a claim sets, bound from $3 on.
var claimKeys = []string{"worker_id", "started_at", "log_path"}

// Claim implements store.Store: in the common case one statement, the
// compare-and-set on the owner, editing the document in place.
func (s *Store[TTx]) Claim(ctx context.Context, id, workerID string, now time.Time, logPath string) (*store.Run, error) {
	vals, err := jsonValues(workerID, now.UTC(), logPath)
	if err != nil {
		return nil, err
	}
	var out *store.Run
	cancelled := false
	err = s.txLocal(ctx, func(tx Tx[TTx], local *dispatch.Reservations) error {
		out, cancelled = nil, false
		var doc []byte
		err := tx.QueryRow(ctx, `UPDATE corral_executions SET worker_id = $1, doc = `+s.claimFields+`
			WHERE id = $2 AND status = 'running' AND worker_id = '' AND cancel_requested = false
			RETURNING doc`, append([]any{workerID, id}, vals...)...).Scan(&doc)
		if err == nil {
			if out, err = decodeExecution(doc); err != nil {
				return err
			}
			return s.emit(ctx, tx, nil, out, corral.EventStarted)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		e, err := s.getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if e.Status == corral.StatusRunning && e.WorkerID == "" && e.CancelRequested {
			// Commit the cancellation; the claim fails after.
			cancelled = true
			*local, err = s.finish(ctx, tx, e, cancelledBeforeStart(now))
			return err
		}
		return fmt.Errorf("execution %s is %s (owner %q): %w", id, e.Status, e.WorkerID, store.ErrConflict)
	})
	if err == nil && cancelled {
		return nil, fmt.Errorf("execution %s was cancelled before it started: %w", id, store.ErrConflict)
	}
	return out, err
}

// SetRunInfo implements store.Store: one statement that sets the given
// fields of the document, if workerID owns the running execution.
func (s *Store[TTx]) SetRunInfo(ctx context.Context, id, workerID string, info store.RunInfo) error {
	var keys []string
	var vals []any
	if len(info.Handle) > 0 {
		keys = append(keys, "handle")
		vals = append(vals, info.Handle)
	}
	if info.Containment != "" {
		keys = append(keys, "containment")
		vals = append(vals, info.Containment)
	}
	if info.SessionID != "" {
		keys = append(keys, "session_id")
		vals = append(vals, info.SessionID)
	}
	if info.NumTurns != 0 {
		keys = append(keys, "num_turns")
		vals = append(vals, info.NumTurns)
	}
	if info.CostUSD != 0 {
		keys = append(keys, "cost_usd")
		vals = append(vals, info.CostUSD)
	}
	if len(info.Usage) > 0 {
		keys = append(keys, "usage")
		vals = append(vals, info.Usage)
	}
	if len(keys) == 0 {
		return nil
	}
	args, err := jsonValues(vals...)
	if err != nil {
		return fmt.Errorf("execution %s: run info: %w", id, err)
	}
	n, err := s.db.Write(ctx, `UPDATE corral_executions SET doc = `+s.db.SetFields(keys, 3)+`
		WHERE id = $1 AND status = 'running' AND worker_id = $2`, append([]any{id, workerID}, args...)...)
	if err != nil {
		return err
	}
	if n == 0 {
		e, err := s.getExecution(ctx, s.db.Read(), id, false)
		if err != nil {
			return err
		}
		return fmt.Errorf("execution %s is %s, owned by %q: %w", id, e.Status, e.WorkerID, store.ErrConflict)
	}
	return nil
}

// jsonValues encodes each value as JSON text, the arguments of
// Dialect.SetFields.
func jsonValues(vals ...any) ([]any, error) {
	out := make([]any, len(vals))
	for i, v := range vals {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// Unclaimed implements store.Store.
func (s *Store[TTx]) Unclaimed(ctx context.Context, admittedBefore time.Time) ([]*corral.Execution, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT doc FROM corral_executions WHERE status = 'running' AND worker_id = '' AND admitted_at < $1 ORDER BY admitted_at`, admittedBefore)
	return records(collect(rows, err, scanExecution))
}

// Redispatch implements store.Store.
func (s *Store[TTx]) Redispatch(ctx context.Context, id string) error {
	return s.db.Tx(ctx, func(tx Tx[TTx]) error {
		e, err := s.getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if e.Status != corral.StatusRunning || e.WorkerID != "" {
			return fmt.Errorf("execution %s is %s (owner %q): %w", id, e.Status, e.WorkerID, store.ErrConflict)
		}
		var labels []string
		if a, err := s.getAgent(ctx, tx, e.Agent, false); err == nil {
			labels = a.Labels
		}
		now := time.Now().UTC()
		e.AdmittedAt = &now
		if err := putExecution(ctx, tx, e); err != nil {
			return err
		}
		return s.engine.Insert(ctx, tx.Raw, id, labels)
	})
}
