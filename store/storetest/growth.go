package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// OpenLimited returns a fresh, empty store with the given limits.
type OpenLimited func(t *testing.T, l store.Limits) store.Store

// RunLimits checks that a driver honours store.Limits.
func RunLimits(t *testing.T, open OpenLimited) {
	t.Run("AgentsAndSchedulesAreBounded", func(t *testing.T) {
		s := open(t, store.Limits{MaxAgents: 3, MaxSchedulesPerAgent: 2})
		for i := range 3 {
			agent(t, s, fmt.Sprint("a", i), 1, corral.OverflowReject, 0)
		}
		extra := &corral.Agent{Name: "a3", Kind: corral.KindShell, CreatedAt: time.Now().UTC()}
		extra.Normalize()
		if err := s.CreateAgent(ctx, extra); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("fourth agent: %v, want ErrLimit", err)
		}
		for i := range 2 {
			if err := s.CreateSchedule(ctx, schedule("a0", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateSchedule(ctx, schedule("a0", 2)); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("third schedule of a0: %v, want ErrLimit", err)
		}
		if err := s.CreateSchedule(ctx, schedule("a1", 0)); err != nil {
			t.Fatalf("the limit is per agent: %v", err)
		}
		if err := s.DeleteAgent(ctx, "a2"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAgent(ctx, extra); err != nil {
			t.Fatalf("agent after a deletion: %v", err)
		}
	})
	t.Run("NegativeMeansNoLimit", func(t *testing.T) {
		s := open(t, store.Limits{MaxAgents: -1, MaxSchedulesPerAgent: -1})
		agent(t, s, "a", 1, corral.OverflowReject, 0)
		for i := range 5 {
			if err := s.CreateSchedule(ctx, schedule("a", i)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func schedule(agentName string, i int) *corral.Schedule {
	at := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	created := time.Now().UTC().Add(time.Duration(i) * time.Millisecond)
	return &corral.Schedule{ID: fmt.Sprintf("sch_%s_%03d", agentName, i), Agent: agentName, Cron: "@hourly", Input: "x", Enabled: i%2 == 0,
		Missed: corral.MissedSkip, NextFireAt: &at, CreatedAt: created, UpdatedAt: created}
}

func testListSummaries(t *testing.T, s store.Store) {
	agent(t, s, "sum", 2, corral.OverflowReject, 0)
	long := strings.Repeat("é", corral.SummaryChars+100)
	e := submit(t, s, "sum", long)
	out := strings.Repeat("o", 100000)
	if _, _, err := s.Finish(ctx, e.ID, &corral.Outcome{Status: corral.StatusFailed, Error: long, Stdout: out, Stderr: out, Result: out, StdoutBytes: 100000, Ended: time.Now().UTC()}, nil); err != nil {
		t.Fatal(err)
	}
	list, _, err := s.ListExecutions(ctx, store.ExecutionFilter{Agent: "sum"})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	l := list[0]
	if !l.Summary || l.Stdout != "" || l.Stderr != "" || l.Result != "" {
		t.Fatalf("listing carries output bodies: summary %v, %d/%d/%d bytes", l.Summary, len(l.Stdout), len(l.Stderr), len(l.Result))
	}
	if n := len([]rune(l.Input)); n != corral.SummaryChars || !strings.HasPrefix(long, l.Input) {
		t.Fatalf("summary input: %d characters, want the first %d", n, corral.SummaryChars)
	}
	if n := len([]rune(l.Error)); n != corral.SummaryChars {
		t.Fatalf("summary error: %d characters, want %d", n, corral.SummaryChars)
	}
	if l.StdoutBytes != 100000 || l.Status != corral.StatusFailed || l.FinishedAt == nil {
		t.Fatalf("summary lost facts: %+v", l)
	}
	full := get(t, s, e.ID)
	if full.Summary || full.Stdout != out || full.Input != long {
		t.Fatal("GetExecution is not the whole record")
	}
}

func testSchedulesPaged(t *testing.T, s store.Store) {
	agent(t, s, "p1", 1, corral.OverflowReject, 0)
	agent(t, s, "p2", 1, corral.OverflowReject, 0)
	for i := range 7 {
		if err := s.CreateSchedule(ctx, schedule("p1", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSchedule(ctx, schedule("p2", 0)); err != nil {
		t.Fatal(err)
	}
	collectAll := func(f store.ScheduleFilter) ([]string, int) {
		var ids []string
		pages := 0
		for {
			page, next, err := s.ListSchedules(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, sc := range page {
				ids = append(ids, sc.ID)
			}
			if next == "" {
				return ids, pages
			}
			f.Cursor = next
		}
	}
	ids, pages := collectAll(store.ScheduleFilter{Agent: "p1", Limit: 3})
	if len(ids) != 7 || pages != 3 || ids[0] != "sch_p1_000" || ids[6] != "sch_p1_006" {
		t.Fatalf("p1 in pages of 3: %v in %d pages", ids, pages)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("%s listed twice", ids[i])
		}
	}
	if all, _ := collectAll(store.ScheduleFilter{Limit: 2}); len(all) != 8 {
		t.Fatalf("all agents: %v", all)
	}
	if _, _, err := s.ListSchedules(ctx, store.ScheduleFilter{Agent: "nobody"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown agent: %v", err)
	}
	if _, _, err := s.ListSchedules(ctx, store.ScheduleFilter{Cursor: "nonsense"}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func testPrune(t *testing.T, s store.Store) {
	agent(t, s, "pr", 2, corral.OverflowQueue, 10)
	var done []string
	for i := range 6 {
		e := submit(t, s, "pr", fmt.Sprint(i))
		finish(t, s, e.ID, corral.StatusSucceeded)
		done = append(done, e.ID)
	}
	running := submit(t, s, "pr", "running")
	submit(t, s, "pr", "running too")
	queued := submit(t, s, "pr", "queued")
	if queued.Status != corral.StatusQueued {
		t.Fatalf("want a queued execution, got %s", queued.Status)
	}
	// By count: keep the newest 4 finished; two go, oldest first.
	got, err := s.PruneExecutions(ctx, store.Prune{Keep: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != done[0] || got[1].ID != done[1] {
		t.Fatalf("pruned by count %v, want %v", got, done[:2])
	}
	if _, err := s.GetExecution(ctx, done[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pruned execution still there: %v", err)
	}
	if got, _ := s.PruneExecutions(ctx, store.Prune{Keep: 4}); len(got) != 0 {
		t.Fatalf("second prune by count: %v", got)
	}
	// By age, in batches: everything finished goes, nothing else.
	total := 0
	for {
		got, err := s.PruneExecutions(ctx, store.Prune{Before: time.Now().Add(time.Hour), Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		total += len(got)
		if len(got) < 3 {
			break
		}
	}
	if total != 4 {
		t.Fatalf("pruned %d by age, want 4", total)
	}
	for _, id := range []string{running.ID, queued.ID} {
		if _, err := s.GetExecution(ctx, id); err != nil {
			t.Fatalf("a queued or running execution was pruned: %v", err)
		}
	}
	if len(slots(t, s, "pr")) != 2 {
		t.Fatal("pruning touched the slots")
	}
	if got, _ := s.PruneExecutions(ctx, store.Prune{}); len(got) != 0 {
		t.Fatal("an empty rule pruned")
	}
}

func testActivity(t *testing.T, s store.Store) {
	agent(t, s, "act", 2, corral.OverflowQueue, 10)
	agent(t, s, "idle", 1, corral.OverflowReject, 0)
	outcomes := []corral.Status{corral.StatusSucceeded, corral.StatusFailed, corral.StatusCancelled, corral.StatusSucceeded, corral.StatusInterrupted, corral.StatusSucceeded}
	for _, st := range outcomes {
		finish(t, s, submit(t, s, "act", "x").ID, st)
	}
	submit(t, s, "act", "run1")
	submit(t, s, "act", "run2")
	submit(t, s, "act", "wait")
	for i := range 3 {
		if err := s.CreateSchedule(ctx, schedule("act", i)); err != nil {
			t.Fatal(err)
		}
	}
	acts, err := s.Activity(ctx, 4)
	if err != nil || len(acts) != 2 || acts[0].Agent != "act" || acts[1].Agent != "idle" {
		t.Fatalf("activity: %+v %v", acts, err)
	}
	a := acts[0]
	// The last 4 finished that count: succeeded, interrupted, succeeded,
	// failed (the cancelled one says nothing of the agent).
	if a.Running != 2 || a.Queued != 1 || a.Finished != 4 || a.Succeeded != 2 || a.Schedules != 3 || a.NextFire == nil {
		t.Fatalf("act: %+v", a)
	}
	if b := acts[1]; b.Running != 0 || b.Queued != 0 || b.Finished != 0 || b.Schedules != 0 || b.NextFire != nil {
		t.Fatalf("idle: %+v", b)
	}
}

func testCancelOrphan(t *testing.T, s store.Store) {
	agent(t, s, "orph", 1, corral.OverflowQueue, 5)
	now := time.Now().UTC()
	if err := s.RegisterWorker(ctx, &store.Worker{ID: "live", StartedAt: now, Heartbeat: now}); err != nil {
		t.Fatal(err)
	}
	e := submit(t, s, "orph", "a")
	q := submit(t, s, "orph", "b")
	if _, err := s.Claim(ctx, e.ID, "live", now, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.RequestCancel(ctx, e.ID, now)
	if err != nil || got.Status != corral.StatusRunning || !got.CancelRequested {
		t.Fatalf("cancel of a live worker's run: %+v %v", got, err)
	}
	// The worker goes without recording the end: cancelling again
	// finishes it, frees its slot, promotes the queue.
	if err := s.DeleteWorker(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	got, err = s.RequestCancel(ctx, e.ID, now)
	if err != nil || got.Status != corral.StatusCancelled {
		t.Fatalf("cancel of an orphaned run: %+v %v", got, err)
	}
	if sl := slots(t, s, "orph"); len(sl) != 1 || sl[0].ExecutionID != q.ID {
		t.Fatalf("slots after: %+v", sl)
	}
}

// testQueueDrains runs a queue through two slots on a lone registered
// worker, whose engine starts each promoted execution itself.
func testQueueDrains(t *testing.T, s store.Store) {
	agent(t, s, "once", 2, corral.OverflowQueue, 100)
	now := time.Now().UTC()
	if err := s.RegisterWorker(ctx, &store.Worker{ID: "w-once", StartedAt: now, Heartbeat: now}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	release := make(chan struct{})
	done := make(chan string, 100)
	err := startDispatcher(ctx, s, store.DispatchConfig{WorkerID: "w-once", Run: func(rctx context.Context, id string) error {
		if _, err := s.Claim(rctx, id, "w-once", time.Now(), ""); err != nil {
			return nil
		}
		mu.Lock()
		claimed[id]++
		mu.Unlock()
		<-release
		if _, _, err := s.Finish(rctx, id, &corral.Outcome{Status: corral.StatusSucceeded}, nil); err != nil {
			return err
		}
		done <- id
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Dispatcher().Stop(ctx)
	const n = 20
	for i := range n {
		submit(t, s, "once", fmt.Sprint(i))
	}
	close(release)
	timeout := time.After(60 * time.Second)
	for range n {
		select {
		case <-done:
		case <-timeout:
			t.Fatalf("ran %d of %d within 60s", len(claimed), n)
		}
		if sl := slots(t, s, "once"); len(sl) > 2 {
			t.Fatalf("%d slots held, capacity 2", len(sl))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id, c := range claimed {
		if c != 1 {
			t.Fatalf("%s claimed %d times", id, c)
		}
	}
}
