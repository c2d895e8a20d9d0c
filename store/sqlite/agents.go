package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/corralrun/corral/store"
)

func (s *Store) CreateAgent(ctx context.Context, a *store.Agent) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.w(tx).ExecContext(ctx, `INSERT INTO corral_agents (name, doc, created_at) VALUES (?, ?, ?)`,
			a.Name, string(doc), micros(a.CreatedAt))
		if err != nil && isUnique(err) {
			return fmt.Errorf("agent %q: %w", a.Name, store.ErrExists)
		}
		return err
	})
}

func (s *Store) GetAgent(ctx context.Context, name string) (*store.Agent, error) {
	return getAgent(ctx, s.r(), name)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func getAgent(ctx context.Context, q querier, name string) (*store.Agent, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM corral_agents WHERE name = ?`, name).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	a := new(store.Agent)
	if err := json.Unmarshal([]byte(doc), a); err != nil {
		return nil, fmt.Errorf("agent %q: corrupt record: %w", name, err)
	}
	return a, nil
}

func (s *Store) ListAgents(ctx context.Context) ([]*store.Agent, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT doc FROM corral_agents ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Agent
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		a := new(store.Agent)
		if err := json.Unmarshal([]byte(doc), a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s *Store) UpdateAgent(ctx context.Context, a *store.Agent) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := s.w(tx).ExecContext(ctx, `UPDATE corral_agents SET doc = ? WHERE name = ?`, string(doc), a.Name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("agent %q: %w", a.Name, store.ErrNotFound)
		}
		return s.promote(ctx, tx, a.Name, a.UpdatedAt)
	})
}

func (s *Store) DeleteAgent(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var busy int
		if err := s.w(tx).QueryRowContext(ctx, `SELECT count(*) FROM corral_executions WHERE agent = ? AND status IN ('queued','running')`, name).Scan(&busy); err != nil {
			return err
		}
		if busy > 0 {
			return fmt.Errorf("agent %q has %d queued or running executions; cancel them or wait: %w", name, busy, store.ErrBusy)
		}
		res, err := s.w(tx).ExecContext(ctx, `DELETE FROM corral_agents WHERE name = ?`, name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
		}
		_, err = s.w(tx).ExecContext(ctx, `DELETE FROM corral_schedules WHERE agent = ?`, name)
		return err
	})
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
