package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/corralrun/corral/store"
)

func (s *Store) RegisterWorker(ctx context.Context, w *store.Worker) error {
	doc, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.w(tx).ExecContext(ctx, `INSERT INTO corral_workers (id, heartbeat_at, doc) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, doc = excluded.doc`,
			w.ID, micros(w.Heartbeat), string(doc))
		return err
	})
}

func (s *Store) Heartbeat(ctx context.Context, workerID string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := s.w(tx).ExecContext(ctx, `UPDATE corral_workers SET heartbeat_at = ? WHERE id = ?`, micros(now), workerID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("worker %s: %w (declared dead by another worker?)", workerID, store.ErrNotFound)
		}
		return nil
	})
}

func (s *Store) Workers(ctx context.Context) ([]*store.Worker, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT heartbeat_at, doc FROM corral_workers ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Worker
	for rows.Next() {
		var hb int64
		var doc string
		if err := rows.Scan(&hb, &doc); err != nil {
			return nil, err
		}
		w := new(store.Worker)
		if err := json.Unmarshal([]byte(doc), w); err != nil {
			return nil, err
		}
		w.Heartbeat = fromMicros(hb)
		out = append(out, w)
	}
	return out, rows.Err()
}

func (s *Store) DeleteWorker(ctx context.Context, workerID string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.w(tx).ExecContext(ctx, `DELETE FROM corral_workers WHERE id = ?`, workerID)
		return err
	})
}
