package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// putExecution writes the whole record: indexed columns and the document.
func putExecution(ctx context.Context, q querier, e *store.Execution) error {
	doc, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO corral_executions
		(id, agent, status, worker_id, cancel_requested, created_at, admitted_at, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, worker_id = excluded.worker_id,
			cancel_requested = excluded.cancel_requested, admitted_at = excluded.admitted_at, doc = excluded.doc`,
		e.ID, e.Agent, string(e.Status), e.WorkerID, e.CancelRequested, e.CreatedAt, nullTime(e.AdmittedAt), doc)
	return err
}

// getExecution reads an execution; lock takes its row lock.
func getExecution(ctx context.Context, q querier, id string, lock bool) (*store.Execution, error) {
	sql := `SELECT doc FROM corral_executions WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	var doc []byte
	err := q.QueryRow(ctx, sql, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("execution %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeExecution(doc)
}

func decodeExecution(doc []byte) (*store.Execution, error) {
	e := new(store.Execution)
	if err := json.Unmarshal(doc, e); err != nil {
		return nil, fmt.Errorf("corrupt execution record: %w", err)
	}
	return e, nil
}

func collectExecutions(rows pgx.Rows) ([]*store.Execution, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Execution, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		return decodeExecution(doc)
	})
}

func (s *Store) GetExecution(ctx context.Context, id string) (*store.Execution, error) {
	return getExecution(ctx, s.pool, id, false)
}

func (s *Store) Submit(ctx context.Context, sub *store.Submission) (*store.Admission, error) {
	var adm *store.Admission
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		adm, err = s.admit(ctx, tx, sub, time.Now().UTC())
		return err
	})
	return adm, err
}

// admit decides one submission inside tx, holding the agent's row lock.
func (s *Store) admit(ctx context.Context, tx pgx.Tx, sub *store.Submission, now time.Time) (*store.Admission, error) {
	a, err := getAgent(ctx, tx, sub.Agent, true)
	if err != nil {
		return nil, err
	}
	e := &store.Execution{
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
	}
	if e.Trigger == "" {
		e.Trigger = store.TriggerAPI
	}
	used, err := countSlots(ctx, tx, a.Name)
	if err != nil {
		return nil, err
	}
	adm := &store.Admission{Execution: e, Running: used, Capacity: a.MaxParallelTasks, Backlog: a.MaxBacklog}
	if used < a.MaxParallelTasks {
		if err := s.takeSlot(ctx, tx, a, e, now); err != nil {
			return nil, err
		}
		adm.Running++
		return adm, nil
	}
	if a.Overflow == store.OverflowQueue {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_executions WHERE agent = $1 AND status = 'queued'`, a.Name).Scan(&adm.Queued); err != nil {
			return nil, err
		}
		if adm.Queued < a.MaxBacklog {
			e.Status = corral.StatusQueued
			adm.Queued++
			return adm, putExecution(ctx, tx, e)
		}
		e.Error = fmt.Sprintf("agent at capacity (%d/%d parallel tasks running) and its backlog is full (%d/%d queued)", used, a.MaxParallelTasks, adm.Queued, a.MaxBacklog)
	} else {
		e.Error = fmt.Sprintf("agent at capacity (%d/%d parallel tasks running)", used, a.MaxParallelTasks)
	}
	e.Status = corral.StatusRejected
	e.FinishedAt = &now
	return adm, putExecution(ctx, tx, e)
}

func countSlots(ctx context.Context, q querier, agent string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM corral_slots WHERE agent = $1`, agent).Scan(&n)
	return n, err
}

