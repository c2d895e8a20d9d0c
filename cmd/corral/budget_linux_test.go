package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
)

// spender speaks Claude Code's stream-json and spends for ever: a message
// of 100,000 input tokens of claude-sonnet-4-5 ($0.30) every 50 ms.
const spender = `echo '{"type":"system","subtype":"init","session_id":"sess-b","permissionMode":"default"}'
i=0; while :; do i=$((i+1))
echo "{\"type\":\"assistant\",\"message\":{\"id\":\"m$i\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":100000,\"output_tokens\":0},\"content\":[{\"type\":\"text\",\"text\":\"more\"}]}}"
sleep 0.05; done`

// TestFleetTwoWorkersNeverOverspendAWindow: four runs of one agent, on
// two workers of a PostgreSQL fleet, spend its daily window together: the
// window is overspent by at most one usage event per run in flight, every
// run ends as max_budget, and both workers then refuse the agent's tasks
// (429, Retry-After until the window reopens).
func TestFleetTwoWorkersNeverOverspendAWindow(t *testing.T) {
	f := newFleet(t, 2, "--shutdown-timeout", "0s")
	c := f.workers[0].c
	createAgent(t, c, &client.Agent{Name: "spend", Kind: corral.KindHeadless, MaxParallelTasks: 4,
		Command: []string{"bash", "-c", spender, "agent", "{{prompt}}"}, Budget: corral.Budget{DailyCostUSD: 3, BudgetTimeZone: "America/New_York"}})
	var ids []string
	for range 4 {
		e, err := c.Submit(bg, "spend", "go", 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	workers := map[string]bool{}
	for _, id := range ids {
		e := waitTerminal(t, c, id, time.Minute)
		workers[e.WorkerID] = true
		if e.ErrorType != corral.ErrorMaxBudget {
			t.Fatalf("run %s: %s %s %q", id, e.Status, e.ErrorType, e.Error)
		}
	}
	spend, err := c.Spend(bg, "spend")
	if err != nil || len(spend) != 1 {
		t.Fatalf("spend %+v (%v)", spend, err)
	}
	t.Logf("4 runs on workers %v spent $%.2f of a $3.00 window", workers, spend[0].CostUSD)
	if spend[0].CostUSD < 3 || spend[0].CostUSD > 3+4*0.3+1e-9 {
		t.Fatalf("the window spent $%.4f: over $3 by more than one $0.30 event per run in flight", spend[0].CostUSD)
	}
	for _, w := range f.workers {
		_, err := w.c.Submit(bg, "spend", "go", 0)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.Code != "budget_spent" || ae.RetryAfter <= 0 || !strings.Contains(ae.Message, "daily cost budget is spent") {
			t.Fatalf("a task through %s once the window is spent: %#v", w.addr, err)
		}
	}
	f.stop()
}
