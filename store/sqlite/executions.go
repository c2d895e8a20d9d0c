package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// putExecution writes the whole record: indexed columns and the document.
func putExecution(ctx context.Context, q dbq, e *store.Execution) error {
	doc, err := json.Marshal(e)
	if err != nil {
		return err
	}
	cancel := 0
	if e.CancelRequested {
		cancel = 1
	}
	_, err = q.ExecContext(ctx, `INSERT INTO corral_executions
		(id, agent, status, worker_id, cancel_requested, created_at, admitted_at, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, worker_id = excluded.worker_id,
			cancel_requested = excluded.cancel_requested, admitted_at = excluded.admitted_at, doc = excluded.doc`,
		e.ID, e.Agent, string(e.Status), e.WorkerID, cancel, micros(e.CreatedAt), nullMicros(e.AdmittedAt), string(doc))
	return err
}

func getExecution(ctx context.Context, q querier, id string) (*store.Execution, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM corral_executions WHERE id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeExecution(doc)
}

func decodeExecution(doc string) (*store.Execution, error) {
	e := new(store.Execution)
	if err := json.Unmarshal([]byte(doc), e); err != nil {
		return nil, fmt.Errorf("corrupt execution record: %w", err)
	}
	return e, nil
}

func (s *Store) GetExecution(ctx context.Context, id string) (*store.Execution, error) {
	return getExecution(ctx, s.r(), id)
}

func (s *Store) Submit(ctx context.Context, sub *store.Submission) (*store.Admission, error) {
	var adm *store.Admission
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		adm, err = s.admit(ctx, tx, sub, time.Now().UTC())
		return err
	})
	return adm, err
}

// admit decides one submission inside tx.
func (s *Store) admit(ctx context.Context, tx *sql.Tx, sub *store.Submission, now time.Time) (*store.Admission, error) {
	a, err := getAgent(ctx, s.w(tx), sub.Agent)
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
	used, err := countSlots(ctx, s.w(tx), a.Name)
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
		if err := s.w(tx).QueryRowContext(ctx, `SELECT count(*) FROM corral_executions WHERE agent = ? AND status = 'queued'`, a.Name).Scan(&adm.Queued); err != nil {
			return nil, err
		}
		if adm.Queued < a.MaxBacklog {
			e.Status = corral.StatusQueued
			adm.Queued++
			return adm, putExecution(ctx, s.w(tx), e)
		}
		e.Error = fmt.Sprintf("agent at capacity (%d/%d parallel tasks running) and its backlog is full (%d/%d queued)", used, a.MaxParallelTasks, adm.Queued, a.MaxBacklog)
	} else {
		e.Error = fmt.Sprintf("agent at capacity (%d/%d parallel tasks running)", used, a.MaxParallelTasks)
	}
	e.Status = corral.StatusRejected
	e.FinishedAt = &now
	return adm, putExecution(ctx, s.w(tx), e)
}

