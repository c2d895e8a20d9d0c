package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/webhook"
)

// Defaults of the webhook deliveries.
const (
	DefaultWebhookTimeout  = 10 * time.Second
	DefaultWebhookRetryFor = 24 * time.Hour
	DefaultWebhookBackoff  = time.Second
	webhookMaxBackoff      = 5 * time.Minute
	webhookParallel        = 8
	webhookPoll            = 500 * time.Millisecond
	webhookKeep            = 7 * 24 * time.Hour
)

// deliverLoop delivers the outbox's deliveries as they come due: each
// worker claims a batch (leased to it, so no other worker delivers them
// meanwhile) and posts them, at most webhookParallel at once, each bounded
// by Config.WebhookTimeout: a slow or dead receiver holds up only its own
// deliveries, never a run.
func (s *Service) deliverLoop(ctx context.Context) {
	defer s.loops.Done()
	hc := &http.Client{Timeout: s.cfg.WebhookTimeout}
	defer hc.CloseIdleConnections()
	sem := make(chan struct{}, webhookParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(webhookPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		room := webhookParallel - len(sem)
		if room == 0 {
			continue
		}
		due, err := s.st.ClaimDeliveries(ctx, time.Now(), s.cfg.WebhookTimeout+30*time.Second, room)
		if err != nil {
			continue
		}
		for _, d := range due {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				s.deliver(ctx, hc, d)
			}()
		}
	}
}

// deliver posts one delivery, signed, and records how it went: a 2xx
// answer delivers it; anything else is retried with backoff until
// Config.WebhookRetryFor has passed since the event.
func (s *Service) deliver(ctx context.Context, hc *http.Client, d *corral.WebhookDelivery) {
	status, err := post(ctx, hc, d)
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err == nil {
		s.st.RecordDelivery(rctx, d.ID, true, status, "", time.Time{})
		s.metrics.Add(mWebhooks, 1, nil)
		return
	}
	var next time.Time
	if time.Since(d.CreatedAt) < s.cfg.WebhookRetryFor {
		b := min(s.cfg.WebhookBackoff<<min(d.Attempts, 20), webhookMaxBackoff)
		next = time.Now().Add(b/2 + rand.N(b/2+1))
	} else {
		s.log.Warn("gave up delivering a webhook", "url", d.URL, "event", d.Event, "execution", d.ExecutionID, "err", err)
	}
	s.st.RecordDelivery(rctx, d.ID, false, status, err.Error(), next)
	s.metrics.Add(mWebhookFailures, 1, nil)
}

// post sends d and returns the receiver's status; the error says why it
// is not delivered.
func post(ctx context.Context, hc *http.Client, d *corral.WebhookDelivery) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "corral-webhook")
	req.Header.Set("Corral-Event", d.Event)
	req.Header.Set("Corral-Delivery", d.ID)
	req.Header.Set("Corral-Signature", webhook.Sign(d.Secret, time.Now(), d.Body))
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// Deliveries returns the webhook deliveries of an execution's events.
func (s *Service) Deliveries(ctx context.Context, executionID string) ([]*corral.WebhookDelivery, error) {
	if _, err := s.st.GetExecution(ctx, executionID); err != nil {
		return nil, err
	}
	ds, err := s.st.Deliveries(ctx, executionID)
	if ds == nil {
		ds = []*corral.WebhookDelivery{}
	}
	return ds, err
}

// budgetEvent enqueues a budget window's event for agent a's webhooks.
func (s *Service) budgetEvent(a *corral.Agent, event string, w corral.WindowSpend, executionID string) {
	body, _ := json.Marshal(map[string]any{"event": event, "agent": a.Name, "created_at": time.Now().UTC(), "window": w, "execution_id": executionID})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.st.EnqueueEvent(ctx, a.Name, event, body); err != nil {
		s.log.Warn("could not enqueue a budget event", "agent", a.Name, "event", event, "err", err)
	}
}
