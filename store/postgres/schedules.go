package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral/store"
)

func putSchedule(ctx context.Context, q querier, sc *store.Schedule, insert bool) error {
	doc, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	if insert {
		_, err = q.Exec(ctx, `INSERT INTO corral_schedules (id, agent, enabled, next_fire_at, created_at, doc) VALUES ($1, $2, $3, $4, $5, $6)`,
			sc.ID, sc.Agent, sc.Enabled, nullTime(sc.NextFireAt), sc.CreatedAt, doc)
		if isUnique(err) {
			return fmt.Errorf("schedule %q: %w", sc.ID, store.ErrExists)
		}
		return err
	}
	tag, err := q.Exec(ctx, `UPDATE corral_schedules SET enabled = $1, next_fire_at = $2, doc = $3 WHERE id = $4`,
		sc.Enabled, nullTime(sc.NextFireAt), doc, sc.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("schedule %q: %w", sc.ID, store.ErrNotFound)
	}
	return nil
}

func getSchedule(ctx context.Context, q querier, id string, lock bool) (*store.Schedule, error) {
	sql := `SELECT doc FROM corral_schedules WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	var doc []byte
	err := q.QueryRow(ctx, sql, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("schedule %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	sc := new(store.Schedule)
	return sc, json.Unmarshal(doc, sc)
}

func (s *Store) CreateSchedule(ctx context.Context, sc *store.Schedule) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := getAgent(ctx, tx, sc.Agent, false); err != nil {
			return err
		}
		return putSchedule(ctx, tx, sc, true)
	})
}

func (s *Store) GetSchedule(ctx context.Context, id string) (*store.Schedule, error) {
	return getSchedule(ctx, s.pool, id, false)
}

func (s *Store) ListSchedules(ctx context.Context, agent string) ([]*store.Schedule, error) {
	if agent == "" {
		return s.schedules(ctx, `SELECT doc FROM corral_schedules ORDER BY created_at, id`)
	}
	if _, err := getAgent(ctx, s.pool, agent, false); err != nil {
		return nil, err
	}
	return s.schedules(ctx, `SELECT doc FROM corral_schedules WHERE agent = $1 ORDER BY created_at, id`, agent)
}

func (s *Store) schedules(ctx context.Context, q string, args ...any) ([]*store.Schedule, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Schedule, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		sc := new(store.Schedule)
		return sc, json.Unmarshal(doc, sc)
	})
	if out == nil && err == nil {
		out = []*store.Schedule{}
	}
	return out, err
}

func (s *Store) UpdateSchedule(ctx context.Context, sc *store.Schedule) error {
	return putSchedule(ctx, s.pool, sc, false)
}

func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM corral_schedules WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("schedule %q: %w", id, store.ErrNotFound)
	}
	return nil
}

func (s *Store) NextFire(ctx context.Context) (time.Time, bool, error) {
	var v *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(next_fire_at) FROM corral_schedules WHERE enabled AND next_fire_at IS NOT NULL`).Scan(&v)
	if err != nil || v == nil {
		return time.Time{}, false, err
	}
	return v.UTC(), true, nil
}

func (s *Store) DueSchedules(ctx context.Context, now time.Time) ([]*store.Schedule, error) {
	return s.schedules(ctx, `SELECT doc FROM corral_schedules WHERE enabled AND next_fire_at IS NOT NULL AND next_fire_at <= $1 ORDER BY next_fire_at`, now)
}

// FireSchedule locks the schedule's row, so of many workers firing the
// same time one sees the expected fire time and the others see it moved.
func (s *Store) FireSchedule(ctx context.Context, id string, expected, next time.Time, sub *store.Submission) (*store.Admission, error) {
	var adm *store.Admission
	err := s.tx(ctx, func(tx pgx.Tx) error {
		adm = nil
		sc, err := getSchedule(ctx, tx, id, true)
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
		return putSchedule(ctx, tx, sc, false)
	})
	return adm, err
}