// takeSlot gives e the lowest free slot of a (whose row lock tx holds),
// marks it running and dispatches it, all inside tx.
func (s *Store) takeSlot(ctx context.Context, tx pgx.Tx, a *store.Agent, e *store.Execution, now time.Time) error {
	var no int
	err := tx.QueryRow(ctx, `SELECT CASE
		WHEN NOT EXISTS (SELECT 1 FROM corral_slots WHERE agent = $1 AND slot_no = 1) THEN 1
		ELSE (SELECT min(s.slot_no) + 1 FROM corral_slots s WHERE s.agent = $1
			AND NOT EXISTS (SELECT 1 FROM corral_slots t WHERE t.agent = $1 AND t.slot_no = s.slot_no + 1))
		END`, a.Name).Scan(&no)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO corral_slots (agent, slot_no, execution_id, acquired_at) VALUES ($1, $2, $3, $4)`,
		a.Name, no, e.ID, now); err != nil {
		return fmt.Errorf("take slot %d of agent %s: %w", no, a.Name, err)
	}
	e.Status = corral.StatusRunning
	e.SlotNo = no
	e.AdmittedAt = &now
	if err := putExecution(ctx, tx, e); err != nil {
		return err
	}
	return s.engine.Insert(ctx, tx, e.ID, a.Labels)
}

// promote admits the oldest queued executions of a (whose row lock tx
// holds) into its free slots.
func (s *Store) promote(ctx context.Context, tx pgx.Tx, a *store.Agent, now time.Time) error {
	if now.IsZero() {
		now = time.Now().UTC()
	}
	for {
		used, err := countSlots(ctx, tx, a.Name)
		if err != nil {
			return err
		}
		if used >= a.MaxParallelTasks {
			return nil
		}
		// Only a cancellation locks a queued row; skipping it is right.
		var doc []byte
		err = tx.QueryRow(ctx, `SELECT doc FROM corral_executions WHERE agent = $1 AND status = 'queued'
			ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`, a.Name).Scan(&doc)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		e, err := decodeExecution(doc)
		if err != nil {
			return err
		}
		if err := s.takeSlot(ctx, tx, a, e, now); err != nil {
			return err
		}
	}
}

func (s *Store) Claim(ctx context.Context, id, workerID string, now time.Time, logPath string) (*store.Execution, error) {
	var out *store.Execution
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var doc []byte
		err := tx.QueryRow(ctx, `UPDATE corral_executions
			SET worker_id = $1, doc = doc || jsonb_build_object('worker_id', $1::text, 'started_at', $2::text, 'log_path', $3::text)
			WHERE id = $4 AND status = 'running' AND worker_id = '' AND NOT cancel_requested
			RETURNING doc`, workerID, now.UTC().Format(time.RFC3339Nano), logPath, id).Scan(&doc)
		if err == nil {
			out, err = decodeExecution(doc)
			return err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		e, err := getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if e.Status == corral.StatusRunning && e.WorkerID == "" && e.CancelRequested {
			if _, err := s.finish(ctx, tx, e, &store.Outcome{Status: corral.StatusCancelled, ErrorType: corral.ErrorCancelled, Error: "cancelled before it started", FinishedAt: now}); err != nil {
				return err
			}
			return fmt.Errorf("execution %s was cancelled before it started: %w", id, store.ErrConflict)
		}
		return fmt.Errorf("execution %s is %s (owner %q): %w", id, e.Status, e.WorkerID, store.ErrConflict)
	})
	return out, err
}

func (s *Store) SetRunInfo(ctx context.Context, id, workerID string, info *store.Execution) error {
	set := map[string]any{}
	if info.Handle != nil {
		set["handle"] = info.Handle
		set["containment"] = info.Handle.Containment
	}
	if info.LogPath != "" {
		set["log_path"] = info.LogPath
	}
	if info.SessionID != "" {
		set["session_id"] = info.SessionID
	}
	if info.NumTurns != 0 {
		set["num_turns"] = info.NumTurns
	}
	if info.CostUSD != 0 {
		set["cost_usd"] = info.CostUSD
	}
	if len(info.Usage) > 0 {
		set["usage"] = info.Usage
	}
	if len(set) == 0 {
		return nil
	}
	patch, err := json.Marshal(set)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE corral_executions SET doc = doc || $1::jsonb
		WHERE id = $2 AND status = 'running' AND worker_id = $3`, patch, id, workerID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		e, err := getExecution(ctx, s.pool, id, false)
		if err != nil {
			return err
		}
		return fmt.Errorf("execution %s is %s, owned by %q: %w", id, e.Status, e.WorkerID, store.ErrConflict)
	}
	return nil
}

func (s *Store) Finish(ctx context.Context, id string, o *store.Outcome) (*store.Execution, bool, error) {
	if !o.Status.Terminal() {
		return nil, false, fmt.Errorf("finish execution %s: status %q is not terminal", id, o.Status)
	}
	var out *store.Execution
	var applied bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		applied = false
		e, err := getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = e
		if e.Status.Terminal() {
			return nil // compare-and-set lost: the first terminal state stands
		}
		applied, err = s.finish(ctx, tx, e, o)
		return err
	})
	return out, applied, err
}

