package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral/store"
)

func (s *Store) CreateAgent(ctx context.Context, a *store.Agent) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO corral_agents (name, doc, created_at) VALUES ($1, $2, $3)`, a.Name, doc, a.CreatedAt)
	if isUnique(err) {
		return fmt.Errorf("agent %q: %w", a.Name, store.ErrExists)
	}
	return err
}

func (s *Store) GetAgent(ctx context.Context, name string) (*store.Agent, error) {
	return getAgent(ctx, s.pool, name, false)
}

// getAgent reads an agent; lock takes its row lock, which serializes the
// admissions and releases of that agent across workers.
func getAgent(ctx context.Context, q querier, name string, lock bool) (*store.Agent, error) {
	sql := `SELECT doc FROM corral_agents WHERE name = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	var doc []byte
	err := q.QueryRow(ctx, sql, name).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	a := new(store.Agent)
	if err := json.Unmarshal(doc, a); err != nil {
		return nil, fmt.Errorf("agent %q: corrupt record: %w", name, err)
	}
	return a, nil
}

func (s *Store) ListAgents(ctx context.Context) ([]*store.Agent, error) {
	rows, err := s.pool.Query(ctx, `SELECT doc FROM corral_agents ORDER BY name`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Agent, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		a := new(store.Agent)
		return a, json.Unmarshal(doc, a)
	})
}

func (s *Store) UpdateAgent(ctx context.Context, a *store.Agent) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE corral_agents SET doc = $1 WHERE name = $2`, doc, a.Name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("agent %q: %w", a.Name, store.ErrNotFound)
		}
		// The UPDATE holds the agent's row lock, as admission does.
		return s.promote(ctx, tx, a, a.UpdatedAt)
	})
}

func (s *Store) DeleteAgent(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := getAgent(ctx, tx, name, true); err != nil {
			return err
		}
		var busy int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_executions WHERE agent = $1 AND status IN ('queued','running')`, name).Scan(&busy); err != nil {
			return err
		}
		if busy > 0 {
			return fmt.Errorf("agent %q has %d queued or running executions; cancel them or wait: %w", name, busy, store.ErrBusy)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM corral_agents WHERE name = $1`, name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM corral_schedules WHERE agent = $1`, name)
		return err
	})
}
