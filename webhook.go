package corral

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Webhook is an endpoint that receives a POST for the events of an
// agent's executions, signed with its secret (see package webhook's Sign). Its Secret is
// write-only: answers carry SecretSet instead.
type Webhook struct {
	URL       string `json:"url"`
	Secret    string `json:"secret,omitempty"`
	SecretSet bool   `json:"secret_set,omitempty"`
	// Events it receives; empty means all (WebhookEvents).
	Events []string `json:"events,omitempty"`
}

// The events a webhook receives.
const (
	EventQueued          = "queued"           // admitted into the agent's queue
	EventStarted         = "started"          // a worker claimed it and starts it
	EventSucceeded       = "succeeded"        // ended: succeeded
	EventFailed          = "failed"           // ended: failed (the error type says why)
	EventCancelled       = "cancelled"        // ended: cancelled
	EventInterrupted     = "interrupted"      // ended: its worker died or shut down under it
	EventRetrying        = "retrying"         // it ended and its agent's policy made its next attempt
	EventStalled         = "stalled"          // a tool call stalled past its limit (the run failed as stall)
	EventBudgetWarning   = "budget_warning"   // a budget window of the agent crossed 80 % or 95 %
	EventBudgetExhausted = "budget_exhausted" // a budget window of the agent is spent
)

// WebhookEvents are every event a webhook can receive.
var WebhookEvents = []string{EventQueued, EventStarted, EventSucceeded, EventFailed, EventCancelled, EventInterrupted,
	EventRetrying, EventStalled, EventBudgetWarning, EventBudgetExhausted}

// MaxWebhooks bounds an agent's webhooks.
const MaxWebhooks = 8

// Wants reports whether w receives event.
func (w *Webhook) Wants(event string) bool {
	return len(w.Events) == 0 || slices.Contains(w.Events, event)
}

// normalizeWebhooks checks an agent's webhooks.
func normalizeWebhooks(hooks []Webhook) error {
	if len(hooks) > MaxWebhooks {
		return fmt.Errorf("webhooks: %d, at most %d", len(hooks), MaxWebhooks)
	}
	for i := range hooks {
		w := &hooks[i]
		if err := ValidWebhookURL(w.URL); err != nil {
			return fmt.Errorf("webhooks[%d]: %w", i, err)
		}
		if w.Secret == "" {
			return fmt.Errorf("webhooks[%d]: a secret is needed to sign the deliveries (the receiver checks Corral-Signature with it)", i)
		}
		for _, e := range w.Events {
			if !slices.Contains(WebhookEvents, e) {
				return fmt.Errorf("webhooks[%d]: unknown event %q: want %s", i, e, strings.Join(WebhookEvents, ", "))
			}
		}
		w.SecretSet = false
	}
	return nil
}

// ValidWebhookURL checks an endpoint's address: an absolute http or https
// URL without credentials.
func ValidWebhookURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: want an absolute http:// or https:// URL", s)
	}
	if u.User != nil {
		return errors.New("url: put no credentials in it; the deliveries are signed with the secret")
	}
	return nil
}

// WebhookDelivery is one POST of an event to a webhook, from the durable
// outbox: delivered at least once, in order per execution and endpoint,
// retried with backoff until it is or its time runs out.
type WebhookDelivery struct {
	ID          string     `json:"id"`
	ExecutionID string     `json:"execution_id,omitempty"`
	Agent       string     `json:"agent"`
	Event       string     `json:"event"`
	URL         string     `json:"url"`
	Status      string     `json:"status"` // pending, delivered or failed (gave up)
	Attempts    int        `json:"attempts"`
	LastStatus  int        `json:"last_status,omitempty"` // the receiver's last HTTP status
	LastError   string     `json:"last_error,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	NextAt      *time.Time `json:"next_at,omitempty"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	// Body and Secret are what a worker delivers; never served.
	Body   []byte `json:"-"`
	Secret string `json:"-"`
}
