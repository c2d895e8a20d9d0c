package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// budgetAgent records an agent with a daily cost budget of $1.
func budgetAgent(t *testing.T, s store.Store, name string, overflow corral.Overflow) *corral.Agent {
	t.Helper()
	a := &corral.Agent{Name: name, Kind: corral.KindShell, MaxParallelTasks: 4, Overflow: overflow, Budget: corral.Budget{DailyCostUSD: 1, BudgetTimeZone: "Europe/Paris"}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	return a
}

func testBudgetWindows(t *testing.T, s store.Store) {
	a := budgetAgent(t, s, "bud", corral.OverflowReject)
	windows := a.Budget.Windows(time.Now())
	if len(windows) != 1 || windows[0].Kind != "daily" || !windows[0].End.After(time.Now()) {
		t.Fatalf("windows %+v", windows)
	}
	if ws, err := s.AddSpend(ctx, "bud", windows, 0.6, 1000); err != nil || ws[0].CostUSD != 0.6 || ws[0].Tokens != 1000 {
		t.Fatalf("add spend: %+v (%v)", ws, err)
	}
	if e := submit(t, s, "bud", "x"); e.Status != corral.StatusRunning {
		t.Fatalf("a task within budget: %s", e.Status)
	}
	s.AddSpend(ctx, "bud", windows, 0.5, 1000)
	adm, err := s.Submit(ctx, &store.Submission{Agent: "bud", Input: "y"})
	if err != nil || adm.Execution.Status != corral.StatusRejected || adm.Execution.ErrorType != corral.ErrorMaxBudget || !adm.RetryAt.Equal(windows[0].End) {
		t.Fatalf("a task once the window is spent: %+v retry at %v (%v), want rejected until %v", adm.Execution, adm.RetryAt, err, windows[0].End)
	}
	if got, _ := s.WindowSpend(ctx, "bud", windows); got[0].CostUSD < 1.09 || got[0].Tokens != 2000 {
		t.Fatalf("window spend %+v", got)
	}

	// An agent that queues holds its tasks until the window allows them.
	q := budgetAgent(t, s, "budq", corral.OverflowQueue)
	s.AddSpend(ctx, "budq", q.Budget.Windows(time.Now()), 2, 0)
	e := submit(t, s, "budq", "x")
	if e.Status != corral.StatusQueued {
		t.Fatalf("a task of a queueing agent whose window is spent: %s", e.Status)
	}
	if n, err := s.PromoteQueued(ctx, "budq"); err != nil || n != 0 {
		t.Fatalf("promoted %d (%v) while the window is spent", n, err)
	}
	// The window reopens (its spend is gone, as a new day's is none).
	if _, err := s.PruneSpend(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PromoteQueued(ctx, "budq"); err != nil || n != 1 || get(t, s, e.ID).Status != corral.StatusRunning {
		t.Fatalf("promoted %d (%v) once the window reopened", n, err)
	}
	// A budget raised through an update admits what it held at once.
	s.AddSpend(ctx, "budq", q.Budget.Windows(time.Now()), 2, 0)
	e2 := submit(t, s, "budq", "y")
	q.DailyCostUSD = 5
	if err := s.UpdateAgent(ctx, q); err != nil {
		t.Fatal(err)
	}
	if e2.Status != corral.StatusQueued || get(t, s, e2.ID).Status != corral.StatusRunning {
		t.Fatalf("held %s, after the raise %s", e2.Status, get(t, s, e2.ID).Status)
	}
}

func testSpendAddsUpAcrossWriters(t *testing.T, s store.Store) {
	a := budgetAgent(t, s, "add", corral.OverflowReject)
	windows := a.Budget.Windows(time.Now())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if _, err := s.AddSpend(ctx, "add", windows, 0.01, 10); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := s.WindowSpend(ctx, "add", windows)
	if err != nil || got[0].Tokens != 2000 || got[0].CostUSD < 1.999 || got[0].CostUSD > 2.001 {
		t.Fatalf("200 additions of $0.01 and 10 tokens: %+v (%v)", got, err)
	}
	if n, err := s.PruneSpend(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v)", n, err)
	}
}
