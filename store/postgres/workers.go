package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral/store"
)

func (s *Store) RegisterWorker(ctx context.Context, w *store.Worker) error {
	doc, err := json.Marshal(w)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO corral_workers (id, heartbeat_at, doc) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, doc = excluded.doc`, w.ID, w.Heartbeat, doc)
	return err
}

func (s *Store) Heartbeat(ctx context.Context, workerID string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE corral_workers SET heartbeat_at = $1 WHERE id = $2`, now, workerID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("worker %s: %w (declared dead by another worker?)", workerID, store.ErrNotFound)
	}
	return nil
}

func (s *Store) Workers(ctx context.Context) ([]*store.Worker, error) {
	rows, err := s.pool.Query(ctx, `SELECT heartbeat_at, doc FROM corral_workers ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Worker, error) {
		var hb time.Time
		var doc []byte
		if err := r.Scan(&hb, &doc); err != nil {
			return nil, err
		}
		w := new(store.Worker)
		if err := json.Unmarshal(doc, w); err != nil {
			return nil, err
		}
		w.Heartbeat = hb.UTC()
		return w, nil
	})
}

func (s *Store) DeleteWorker(ctx context.Context, workerID string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM corral_workers WHERE id = $1`, workerID)
	return err
}
