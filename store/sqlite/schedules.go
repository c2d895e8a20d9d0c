package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral/store"
)

func putSchedule(ctx context.Context, q dbq, sc *store.Schedule, insert bool) error {
	doc, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	enabled := 0
	if sc.Enabled {
		enabled = 1
	}
	if insert {
		_, err = q.ExecContext(ctx, `INSERT INTO corral_schedules (id, agent, enabled, next_fire_at, created_at, doc) VALUES (?, ?, ?, ?, ?, ?)`,
			sc.ID, sc.Agent, enabled, nullMicros(sc.NextFireAt), micros(sc.CreatedAt), string(doc))
		if isUnique(err) {
			return fmt.Errorf("schedule %q: %w", sc.ID, store.ErrExists)
		}
		return err
	}
	res, err := q.ExecContext(ctx, `UPDATE corral_schedules SET enabled = ?, next_fire_at = ?, doc = ? WHERE id = ?`,
		enabled, nullMicros(sc.NextFireAt), string(doc), sc.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("schedule %q: %w", sc.ID, store.ErrNotFound)
	}
	return nil
}

func getSchedule(ctx context.Context, q querier, id string) (*store.Schedule, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM corral_schedules WHERE id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("schedule %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	sc := new(store.Schedule)
	return sc, json.Unmarshal([]byte(doc), sc)
}

func (s *Store) CreateSchedule(ctx context.Context, sc *store.Schedule) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := getAgent(ctx, s.w(tx), sc.Agent); err != nil {
			return err
		}
		return putSchedule(ctx, s.w(tx), sc, true)
	})
}

func (s *Store) GetSchedule(ctx context.Context, id string) (*store.Schedule, error) {
	return getSchedule(ctx, s.r(), id)
}

func (s *Store) ListSchedules(ctx context.Context, agent string) ([]*store.Schedule, error) {
	q := `SELECT doc FROM corral_schedules ORDER BY created_at, id`
	var args []any
	if agent != "" {
		if _, err := getAgent(ctx, s.r(), agent); err != nil {
			return nil, err
		}
		q = `SELECT doc FROM corral_schedules WHERE agent = ? ORDER BY created_at, id`
		args = append(args, agent)
	}
	return s.schedules(ctx, q, args...)
}

func (s *Store) schedules(ctx context.Context, q string, args ...any) ([]*store.Schedule, error) {
	rows, err := s.r().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*store.Schedule{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		sc := new(store.Schedule)
		if err := json.Unmarshal([]byte(doc), sc); err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

func (s *Store) UpdateSchedule(ctx context.Context, sc *store.Schedule) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return putSchedule(ctx, s.w(tx), sc, false) })
}

func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := s.w(tx).ExecContext(ctx, `DELETE FROM corral_schedules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("schedule %q: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

func (s *Store) NextFire(ctx context.Context) (time.Time, bool, error) {
	var v sql.NullInt64
	err := s.r().QueryRowContext(ctx, `SELECT min(next_fire_at) FROM corral_schedules WHERE enabled = 1 AND next_fire_at IS NOT NULL`).Scan(&v)
	if err != nil || !v.Valid {
		return time.Time{}, false, err
	}
	return fromMicros(v.Int64), true, nil
}

func (s *Store) DueSchedules(ctx context.Context, now time.Time) ([]*store.Schedule, error) {
	return s.schedules(ctx, `SELECT doc FROM corral_schedules WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at`, micros(now))
}

func (s *Store) FireSchedule(ctx context.Context, id string, expected, next time.Time, sub *store.Submission) (*store.Admission, error) {
	var adm *store.Admission
	err := s.tx(ctx, func(tx *sql.Tx) error {
		sc, err := getSchedule(ctx, s.w(tx), id)
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
		return putSchedule(ctx, s.w(tx), sc, false)
	})
	return adm, err
}
