package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/corralrun/corral"

	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/store"
)

func (s *Store[TTx]) putSchedule(ctx context.Context, ex Executor, sc *corral.Schedule, insert bool) error {
	doc, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	if insert {
		_, err = ex.Exec(ctx, `INSERT INTO corral_schedules (id, agent, enabled, next_fire_at, created_at, doc) VALUES ($1, $2, $3, $4, $5, $6)`,
			sc.ID, sc.Agent, sc.Enabled, nullTime(sc.NextFireAt), sc.CreatedAt, string(doc))
		if err != nil && s.db.IsUnique(err) {
			return fmt.Errorf("schedule %q: %w", sc.ID, store.ErrExists)
		}
		return err
	}
	n, err := ex.Exec(ctx, `UPDATE corral_schedules SET enabled = $1, next_fire_at = $2, doc = $3 WHERE id = $4`,
		sc.Enabled, nullTime(sc.NextFireAt), string(doc), sc.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("schedule %q: %w", sc.ID, store.ErrNotFound)
	}
	return nil
}

// getSchedule reads a schedule; lock takes its row lock.
func (s *Store[TTx]) getSchedule(ctx context.Context, ex Executor, id string, lock bool) (*corral.Schedule, error) {
	return getDoc[corral.Schedule](ctx, ex, `SELECT doc FROM corral_schedules WHERE id = $1`+s.lockIf(lock), "schedule", id)
}

// CreateSchedule implements store.Store. The agent's row lock
// serializes the count with other creations for the agent.
func (s *Store[TTx]) CreateSchedule(ctx context.Context, sc *corral.Schedule) error {
	return s.db.Tx(ctx, func(tx Tx[TTx]) error {
		if _, err := s.getAgent(ctx, tx, sc.Agent, true); err != nil {
			return err
		}
		if max := setting.Or(s.limits.MaxSchedulesPerAgent, store.DefaultMaxSchedulesPerAgent); max > 0 {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_schedules WHERE agent = $1`, sc.Agent).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return fmt.Errorf("agent %s has %d schedules, the most it may have: delete some first: %w", sc.Agent, n, store.ErrLimit)
			}
		}
		return s.putSchedule(ctx, tx, sc, true)
	})
}

// GetSchedule implements store.Store.
func (s *Store[TTx]) GetSchedule(ctx context.Context, id string) (*corral.Schedule, error) {
	return s.getSchedule(ctx, s.db.Read(), id, false)
}

// ListSchedules implements store.Store: oldest first, the cursor being
// the creation time and id of the last schedule of the page.
func (s *Store[TTx]) ListSchedules(ctx context.Context, f store.ScheduleFilter) ([]*corral.Schedule, string, error) {
	n := f.Limit
	if n <= 0 {
		n = 100
	}
	n = min(n, store.MaxPage)
	if f.Agent != "" {
		if _, err := s.getAgent(ctx, s.db.Read(), f.Agent, false); err != nil {
			return nil, "", err
		}
	}
	var us int64
	var after string
	if f.Cursor != "" {
		var err error
		if us, after, err = parseCursor(f.Cursor); err != nil {
			return nil, "", err
		}
	}
	// One statement for every case: an empty agent or cursor matches all.
	list, err := s.schedules(ctx, `SELECT doc FROM corral_schedules
		WHERE ($1 = '' OR agent = $1)
		AND ($2 = '' OR created_at > $3 OR (created_at = $3 AND id > $2))
		ORDER BY created_at, id LIMIT $4`, f.Agent, after, time.UnixMicro(us).UTC(), n+1)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(list) > n {
		list = list[:n]
		last := list[n-1]
		next = cursor(last.CreatedAt, last.ID)
	}
	return list, next, nil
}

// UpdateSchedule implements store.Store.
func (s *Store[TTx]) UpdateSchedule(ctx context.Context, sc *corral.Schedule) error {
	return s.db.Tx(ctx, func(tx Tx[TTx]) error { return s.putSchedule(ctx, tx, sc, false) })
}

// DeleteSchedule implements store.Store.
func (s *Store[TTx]) DeleteSchedule(ctx context.Context, id string) error {
	n, err := s.db.Write(ctx, `DELETE FROM corral_schedules WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("schedule %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// NextFire implements store.Store.
func (s *Store[TTx]) NextFire(ctx context.Context) (time.Time, bool, error) {
	var v *time.Time
	err := s.db.Read().QueryRow(ctx, `SELECT min(next_fire_at) FROM corral_schedules WHERE enabled = true AND next_fire_at IS NOT NULL`).Scan(&v)
	if err != nil || v == nil {
		return time.Time{}, false, err
	}
	return v.UTC(), true, nil
}

// DueSchedules implements store.Store.
func (s *Store[TTx]) DueSchedules(ctx context.Context, now time.Time) ([]*corral.Schedule, error) {
	return s.schedules(ctx, `SELECT doc FROM corral_schedules WHERE enabled = true AND next_fire_at IS NOT NULL AND next_fire_at <= $1 ORDER BY next_fire_at`, now)
}

// FireSchedule implements store.Store. It locks the schedule's row, so
// of many workers firing the same time one sees the expected fire time
// and the others see it moved.
func (s *Store[TTx]) FireSchedule(ctx context.Context, id string, expected, next time.Time, sub *store.Submission) (*store.Admission, error) {
	var adm *store.Admission
	err := s.db.Tx(ctx, func(tx Tx[TTx]) error {
		adm = nil
		sc, err := s.getSchedule(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if !sc.Enabled || sc.NextFireAt == nil || !sc.NextFireAt.Equal(expected) {
			return fmt.Errorf("schedule %s fire at %s already taken: %w", id, expected.Format(time.RFC3339), store.ErrConflict)
		}
		now := time.Now().UTC()
		sc.NextFireAt = &next
		if next.IsZero() {
			sc.NextFireAt = nil
		}
		if sub != nil {
			adm, err = s.admit(ctx, tx, sub, now)
			if err != nil {
				return err
			}
			fired := expected
			sc.LastFireAt = &fired
			sc.LastExecution = adm.Execution.ID
		}
		return s.putSchedule(ctx, tx, sc, false)
	})
	return adm, err
}

func (s *Store[TTx]) schedules(ctx context.Context, q string, args ...any) ([]*corral.Schedule, error) {
	rows, err := s.db.Read().Query(ctx, q, args...)
	out, err := collect(rows, err, func(r Rows) (*corral.Schedule, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		sc := new(corral.Schedule)
		return sc, json.Unmarshal(doc, sc)
	})
	if out == nil && err == nil {
		out = []*corral.Schedule{}
	}
	return out, err
}
