package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/dispatch"
)

// AddSpend implements store.Store.
func (s *Store[TTx]) AddSpend(ctx context.Context, agent string, windows []corral.Window, cost float64, tokens int64) ([]corral.WindowSpend, error) {
	if len(windows) == 0 {
		return nil, nil
	}
	var out []corral.WindowSpend
	err := s.db.Tx(ctx, func(tx Tx[TTx]) error {
		out = out[:0]
		now := time.Now().UTC()
		for _, w := range windows {
			ws := corral.WindowSpend{Window: w}
			err := tx.QueryRow(ctx, `INSERT INTO corral_spend (agent, window_key, cost_usd, tokens, updated_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (agent, window_key) DO UPDATE SET cost_usd = corral_spend.cost_usd + excluded.cost_usd,
					tokens = corral_spend.tokens + excluded.tokens, updated_at = excluded.updated_at
				RETURNING cost_usd, tokens`, agent, w.Key, cost, tokens, now).Scan(&ws.CostUSD, &ws.Tokens)
			if err != nil {
				return err
			}
			out = append(out, ws)
		}
		return nil
	})
	return out, err
}

// WindowSpend implements store.Store.
func (s *Store[TTx]) WindowSpend(ctx context.Context, agent string, windows []corral.Window) ([]corral.WindowSpend, error) {
	return windowSpend(ctx, s.db.Read(), agent, windows)
}

func windowSpend(ctx context.Context, ex Executor, agent string, windows []corral.Window) ([]corral.WindowSpend, error) {
	out := make([]corral.WindowSpend, 0, len(windows))
	for _, w := range windows {
		ws := corral.WindowSpend{Window: w}
		err := ex.QueryRow(ctx, `SELECT cost_usd, tokens FROM corral_spend WHERE agent = $1 AND window_key = $2`, agent, w.Key).Scan(&ws.CostUSD, &ws.Tokens)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, nil
}

// budgetSpent says why agent a's budget lets no run start at now, and
// when it reopens; "" when it does.
func budgetSpent(ctx context.Context, ex Executor, a *corral.Agent, now time.Time) (string, time.Time, error) {
	spends, err := windowSpend(ctx, ex, a.Name, a.Budget.Windows(now))
	if err != nil {
		return "", time.Time{}, err
	}
	for _, w := range spends {
		if spent, why := w.Spent(); spent {
			return why, w.End, nil
		}
	}
	return "", time.Time{}, nil
}

// PromoteQueued implements store.Store.
func (s *Store[TTx]) PromoteQueued(ctx context.Context, agent string) (int, error) {
	n := 0
	err := s.txLocal(ctx, func(tx Tx[TTx], local *dispatch.Reservations) error {
		a, err := s.getAgent(ctx, tx, agent, true)
		if err != nil {
			return err
		}
		before, err := countSlots(ctx, tx, agent)
		if err != nil {
			return err
		}
		if *local, err = s.promote(ctx, tx, a, time.Now().UTC()); err != nil {
			return err
		}
		after, err := countSlots(ctx, tx, agent)
		n = after - before
		return err
	})
	return n, err
}

// PruneSpend implements store.Store.
func (s *Store[TTx]) PruneSpend(ctx context.Context, before time.Time) (int, error) {
	n, err := s.db.Write(ctx, `DELETE FROM corral_spend WHERE updated_at < $1`, before.UTC())
	return int(n), err
}