// finish applies o to the non-terminal e (whose row lock tx holds),
// releases e's own slot and promotes queued work, inside tx.
func (s *Store) finish(ctx context.Context, tx pgx.Tx, e *store.Execution, o *store.Outcome) (bool, error) {
	wasRunning := e.Status == corral.StatusRunning
	var a *store.Agent
	if wasRunning {
		// The agent's lock first, as admission takes it.
		var err error
		a, err = getAgent(ctx, tx, e.Agent, true)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	now := o.FinishedAt
	if now.IsZero() {
		now = time.Now().UTC()
	}
	store.ApplyOutcome(e, o, now)
	if err := putExecution(ctx, tx, e); err != nil {
		return false, err
	}
	if !wasRunning {
		return true, nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM corral_slots WHERE execution_id = $1`, e.ID); err != nil {
		return false, err
	}
	if a == nil {
		return true, nil
	}
	return true, s.promote(ctx, tx, a, now)
}

func (s *Store) RequestCancel(ctx context.Context, id string, now time.Time) (*store.Execution, error) {
	var out *store.Execution
	err := s.tx(ctx, func(tx pgx.Tx) error {
		e, err := getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = e
		switch {
		case e.Status.Terminal():
			return fmt.Errorf("execution %s is already %s: %w", id, e.Status, store.ErrConflict)
		case e.Status == corral.StatusQueued || e.WorkerID == "":
			_, err := s.finish(ctx, tx, e, &store.Outcome{Status: corral.StatusCancelled, ErrorType: corral.ErrorCancelled, Error: "cancelled before it started", FinishedAt: now})
			return err
		}
		e.CancelRequested = true
		if err := putExecution(ctx, tx, e); err != nil {
			return err
		}
		// Wake the owner at once; it polls too.
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, CancelChannel, e.WorkerID+" "+e.ID)
		return err
	})
	return out, err
}

func (s *Store) CancelRequested(ctx context.Context, workerID string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM corral_executions WHERE status = 'running' AND worker_id = $1 AND cancel_requested`, workerID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s *Store) ListExecutions(ctx context.Context, f store.ExecutionFilter) ([]*store.Execution, string, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Agent != "" {
		where = append(where, "agent = "+arg(f.Agent))
	}
	if len(f.Statuses) > 0 {
		st := make([]string, len(f.Statuses))
		for i, x := range f.Statuses {
			st[i] = string(x)
		}
		where = append(where, "status = ANY("+arg(st)+")")
	}
	if f.WorkerID != "" {
		where = append(where, "worker_id = "+arg(f.WorkerID))
	}
	if !f.Since.IsZero() {
		where = append(where, "created_at >= "+arg(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < "+arg(f.Until))
	}
	if f.Cursor != "" {
		ts, id, ok := strings.Cut(f.Cursor, "_")
		us, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil {
			return nil, "", fmt.Errorf("cursor %q is not one this service returned: start the listing again without it: %w", f.Cursor, store.ErrBadCursor)
		}
		t := time.UnixMicro(us).UTC()
		where = append(where, "(created_at, id) < ("+arg(t)+", "+arg(id)+")")
	}
	q := `SELECT created_at, doc FROM corral_executions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT " + arg(limit+1)
	var out []*store.Execution
	var created []time.Time
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var c time.Time
		var doc []byte
		if err := rows.Scan(&c, &doc); err != nil {
			return nil, "", err
		}
		e, err := decodeExecution(doc)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
		created = append(created, c)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = strconv.FormatInt(created[limit-1].UnixMicro(), 10) + "_" + out[limit-1].ID
	}
	return out, next, nil
}

func (s *Store) Slots(ctx context.Context, agent string) ([]store.Slot, error) {
	if _, err := getAgent(ctx, s.pool, agent, false); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT slot_no, execution_id, acquired_at FROM corral_slots WHERE agent = $1 ORDER BY slot_no`, agent)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Slot, error) {
		var sl store.Slot
		err := r.Scan(&sl.No, &sl.ExecutionID, &sl.Since)
		sl.Since = sl.Since.UTC()
		return sl, err
	})
	if out == nil && err == nil {
		out = []store.Slot{}
	}
	return out, err
}

func (s *Store) Stats(ctx context.Context) ([]store.AgentStats, error) {
	agents, err := s.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*store.AgentStats{}
	out := make([]store.AgentStats, len(agents))
	for i, a := range agents {
		out[i] = store.AgentStats{Agent: a.Name, Capacity: a.MaxParallelTasks, ByStatus: map[corral.Status]int{}}
		byName[a.Name] = &out[i]
	}
	rows, err := s.pool.Query(ctx, `SELECT agent, status, count(*) FROM corral_executions GROUP BY agent, status`)
	if err != nil {
		return nil, err
	}
	var agent, status string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&agent, &status, &n}, func() error {
		if st := byName[agent]; st != nil {
			st.ByStatus[corral.Status(status)] = n
		}
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = s.pool.Query(ctx, `SELECT agent, count(*) FROM corral_slots GROUP BY agent`)
	if err != nil {
		return nil, err
	}
	_, err = pgx.ForEachRow(rows, []any{&agent, &n}, func() error {
		if st := byName[agent]; st != nil {
			st.SlotsUsed = n
		}
		return nil
	})
	return out, err
}

func (s *Store) Unclaimed(ctx context.Context, admittedBefore time.Time) ([]*store.Execution, error) {
	rows, err := s.pool.Query(ctx, `SELECT doc FROM corral_executions WHERE status = 'running' AND worker_id = '' AND admitted_at < $1 ORDER BY admitted_at`, admittedBefore)
	if err != nil {
		return nil, err
	}
	return collectExecutions(rows)
}

func (s *Store) Redispatch(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		e, err := getExecution(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if e.Status != corral.StatusRunning || e.WorkerID != "" {
			return fmt.Errorf("execution %s is %s (owner %q): %w", id, e.Status, e.WorkerID, store.ErrConflict)
		}
		var labels []string
		if a, err := getAgent(ctx, tx, e.Agent, false); err == nil {
			labels = a.Labels
		}
		now := time.Now().UTC()
		e.AdmittedAt = &now
		if err := putExecution(ctx, tx, e); err != nil {
			return err
		}
		return s.engine.Insert(ctx, tx, id, labels)
	})
}