func countSlots(ctx context.Context, q querier, agent string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM corral_slots WHERE agent = ?`, agent).Scan(&n)
	return n, err
}

// takeSlot gives e the lowest free slot of a, marks it running and
// dispatches it, all inside tx.
func (s *Store) takeSlot(ctx context.Context, tx *sql.Tx, a *store.Agent, e *store.Execution, now time.Time) error {
	// The lowest free slot number: 1, or the first number after a held
	// slot that is not held itself.
	var no int
	err := s.w(tx).QueryRowContext(ctx, `SELECT CASE
		WHEN NOT EXISTS (SELECT 1 FROM corral_slots WHERE agent = ?1 AND slot_no = 1) THEN 1
		ELSE (SELECT min(s.slot_no) + 1 FROM corral_slots s WHERE s.agent = ?1
			AND NOT EXISTS (SELECT 1 FROM corral_slots t WHERE t.agent = ?1 AND t.slot_no = s.slot_no + 1))
		END`, a.Name).Scan(&no)
	if err != nil {
		return err
	}
	if _, err := s.w(tx).ExecContext(ctx, `INSERT INTO corral_slots (agent, slot_no, execution_id, acquired_at) VALUES (?, ?, ?, ?)`,
		a.Name, no, e.ID, micros(now)); err != nil {
		return fmt.Errorf("take slot %d of agent %s: %w", no, a.Name, err)
	}
	e.Status = corral.StatusRunning
	e.SlotNo = no
	e.AdmittedAt = &now
	if err := putExecution(ctx, s.w(tx), e); err != nil {
		return err
	}
	return s.engine.Insert(ctx, tx, e.ID, a.Labels)
}

// promote admits the oldest queued executions of agent into its free slots.
func (s *Store) promote(ctx context.Context, tx *sql.Tx, agent string, now time.Time) error {
	a, err := getAgent(ctx, s.w(tx), agent)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if now.IsZero() {
		now = time.Now().UTC()
	}
	for {
		used, err := countSlots(ctx, s.w(tx), agent)
		if err != nil {
			return err
		}
		if used >= a.MaxParallelTasks {
			return nil
		}
		var doc string
		err = s.w(tx).QueryRowContext(ctx, `SELECT doc FROM corral_executions WHERE agent = ? AND status = 'queued' ORDER BY created_at, id LIMIT 1`, agent).Scan(&doc)
		if errors.Is(err, sql.ErrNoRows) {
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
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// One statement in the common case: the compare-and-set on the
		// owner, editing the document in place.
		var doc string
		err := s.w(tx).QueryRowContext(ctx, `UPDATE corral_executions
			SET worker_id = ?1, doc = json_set(doc, '$.worker_id', ?1, '$.started_at', ?2, '$.log_path', ?3)
			WHERE id = ?4 AND status = 'running' AND worker_id = '' AND cancel_requested = 0
			RETURNING doc`, workerID, now.UTC().Format(time.RFC3339Nano), logPath, id).Scan(&doc)
		if err == nil {
			out, err = decodeExecution(doc)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		e, err := getExecution(ctx, s.w(tx), id)
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
	set := []string{}
	args := []any{}
	add := func(path string, v any, isJSON bool) {
		if isJSON {
			set = append(set, "'"+path+"', json(?)")
		} else {
			set = append(set, "'"+path+"', ?")
		}
		args = append(args, v)
	}
	if info.Handle != nil {
		h, _ := json.Marshal(info.Handle)
		add("$.handle", string(h), true)
		add("$.containment", string(info.Handle.Containment), false)
	}
	if info.LogPath != "" {
		add("$.log_path", info.LogPath, false)
	}
	if info.SessionID != "" {
		add("$.session_id", info.SessionID, false)
	}
	if info.NumTurns != 0 {
		add("$.num_turns", info.NumTurns, false)
	}
	if info.CostUSD != 0 {
		add("$.cost_usd", info.CostUSD, false)
	}
	if len(info.Usage) > 0 {
		add("$.usage", string(info.Usage), true)
	}
	if len(set) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := s.w(tx).ExecContext(ctx, `UPDATE corral_executions SET doc = json_set(doc, `+strings.Join(set, ", ")+`)
			WHERE id = ? AND status = 'running' AND worker_id = ?`, append(args, id, workerID)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			e, err := getExecution(ctx, s.w(tx), id)
			if err != nil {
				return err
			}
			return fmt.Errorf("execution %s is %s, owned by %q: %w", id, e.Status, e.WorkerID, store.ErrConflict)
		}
		return nil
	})
}

func (s *Store) Finish(ctx context.Context, id string, o *store.Outcome) (*store.Execution, bool, error) {
	if !o.Status.Terminal() {
		return nil, false, fmt.Errorf("finish execution %s: status %q is not terminal", id, o.Status)
	}
	var out *store.Execution
	var applied bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		e, err := getExecution(ctx, s.w(tx), id)
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

// finish applies o to the non-terminal e, releases e's own slot and
// promotes queued work, inside tx.
func (s *Store) finish(ctx context.Context, tx *sql.Tx, e *store.Execution, o *store.Outcome) (bool, error) {
	wasRunning := e.Status == corral.StatusRunning
	now := o.FinishedAt
	if now.IsZero() {
		now = time.Now().UTC()
	}
	store.ApplyOutcome(e, o, now)
	if err := putExecution(ctx, s.w(tx), e); err != nil {
		return false, err
	}
	if !wasRunning {
		return true, nil
	}
	if _, err := s.w(tx).ExecContext(ctx, `DELETE FROM corral_slots WHERE execution_id = ?`, e.ID); err != nil {
		return false, err
	}
	return true, s.promote(ctx, tx, e.Agent, now)
}

func (s *Store) RequestCancel(ctx context.Context, id string, now time.Time) (*store.Execution, error) {
	var out *store.Execution
	err := s.tx(ctx, func(tx *sql.Tx) error {
		e, err := getExecution(ctx, s.w(tx), id)
		if err != nil {
			return err
		}
		out = e
		switch {
		case e.Status.Terminal():
			return fmt.Errorf("execution %s is already %s: %w", id, e.Status, store.ErrConflict)
		case e.Status == corral.StatusQueued || e.WorkerID == "":
			// Nothing runs yet: cancel it here, releasing an admitted slot.
			_, err := s.finish(ctx, tx, e, &store.Outcome{Status: corral.StatusCancelled, ErrorType: corral.ErrorCancelled, Error: "cancelled before it started", FinishedAt: now})
			return err
		}
		e.CancelRequested = true
		return putExecution(ctx, s.w(tx), e)
	})
	return out, err
}

func (s *Store) CancelRequested(ctx context.Context, workerID string) ([]string, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id FROM corral_executions WHERE status = 'running' AND worker_id = ? AND cancel_requested = 1`, workerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (s *Store) ListExecutions(ctx context.Context, f store.ExecutionFilter) ([]*store.Execution, string, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	var where []string
	var args []any
	if f.Agent != "" {
		where = append(where, "agent = ?")
		args = append(args, f.Agent)
	}
	if len(f.Statuses) > 0 {
		ph := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			ph[i] = "?"
			args = append(args, string(st))
		}
		where = append(where, "status IN ("+strings.Join(ph, ",")+")")
	}
	if f.WorkerID != "" {
		where = append(where, "worker_id = ?")
		args = append(args, f.WorkerID)
	}
	if !f.Since.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, micros(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, micros(f.Until))
	}
	if f.Cursor != "" {
		ts, id, ok := strings.Cut(f.Cursor, "_")
		t, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil {
			return nil, "", fmt.Errorf("cursor %q is not one this service returned: start the listing again without it: %w", f.Cursor, store.ErrBadCursor)
		}
		where = append(where, "(created_at < ? OR (created_at = ? AND id < ?))")
		args = append(args, t, t, id)
	}
	q := `SELECT created_at, doc FROM corral_executions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := s.r().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*store.Execution
	var created []int64
	for rows.Next() {
		var c int64
		var doc string
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
		next = strconv.FormatInt(created[limit-1], 10) + "_" + out[limit-1].ID
	}
	return out, next, nil
}

func (s *Store) Slots(ctx context.Context, agent string) ([]store.Slot, error) {
	if _, err := getAgent(ctx, s.r(), agent); err != nil {
		return nil, err
	}
	rows, err := s.r().QueryContext(ctx, `SELECT slot_no, execution_id, acquired_at FROM corral_slots WHERE agent = ? ORDER BY slot_no`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Slot{}
	for rows.Next() {
		var sl store.Slot
		var at int64
		if err := rows.Scan(&sl.No, &sl.ExecutionID, &at); err != nil {
			return nil, err
		}
		sl.Since = fromMicros(at)
		out = append(out, sl)
	}
	return out, rows.Err()
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
	rows, err := s.r().QueryContext(ctx, `SELECT agent, status, count(*) FROM corral_executions GROUP BY agent, status`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var agent, status string
		var n int
		if err := rows.Scan(&agent, &status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if st := byName[agent]; st != nil {
			st.ByStatus[corral.Status(status)] = n
		}
	}
	rows.Close()
	rows, err = s.r().QueryContext(ctx, `SELECT agent, count(*) FROM corral_slots GROUP BY agent`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var agent string
		var n int
		if err := rows.Scan(&agent, &n); err != nil {
			return nil, err
		}
		if st := byName[agent]; st != nil {
			st.SlotsUsed = n
		}
	}
	return out, rows.Err()
}

func (s *Store) Unclaimed(ctx context.Context, admittedBefore time.Time) ([]*store.Execution, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT doc FROM corral_executions WHERE status = 'running' AND worker_id = '' AND admitted_at < ? ORDER BY admitted_at`, micros(admittedBefore))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Execution
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		e, err := decodeExecution(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *Store) Redispatch(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		e, err := getExecution(ctx, s.w(tx), id)
		if err != nil {
			return err
		}
		if e.Status != corral.StatusRunning || e.WorkerID != "" {
			return fmt.Errorf("execution %s is %s (owner %q): %w", id, e.Status, e.WorkerID, store.ErrConflict)
		}
		var labels []string
		if a, err := getAgent(ctx, s.w(tx), e.Agent); err == nil {
			labels = a.Labels
		}
		now := time.Now().UTC()
		e.AdmittedAt = &now
		if err := putExecution(ctx, s.w(tx), e); err != nil {
			return err
		}
		return s.engine.Insert(ctx, tx, id, labels)
	})
}
