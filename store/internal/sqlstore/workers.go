package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/corralrun/corral/store"
)

// RegisterWorker implements store.Store.
func (s *Store[TTx]) RegisterWorker(ctx context.Context, w *store.Worker) error {
	doc, err := json.Marshal(w)
	if err != nil {
		return err
	}
	_, err = s.db.Write(ctx, `INSERT INTO corral_workers (id, heartbeat_at, doc) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, doc = excluded.doc`, w.ID, w.Heartbeat, string(doc))
	return err
}

// Heartbeat implements store.Store: the lease is the heartbeat_at
// column; the document keeps the registration.
func (s *Store[TTx]) Heartbeat(ctx context.Context, workerID string, now time.Time) error {
	n, err := s.db.Write(ctx, `UPDATE corral_workers SET heartbeat_at = $1 WHERE id = $2`, now, workerID)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("worker %s: %w (declared dead by another worker?)", workerID, store.ErrNotFound)
	}
	return nil
}

// Workers implements store.Store.
func (s *Store[TTx]) Workers(ctx context.Context) ([]*store.Worker, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT heartbeat_at, doc FROM corral_workers ORDER BY id`)
	return collect(rows, err, func(r Rows) (*store.Worker, error) {
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

// DeleteWorker implements store.Store.
func (s *Store[TTx]) DeleteWorker(ctx context.Context, workerID string) error {
	_, err := s.db.Write(ctx, `DELETE FROM corral_workers WHERE id = $1`, workerID)
	return err
}
