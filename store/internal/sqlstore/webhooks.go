package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// defaultHooks are the webhooks every agent's events also go to.
type defaultHooks struct {
	mu    sync.Mutex
	hooks []corral.Webhook
}

// SetDefaultWebhooks implements store.Store.
func (s *Store[TTx]) SetDefaultWebhooks(hooks []corral.Webhook) {
	s.defaults.mu.Lock()
	s.defaults.hooks = append([]corral.Webhook(nil), hooks...)
	s.defaults.mu.Unlock()
}

// hooksOf returns the webhooks of agent a: its own and the defaults.
func (s *Store[TTx]) hooksOf(a *corral.Agent) []corral.Webhook {
	s.defaults.mu.Lock()
	defer s.defaults.mu.Unlock()
	out := append([]corral.Webhook(nil), s.defaults.hooks...)
	if a != nil {
		out = append(out, a.Webhooks...)
	}
	return out
}

// eventOf is the event that e's new status makes, "" for none.
func eventOf(e *corral.Execution) string {
	switch e.Status {
	case corral.StatusQueued:
		return corral.EventQueued
	case corral.StatusSucceeded:
		return corral.EventSucceeded
	case corral.StatusFailed:
		return corral.EventFailed
	case corral.StatusCancelled:
		return corral.EventCancelled
	case corral.StatusInterrupted:
		return corral.EventInterrupted
	}
	return ""
}

// eventBody is the JSON a delivery of event about e carries: the event
// and the execution as a listing shows it (no output bodies).
func eventBody(event string, e *corral.Execution, at time.Time) ([]byte, error) {
	sum := *e
	sum.Stdout, sum.Stderr, sum.Result, sum.Summary = "", "", "", true
	if len(sum.Input) > corral.SummaryChars {
		sum.Input = sum.Input[:corral.SummaryChars]
	}
	return json.Marshal(map[string]any{"event": event, "agent": e.Agent, "created_at": at, "execution": &sum})
}

// emit writes, inside tx (which holds e's row lock), the deliveries of
// event about e to the webhooks of agent a that want it. a may be nil: it
// is read then, when e is hooked.
func (s *Store[TTx]) emit(ctx context.Context, tx Tx[TTx], a *corral.Agent, e *store.Run, event string) error {
	if event == "" || !e.Hooked {
		return nil
	}
	if a == nil {
		var err error
		if a, err = s.getAgent(ctx, tx, e.Agent, false); err != nil {
			a = nil // gone: the default webhooks still hear of it
		}
	}
	now := time.Now().UTC()
	body, err := eventBody(event, e.Execution, now)
	if err != nil {
		return err
	}
	var seq int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM corral_webhook_deliveries WHERE stream = $1`, e.ID).Scan(&seq); err != nil {
		return err
	}
	return s.insertDeliveries(ctx, tx, s.hooksOf(a), e.ID, e.ID, e.Agent, event, body, seq, now)
}

func (s *Store[TTx]) insertDeliveries(ctx context.Context, ex Executor, hooks []corral.Webhook, stream, execID, agent, event string, body []byte, seq int64, now time.Time) error {
	for _, h := range hooks {
		if !h.Wants(event) {
			continue
		}
		if _, err := ex.Exec(ctx, `INSERT INTO corral_webhook_deliveries
			(id, stream, seq, execution_id, agent, event, url, secret, body, status, attempts, next_at, locked_until, last_status, last_error, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', 0, $10, $10, 0, '', $10)`,
			store.NewID(now), stream, seq, execID, agent, event, h.URL, h.Secret, string(body), now); err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
	}
	return nil
}

// EnqueueEvent implements store.Store.
func (s *Store[TTx]) EnqueueEvent(ctx context.Context, agent, event string, body []byte) error {
	a, err := s.GetAgent(ctx, agent)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	return s.db.Tx(ctx, func(tx Tx[TTx]) error {
		return s.insertDeliveries(ctx, tx, s.hooksOf(a), "agent:"+agent, "", agent, event, body, now.UnixNano(), now)
	})
}

const deliveryColumns = `id, execution_id, agent, event, url, secret, body, status, attempts, last_status, last_error, created_at, next_at, delivered_at`

func scanDelivery(r Rows) (*corral.WebhookDelivery, error) {
	d := &corral.WebhookDelivery{}
	var body string
	var next time.Time
	if err := r.Scan(&d.ID, &d.ExecutionID, &d.Agent, &d.Event, &d.URL, &d.Secret, &body, &d.Status, &d.Attempts, &d.LastStatus, &d.LastError, &d.CreatedAt, &next, &d.DeliveredAt); err != nil {
		return nil, err
	}
	d.Body = []byte(body)
	if d.Status == "pending" {
		d.NextAt = &next
	}
	return d, nil
}

// ClaimDeliveries implements store.Store.
func (s *Store[TTx]) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*corral.WebhookDelivery, error) {
	var out []*corral.WebhookDelivery
	err := s.db.Tx(ctx, func(tx Tx[TTx]) error {
		rows, err := tx.Query(ctx, `SELECT `+deliveryColumns+` FROM corral_webhook_deliveries d
			WHERE d.status = 'pending' AND d.next_at <= $1 AND d.locked_until <= $1
			AND NOT EXISTS (SELECT 1 FROM corral_webhook_deliveries p WHERE p.stream = d.stream AND p.url = d.url AND p.status = 'pending' AND p.seq < d.seq)
			ORDER BY d.next_at, d.id LIMIT $2`+s.skipLocked, now.UTC(), limit)
		if out, err = collect(rows, err, scanDelivery); err != nil {
			return err
		}
		for _, d := range out {
			if _, err := tx.Exec(ctx, `UPDATE corral_webhook_deliveries SET locked_until = $1 WHERE id = $2`, now.Add(lease).UTC(), d.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// RecordDelivery implements store.Store.
func (s *Store[TTx]) RecordDelivery(ctx context.Context, id string, delivered bool, status int, errText string, next time.Time) error {
	now := time.Now().UTC()
	switch {
	case delivered:
		_, err := s.db.Write(ctx, `UPDATE corral_webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_status = $2, last_error = '', delivered_at = $3, locked_until = $3 WHERE id = $1`, id, status, now)
		return err
	case next.IsZero():
		_, err := s.db.Write(ctx, `UPDATE corral_webhook_deliveries SET status = 'failed', attempts = attempts + 1, last_status = $2, last_error = $3, locked_until = $4 WHERE id = $1`, id, status, clipText(errText), now)
		return err
	}
	_, err := s.db.Write(ctx, `UPDATE corral_webhook_deliveries SET attempts = attempts + 1, last_status = $2, last_error = $3, next_at = $4, locked_until = $5 WHERE id = $1`, id, status, clipText(errText), next.UTC(), now)
	return err
}

func clipText(s string) string {
	if len(s) > 1024 {
		return s[:1024]
	}
	return s
}

// Deliveries implements store.Store.
func (s *Store[TTx]) Deliveries(ctx context.Context, executionID string) ([]*corral.WebhookDelivery, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT `+deliveryColumns+` FROM corral_webhook_deliveries WHERE execution_id = $1 ORDER BY seq, id`, executionID)
	return collect(rows, err, scanDelivery)
}

// PruneDeliveries implements store.Store.
func (s *Store[TTx]) PruneDeliveries(ctx context.Context, before time.Time) (int, error) {
	n, err := s.db.Write(ctx, `DELETE FROM corral_webhook_deliveries WHERE status <> 'pending' AND created_at < $1`, before.UTC())
	return int(n), err
}
