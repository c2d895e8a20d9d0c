package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/corralrun/corral"

	"github.com/corralrun/corral/internal/dispatch"
	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/store"
)

// CreateAgent implements store.Store. The count and the insert share a
// transaction; on PostgreSQL, agents created at the same moment through
// different workers may pass the limit by as many.
func (s *Store[TTx]) CreateAgent(ctx context.Context, a *corral.Agent) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx Tx[TTx]) error {
		if max := setting.Or(s.limits.MaxAgents, store.DefaultMaxAgents); max > 0 {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_agents`).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return fmt.Errorf("%d agents exist, the most this service keeps: delete some first: %w", n, store.ErrLimit)
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO corral_agents (name, doc, created_at) VALUES ($1, $2, $3)`, a.Name, string(doc), a.CreatedAt)
		if err != nil && s.db.IsUnique(err) {
			return fmt.Errorf("agent %q: %w", a.Name, store.ErrExists)
		}
		return err
	})
}

// GetAgent implements store.Store.
func (s *Store[TTx]) GetAgent(ctx context.Context, name string) (*corral.Agent, error) {
	return s.getAgent(ctx, s.db.Read(), name, false)
}

// getAgent reads an agent; lock takes its row lock, which serializes the
// admissions and releases of that agent across workers.
func (s *Store[TTx]) getAgent(ctx context.Context, ex Executor, name string, lock bool) (*corral.Agent, error) {
	return getDoc[corral.Agent](ctx, ex, `SELECT doc FROM corral_agents WHERE name = $1`+s.lockIf(lock), "agent", name)
}

// ListAgents implements store.Store.
func (s *Store[TTx]) ListAgents(ctx context.Context) ([]*corral.Agent, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT doc FROM corral_agents ORDER BY name`)
	return collect(rows, err, func(r Rows) (*corral.Agent, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		a := new(corral.Agent)
		return a, json.Unmarshal(doc, a)
	})
}

// UpdateAgent implements store.Store.
func (s *Store[TTx]) UpdateAgent(ctx context.Context, a *corral.Agent) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.txLocal(ctx, func(tx Tx[TTx], local *dispatch.Reservations) error {
		n, err := tx.Exec(ctx, `UPDATE corral_agents SET doc = $1 WHERE name = $2`, string(doc), a.Name)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("agent %q: %w", a.Name, store.ErrNotFound)
		}
		// The UPDATE holds the agent's row lock, as admission does.
		*local, err = s.promote(ctx, tx, a, a.UpdatedAt)
		return err
	})
}

// DeleteAgent implements store.Store.
func (s *Store[TTx]) DeleteAgent(ctx context.Context, name string) error {
	return s.db.Tx(ctx, func(tx Tx[TTx]) error {
		if _, err := s.getAgent(ctx, tx, name, true); err != nil {
			return err
		}
		var busy int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corral_executions WHERE agent = $1 AND status IN ('queued','waiting','running')`, name).Scan(&busy); err != nil {
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
