package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

func testWebhookOutbox(t *testing.T, s store.Store) {
	a := &corral.Agent{Name: "wh", Kind: corral.KindShell, MaxParallelTasks: 2, Retry: corral.Retry{MaxAttempts: 2, RetryOn: []corral.ErrorType{corral.ErrorExit}},
		Webhooks: []corral.Webhook{{URL: "http://127.0.0.1:1/all", Secret: "s1"}, {URL: "http://127.0.0.1:1/ends", Secret: "s2", Events: []string{corral.EventFailed}}}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	e := submit(t, s, "wh", "exit 3")
	if _, err := s.Claim(ctx, e.ID, "w1", time.Now().UTC(), "/log"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Finish(ctx, e.ID, &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorExit}, &store.NextAttempt{At: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Deliveries(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Event+"→"+d.URL[len(d.URL)-4:])
	}
	want := []string{"started→/all", "failed→/all", "failed→ends", "retrying→/all"}
	if len(got) != len(want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("deliveries %v, want %v", got, want)
		}
	}
	var body struct {
		Event     string            `json:"event"`
		Execution *corral.Execution `json:"execution"`
	}
	if err := json.Unmarshal(ds[1].Body, &body); err != nil || body.Event != "failed" || body.Execution.ID != e.ID || body.Execution.ErrorType != corral.ErrorExit || ds[1].Secret != "s1" {
		t.Fatalf("body %s (%v), secret %q", ds[1].Body, err, ds[1].Secret)
	}

	// In order per execution and endpoint: one at a time, each leased.
	now := time.Now().UTC()
	claim := func() []string {
		t.Helper()
		list, err := s.ClaimDeliveries(ctx, now, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range list {
			out = append(out, d.Event+"→"+d.URL[len(d.URL)-4:])
		}
		return out
	}
	first := claim()
	if len(first) != 2 || first[0] != "started→/all" && first[1] != "started→/all" {
		t.Fatalf("first claim %v, want started→/all and failed→ends", first)
	}
	if again := claim(); len(again) != 0 {
		t.Fatalf("leased deliveries claimed again: %v", again)
	}
	for _, d := range ds[:1] {
		if err := s.RecordDelivery(ctx, d.ID, true, 200, "", time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Minute) // the leases have run out
	if next := claim(); len(next) != 2 || next[0] != "failed→/all" && next[1] != "failed→/all" {
		t.Fatalf("after the first delivery: %v", next)
	}
	if err := s.RecordDelivery(ctx, ds[1].ID, false, 500, "server error", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if next := claim(); len(next) != 1 || next[0] != "failed→ends" {
		t.Fatalf("a retried delivery holds back the next of its endpoint, not another endpoint's: %v", next)
	}
	if err := s.RecordDelivery(ctx, ds[2].ID, false, 0, "gave up", time.Time{}); err != nil {
		t.Fatal(err)
	}
	ds, _ = s.Deliveries(ctx, e.ID)
	if ds[0].Status != "delivered" || ds[0].DeliveredAt == nil || ds[1].Status != "pending" || ds[1].Attempts != 1 || ds[1].LastStatus != 500 || ds[2].Status != "failed" {
		t.Fatalf("deliveries as recorded: %+v %+v %+v", ds[0], ds[1], ds[2])
	}
	if err := s.EnqueueEvent(ctx, "wh", corral.EventBudgetWarning, []byte(`{"event":"budget_warning"}`)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneDeliveries(ctx, time.Now().Add(time.Minute)); err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the delivered and the failed", n, err)
	}
}
