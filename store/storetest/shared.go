package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// OpenShared returns several stores on one fresh database, as separate
// workers (processes, machines) would hold them.
type OpenShared func(t *testing.T) []store.Store

// RunShared runs the checks that need several handles on one database:
// the rules must hold across them as they hold within one.
func RunShared(t *testing.T, open OpenShared) {
	tests := []struct {
		name string
		fn   func(t *testing.T, ss []store.Store)
	}{
		{"ConcurrentSubmitsAcrossWorkersNeverOverbook", testSharedSubmits},
		{"ClaimAcrossWorkersHasOneWinner", testSharedClaim},
		{"ScheduleFireAcrossWorkersHasOneWinner", testSharedFire},
		{"DispatchGoesOnlyToWorkersWithTheLabels", testSharedLabels},
		{"SessionRevocationReachesEveryWorker", testSharedRevocation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss := open(t)
			if len(ss) < 2 {
				t.Fatal("RunShared needs at least two stores")
			}
			tc.fn(t, ss)
		})
	}
}

func testSharedSubmits(t *testing.T, ss []store.Store) {
	submitAndDrain(t, ss, "shared", 4, 100)
}

// submitAndDrain submits per tasks through each of the stores at once to an
// agent with the given capacity and checks that exactly capacity of them
// run; then it finishes the running ones round by round, each twice and
// through different stores, checking that promotion from the backlog never
// overbooks, until every task has succeeded and no slot is held.
func submitAndDrain(t *testing.T, ss []store.Store, name string, capacity, per int) {
	t.Helper()
	agent(t, ss[0], name, capacity, corral.OverflowQueue, 10000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[corral.Status]int{}
	errs := make(chan error, per*len(ss))
	for _, s := range ss {
		for i := range per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				adm, err := s.Submit(ctx, &store.Submission{Agent: name, Input: fmt.Sprint(i)})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				statuses[adm.Execution.Status]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := per * len(ss)
	if statuses[corral.StatusRunning] != capacity || statuses[corral.StatusQueued] != total-capacity {
		t.Fatalf("admissions: %v, want %d running and %d queued", statuses, capacity, total-capacity)
	}
	for round := 0; ; round++ {
		if round > total {
			t.Fatal("the queue never drained")
		}
		list, _, err := ss[round%len(ss)].ListExecutions(ctx, store.ExecutionFilter{Agent: name, Statuses: []corral.Status{corral.StatusRunning}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > capacity {
			t.Fatalf("%d running, capacity %d", len(list), capacity)
		}
		if len(list) == 0 {
			break
		}
		var wg sync.WaitGroup
		for i, e := range list {
			for j := range 2 { // duplicate completions race each other
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, _, err := ss[(i+j)%len(ss)].Finish(ctx, e.ID, &corral.Outcome{Status: corral.StatusSucceeded}, nil); err != nil {
						t.Error(err)
					}
				}()
			}
		}
		wg.Wait()
		if n := len(slots(t, ss[len(ss)-1], name)); n > capacity {
			t.Fatalf("%d slots held, capacity %d", n, capacity)
		}
	}
	st, err := ss[0].Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st {
		if a.Agent == name {
			if a.ByStatus[corral.StatusSucceeded] != total || a.SlotsUsed != 0 {
				t.Fatalf("after draining: %+v", a)
			}
			return
		}
	}
	t.Fatalf("no stats for agent %s: %+v", name, st)
}

// race makes n calls of try at once and returns how many succeeded; an
// error other than store.ErrConflict fails the test.
func race(t *testing.T, n int, try func(i int) error) int {
	t.Helper()
	var wins int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := try(i); {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
			case !errors.Is(err, store.ErrConflict):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	return wins
}

func testSharedClaim(t *testing.T, ss []store.Store) {
	agent(t, ss[0], "cl", 1, corral.OverflowReject, 0)
	e := submit(t, ss[0], "cl", "x")
	wins := race(t, 12, func(i int) error {
		_, err := ss[i%len(ss)].Claim(ctx, e.ID, fmt.Sprint("w", i), time.Now(), "")
		return err
	})
	if wins != 1 {
		t.Fatalf("%d claims won across workers, want 1", wins)
	}
}

func testSharedFire(t *testing.T, ss []store.Store) {
	agent(t, ss[0], "sf", 100, corral.OverflowReject, 0)
	at := time.Now().UTC().Truncate(time.Second)
	if err := ss[0].CreateSchedule(ctx, &corral.Schedule{ID: "sch", Agent: "sf", Cron: "* * * * * *", Input: "tick", Enabled: true, Missed: corral.MissedSkip, NextFireAt: &at, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	// Ten fires in a row, each raced by every worker twice.
	for tick := range 10 {
		fire := at.Add(time.Duration(tick) * time.Second)
		wins := race(t, 2*len(ss), func(i int) error {
			_, err := ss[i%len(ss)].FireSchedule(ctx, "sch", fire, fire.Add(time.Second), &store.Submission{Agent: "sf", Input: "tick", Trigger: corral.TriggerSchedule, ScheduleID: "sch"})
			return err
		})
		if wins != 1 {
			t.Fatalf("fire %d taken %d times, want once", tick, wins)
		}
	}
	list, _, err := ss[1].ListExecutions(ctx, store.ExecutionFilter{Agent: "sf", Limit: 100})
	if err != nil || len(list) != 10 {
		t.Fatalf("%d executions for 10 fires (%v)", len(list), err)
	}
}

func testSharedLabels(t *testing.T, ss []store.Store) {
	a := &corral.Agent{Name: "pinned", Kind: corral.KindShell, MaxParallelTasks: 10, Labels: []string{"gpu", "eu"}, CreatedAt: time.Now().UTC()}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := ss[0].CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	agent(t, ss[0], "free", 10, corral.OverflowReject, 0)
	ran := make(chan [2]string, 100)
	start := func(s store.Store, worker string, labels []string) {
		err := startDispatcher(ctx, s, store.DispatchConfig{WorkerID: worker, Labels: labels, Run: func(rctx context.Context, id string) error {
			e, err := s.Claim(rctx, id, worker, time.Now(), "")
			if err != nil {
				return nil
			}
			s.Finish(rctx, id, &corral.Outcome{Status: corral.StatusSucceeded}, nil)
			ran <- [2]string{e.Agent, worker}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Dispatcher().Stop(context.Background()) })
	}
	start(ss[0], "plain", nil)
	start(ss[1], "gpu-eu", []string{"eu", "gpu", "x"})
	for i := range 6 {
		submit(t, ss[i%2], "pinned", "p")
		submit(t, ss[i%2], "free", "f")
	}
	byWorker := map[string]int{}
	timeout := time.After(30 * time.Second)
	for range 12 {
		select {
		case r := <-ran:
			if r[0] == "pinned" && r[1] != "gpu-eu" {
				t.Fatalf("a task of the pinned agent ran on worker %s, which lacks its labels", r[1])
			}
			byWorker[r[0]+"@"+r[1]]++
		case <-timeout:
			t.Fatalf("ran only %v within 30s", byWorker)
		}
	}
	// A label set that appears after the engines started is picked up on
	// refresh.
	b := &corral.Agent{Name: "late", Kind: corral.KindShell, MaxParallelTasks: 1, Labels: []string{"x"}, CreatedAt: time.Now().UTC()}
	b.Normalize()
	if err := ss[0].CreateAgent(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss[:2] {
		if err := s.Dispatcher().Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	submit(t, ss[0], "late", "l")
	select {
	case r := <-ran:
		if r[0] != "late" || r[1] != "gpu-eu" {
			t.Fatalf("late agent ran as %v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task of an agent created after the engines started never ran")
	}
	t.Logf("runs by agent@worker: %v", byWorker)
}
