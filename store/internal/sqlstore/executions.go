package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// An execution is a JSON document (the whole record) beside the columns
// that the rules select on.

// putExecution writes the whole record, the execution and what the store
// keeps beside it: indexed columns and the document.
func putExecution(ctx context.Context, ex Executor, e *store.Run) error {
	doc, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = ex.Exec(ctx, `INSERT INTO corral_executions
		(id, agent, status, worker_id, cancel_requested, created_at, admitted_at, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, worker_id = excluded.worker_id,
			cancel_requested = excluded.cancel_requested, admitted_at = excluded.admitted_at, doc = excluded.doc`,
		e.ID, e.Agent, string(e.Status), e.WorkerID, e.CancelRequested, e.CreatedAt, nullTime(e.AdmittedAt), string(doc))
	return err
}

// getExecution reads an execution with what the store keeps beside it;
// lock takes its row lock.
func (s *Store[TTx]) getExecution(ctx context.Context, ex Executor, id string, lock bool) (*store.Run, error) {
	r, err := getDoc[store.Run](ctx, ex, `SELECT doc FROM corral_executions WHERE id = $1`+s.lockIf(lock), "execution", id)
	if r != nil && r.Execution == nil {
		r.Execution = new(corral.Execution)
	}
	return r, err
}

// decodeExecution reads a document, or the summary of one (Dialect.Summary).
func decodeExecution(doc []byte) (*store.Run, error) {
	r := &store.Run{Execution: new(corral.Execution)}
	if err := json.Unmarshal(doc, r); err != nil {
		return nil, fmt.Errorf("corrupt execution record: %w", err)
	}
	return r, nil
}

func scanExecution(r Rows) (*store.Run, error) {
	var doc []byte
	if err := r.Scan(&doc); err != nil {
		return nil, err
	}
	return decodeExecution(doc)
}

// records returns the executions of runs.
func records(runs []*store.Run, err error) ([]*corral.Execution, error) {
	out := make([]*corral.Execution, len(runs))
	for i, r := range runs {
		out[i] = r.Execution
	}
	return out, err
}

// GetExecution implements store.Store.
func (s *Store[TTx]) GetExecution(ctx context.Context, id string) (*corral.Execution, error) {
	r, err := s.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.Execution, nil
}

// GetRun implements store.Store.
func (s *Store[TTx]) GetRun(ctx context.Context, id string) (*store.Run, error) {
	return s.getExecution(ctx, s.db.Read(), id, false)
}

// RunningOn implements store.Store.
func (s *Store[TTx]) RunningOn(ctx context.Context, workerID string) ([]*store.Run, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT doc FROM corral_executions WHERE status = 'running' AND worker_id = $1 ORDER BY created_at, id`, workerID)
	return collect(rows, err, scanExecution)
}

// ListExecutions implements store.Store. The cursor is the creation time
// (microseconds since the epoch) and id of the last execution returned.
func (s *Store[TTx]) ListExecutions(ctx context.Context, f store.ExecutionFilter) ([]*corral.Execution, string, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, store.MaxPage)
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
		ph := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			ph[i] = arg(string(st))
		}
		where = append(where, "status IN ("+strings.Join(ph, ", ")+")")
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
		us, id, err := parseCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		// (created_at, id) before the cursor's, written so that both
		// databases scan an index range on created_at.
		t := arg(time.UnixMicro(us).UTC())
		where = append(where, "created_at <= "+t+" AND (created_at < "+t+" OR id < "+arg(id)+")")
	}
	q := `SELECT created_at, ` + s.summary + ` FROM corral_executions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT " + arg(limit+1)
	type listed struct {
		e       *store.Run
		created time.Time
	}
	rows, err := s.db.Read().Query(ctx, q, args...)
	page, err := collect(rows, err, func(r Rows) (listed, error) {
		var l listed
		var doc []byte
		if err := r.Scan(&l.created, &doc); err != nil {
			return l, err
		}
		l.e, err = decodeExecution(doc)
		return l, err
	})
	if err != nil {
		return nil, "", err
	}
	out := make([]*corral.Execution, 0, min(len(page), limit))
	for _, l := range page[:min(len(page), limit)] {
		out = append(out, l.e.Execution)
	}
	next := ""
	if len(page) > limit {
		last := page[limit-1]
		next = cursor(last.created, last.e.ID)
	}
	return out, next, nil
}

// A listing's cursor is the creation time (microseconds since the epoch)
// and id of the last record of the page.
func cursor(created time.Time, id string) string {
	return strconv.FormatInt(created.UnixMicro(), 10) + "_" + id
}

func parseCursor(c string) (int64, string, error) {
	ts, id, ok := strings.Cut(c, "_")
	us, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("cursor %q is not one this service returned: start the listing again without it: %w", c, store.ErrBadCursor)
	}
	return us, id, nil
}

// Slots implements store.Store.
func (s *Store[TTx]) Slots(ctx context.Context, agent string) ([]corral.Slot, error) {
	if _, err := s.getAgent(ctx, s.db.Read(), agent, false); err != nil {
		return nil, err
	}
	rows, err := s.db.Read().Query(ctx, `SELECT slot_no, execution_id, acquired_at FROM corral_slots WHERE agent = $1 ORDER BY slot_no`, agent)
	out, err := collect(rows, err, func(r Rows) (corral.Slot, error) {
		var sl corral.Slot
		err := r.Scan(&sl.No, &sl.ExecutionID, &sl.Since)
		sl.Since = sl.Since.UTC()
		return sl, err
	})
	if out == nil && err == nil {
		out = []corral.Slot{}
	}
	return out, err
}

// Stats implements store.Store.
func (s *Store[TTx]) Stats(ctx context.Context) ([]corral.AgentStats, error) {
	agents, err := s.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*corral.AgentStats{}
	out := make([]corral.AgentStats, len(agents))
	for i, a := range agents {
		out[i] = corral.AgentStats{Agent: a.Name, Capacity: a.MaxParallelTasks, ByStatus: map[corral.Status]int{}}
		byName[a.Name] = &out[i]
	}
	var agent, status string
	var n int
	rows, err := s.db.Read().Query(ctx, `SELECT agent, status, count(*) FROM corral_executions GROUP BY agent, status`)
	err = each(rows, err, func(r Rows) error {
		if err := r.Scan(&agent, &status, &n); err != nil {
			return err
		}
		if st := byName[agent]; st != nil {
			st.ByStatus[corral.Status(status)] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows, err = s.db.Read().Query(ctx, `SELECT agent, count(*) FROM corral_slots GROUP BY agent`)
	err = each(rows, err, func(r Rows) error {
		if err := r.Scan(&agent, &n); err != nil {
			return err
		}
		if st := byName[agent]; st != nil {
			st.SlotsUsed = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
