// Package storetest is the behaviour every store.Store driver must show.
// A driver's tests call Run with a function that opens a fresh, empty
// store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { ... })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// Open returns a fresh, empty store; the test owns it and closes it.
type Open func(t *testing.T) store.Store

// Run runs the suite against the driver.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"AgentCRUD", testAgentCRUD},
		{"AdmitsUpToCapacityThenRejects", testAdmitsThenRejects},
		{"QueueIsFIFOAndPromotedOnFinish", testQueueFIFO},
		{"BacklogIsBounded", testBacklogBounded},
		{"FinishIsCompareAndSet", testFinishCAS},
		{"FinishReleasesOnlyItsOwnSlot", testReleaseOwnSlot},
		{"ConcurrentSubmitsNeverOverbook", testConcurrentSubmits},
		{"ClaimHasOneWinner", testClaimOnce},
		{"CancelQueuedUnclaimedAndRunning", testCancel},
		{"GrowingCapacityPromotesQueued", testGrowCapacity},
		{"DeleteAgentRefusedWhileBusy", testDeleteBusy},
		{"ListFiltersAndPages", testList},
		{"ListFiltersByStatusesWorkerAndTime", testListFilters},
		{"RunInfoSetsOnlyItsFields", testRunInfoSetsOnlyItsFields},
		{"SlotsAndStatsCountWhatIsHeld", testSlotsAndStats},
		{"ScheduleFireHasOneWinner", testScheduleFire},
		{"WorkersAndHeartbeat", testWorkers},
		{"UnclaimedAndRedispatch", testUnclaimed},
		{"EngineDispatchesAdmitted", testEngine},
		{"AgentLabelsAreNormalizedAndKept", testLabels},
		{"PingAnswers", testPing},
		{"ListReturnsSummaries", testListSummaries},
		{"SchedulesArePaged", testSchedulesPaged},
		{"PruneDeletesOnlyFinishedBeyondRetention", testPrune},
		{"ActivityCountsWithoutRecords", testActivity},
		{"CancelOfAnOrphanedRunFinishesIt", testCancelOrphan},
		{"QueueDrainsThroughPromotions", testQueueDrains},
		{"SessionRevocationIsKept", testSessionRevocation},
		{"AgentConfinementIsKept", testAgentConfinementKept},
		{"FinishRecordsTheNextAttemptOnce", testNextAttemptOnce},
		{"DueAttemptTakesAFreeSlotOrQueues", testAdmitAttempt},
		{"WaitingAttemptIsCancelledAtOnceAndKeepsItsAgent", testCancelWaiting},
		{"SessionStatesAreKeptReplacedAndPruned", testSessionStates},
		{"BudgetWindowsRefuseOrHoldTasksOnceSpent", testBudgetWindows},
		{"SpendAddsUpAcrossWriters", testSpendAddsUpAcrossWriters},
		{"WebhookOutboxDeliversInOrderOncePerLease", testWebhookOutbox},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func agent(t *testing.T, s store.Store, name string, slots int, overflow corral.Overflow, backlog int) *corral.Agent {
	t.Helper()
	a := &corral.Agent{Name: name, Kind: corral.KindShell, MaxParallelTasks: slots, Overflow: overflow, MaxBacklog: backlog, CreatedAt: time.Now().UTC()}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	return a
}

func submit(t *testing.T, s store.Store, agentName, input string) *corral.Execution {
	t.Helper()
	adm, err := s.Submit(ctx, &store.Submission{Agent: agentName, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	return adm.Execution
}

func finish(t *testing.T, s store.Store, id string, st corral.Status) (*corral.Execution, bool) {
	t.Helper()
	e, applied, err := s.Finish(ctx, id, &corral.Outcome{Status: st, Ended: time.Now().UTC()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, applied
}

func get(t *testing.T, s store.Store, id string) *corral.Execution {
	t.Helper()
	e, err := s.GetExecution(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func slots(t *testing.T, s store.Store, agentName string) []corral.Slot {
	t.Helper()
	sl, err := s.Slots(ctx, agentName)
	if err != nil {
		t.Fatal(err)
	}
	return sl
}

func testAgentCRUD(t *testing.T, s store.Store) {
	a := agent(t, s, "a1", 2, corral.OverflowReject, 0)
	if err := s.CreateAgent(ctx, a); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: got %v, want ErrExists", err)
	}
	got, err := s.GetAgent(ctx, "a1")
	if err != nil || got.MaxParallelTasks != 2 || got.Kind != corral.KindShell {
		t.Fatalf("get: %+v %v", got, err)
	}
	got.Workdir = "/tmp"
	if err := s.UpdateAgent(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.GetAgent(ctx, "a1"); got.Workdir != "/tmp" {
		t.Fatalf("update lost: %+v", got)
	}
	if _, err := s.GetAgent(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
	if err := s.UpdateAgent(ctx, &corral.Agent{Name: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}
	all, err := s.ListAgents(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("list: %v %v", all, err)
	}
	if err := s.DeleteAgent(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAgent(ctx, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := s.Submit(ctx, &store.Submission{Agent: "a1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("submit to deleted agent: %v", err)
	}
}

func testAdmitsThenRejects(t *testing.T, s store.Store) {
	agent(t, s, "r", 2, corral.OverflowReject, 0)
	e1, e2 := submit(t, s, "r", "1"), submit(t, s, "r", "2")
	if e1.Status != corral.StatusRunning || e2.Status != corral.StatusRunning {
		t.Fatalf("first two: %s %s", e1.Status, e2.Status)
	}
	if e1.Slot == e2.Slot {
		t.Fatalf("same slot %d twice", e1.Slot)
	}
	adm, err := s.Submit(ctx, &store.Submission{Agent: "r", Input: "3"})
	if err != nil {
		t.Fatal(err)
	}
	e3 := adm.Execution
	if e3.Status != corral.StatusRejected || e3.Error != "agent at capacity (2/2 parallel tasks running)" {
		t.Fatalf("third: %s %q", e3.Status, e3.Error)
	}
	if adm.Running != 2 || adm.Capacity != 2 {
		t.Fatalf("admission figures: %+v", adm)
	}
	if got := get(t, s, e3.ID); got.Status != corral.StatusRejected || got.FinishedAt == nil {
		t.Fatalf("rejected execution not recorded: %+v", got)
	}
	if n := len(slots(t, s, "r")); n != 2 {
		t.Fatalf("%d slots held, want 2", n)
	}
}

func testQueueFIFO(t *testing.T, s store.Store) {
	agent(t, s, "q", 1, corral.OverflowQueue, 10)
	first := submit(t, s, "q", "first")
	var queued []*corral.Execution
	for i := range 3 {
		e := submit(t, s, "q", fmt.Sprint(i))
		if e.Status != corral.StatusQueued {
			t.Fatalf("submission %d: %s, want queued", i, e.Status)
		}
		queued = append(queued, e)
	}
	prev := first
	for _, want := range queued {
		finish(t, s, prev.ID, corral.StatusSucceeded)
		got := get(t, s, want.ID)
		if got.Status != corral.StatusRunning || got.AdmittedAt == nil {
			t.Fatalf("after finishing %s, %s is %s, want running (FIFO)", prev.ID, want.ID, got.Status)
		}
		for _, other := range queued {
			if other.ID != want.ID && other.CreatedAt.After(want.CreatedAt) {
				if g := get(t, s, other.ID); g.Status != corral.StatusQueued {
					t.Fatalf("%s jumped the queue: %s", other.ID, g.Status)
				}
			}
		}
		prev = got
	}
}

func testBacklogBounded(t *testing.T, s store.Store) {
	agent(t, s, "b", 1, corral.OverflowQueue, 2)
	submit(t, s, "b", "run")
	submit(t, s, "b", "q1")
	submit(t, s, "b", "q2")
	e := submit(t, s, "b", "q3")
	if e.Status != corral.StatusRejected {
		t.Fatalf("beyond the backlog: %s, want rejected", e.Status)
	}
	if e.Error == "" {
		t.Fatal("rejection has no message")
	}
}

func testFinishCAS(t *testing.T, s store.Store) {
	agent(t, s, "c", 3, corral.OverflowReject, 0)
	e := submit(t, s, "c", "x")
	if _, applied := finish(t, s, e.ID, corral.StatusSucceeded); !applied {
		t.Fatal("first finish not applied")
	}
	got, applied := finish(t, s, e.ID, corral.StatusFailed)
	if applied || got.Status != corral.StatusSucceeded {
		t.Fatalf("watchdog failure overwrote a success: applied=%v status=%s", applied, got.Status)
	}
	e2 := submit(t, s, "c", "y")
	finish(t, s, e2.ID, corral.StatusCancelled)
	if got, applied := finish(t, s, e2.ID, corral.StatusSucceeded); applied || got.Status != corral.StatusCancelled {
		t.Fatalf("cancelled is not sticky: %s", got.Status)
	}
	if _, _, err := s.Finish(ctx, e2.ID, &corral.Outcome{Status: corral.StatusRunning}, nil); err == nil {
		t.Fatal("finish with a non-terminal status accepted")
	}
	if n := len(slots(t, s, "c")); n != 0 {
		t.Fatalf("%d slots still held", n)
	}
}

func testReleaseOwnSlot(t *testing.T, s store.Store) {
	agent(t, s, "o", 3, corral.OverflowReject, 0)
	a, b, c := submit(t, s, "o", "a"), submit(t, s, "o", "b"), submit(t, s, "o", "c")
	finish(t, s, b.ID, corral.StatusCancelled)
	sl := slots(t, s, "o")
	if len(sl) != 2 {
		t.Fatalf("after one cancel %d slots held, want 2", len(sl))
	}
	held := map[string]bool{}
	for _, x := range sl {
		held[x.ExecutionID] = true
	}
	if !held[a.ID] || !held[c.ID] || held[b.ID] {
		t.Fatalf("wrong slots released: %v", sl)
	}
	finish(t, s, b.ID, corral.StatusFailed) // duplicate: must not release another
	if n := len(slots(t, s, "o")); n != 2 {
		t.Fatalf("duplicate finish released a slot: %d held", n)
	}
}

func testConcurrentSubmits(t *testing.T, s store.Store) {
	submitAndDrain(t, []store.Store{s}, "cc", 4, 100)
}

func testClaimOnce(t *testing.T, s store.Store) {
	agent(t, s, "cl", 1, corral.OverflowReject, 0)
	e := submit(t, s, "cl", "x")
	wins := race(t, 8, func(i int) error {
		_, err := s.Claim(ctx, e.ID, fmt.Sprint("w", i), time.Now(), "/log")
		return err
	})
	if wins != 1 {
		t.Fatalf("%d claims won, want 1", wins)
	}
	got := get(t, s, e.ID)
	if got.WorkerID == "" || got.StartedAt == nil {
		t.Fatalf("claim not recorded: %+v", got)
	}
	h := json.RawMessage(`{"pid":42,"start_ticks":7,"cgroup":"/x"}`)
	if err := s.SetRunInfo(ctx, e.ID, "other", store.RunInfo{Handle: h}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("run info from a non-owner: %v", err)
	}
	r, err := s.GetRun(ctx, e.ID)
	if err != nil || r.LogPath != "/log" {
		t.Fatalf("claim did not record the log path: %+v (%v)", r, err)
	}
	if err := s.SetRunInfo(ctx, e.ID, got.WorkerID, store.RunInfo{Handle: h, SessionID: "sess"}); err != nil {
		t.Fatal(err)
	}
	r, err = s.GetRun(ctx, e.ID)
	if err != nil || !sameJSON(r.Handle, h) || r.LogPath != "/log" || r.SessionID != "sess" {
		t.Fatalf("run info: %+v (%v)", r, err)
	}
}

func testCancel(t *testing.T, s store.Store) {
	agent(t, s, "k", 2, corral.OverflowQueue, 10)
	running := submit(t, s, "k", "r")
	unclaimed := submit(t, s, "k", "u")
	queued := submit(t, s, "k", "q")
	now := time.Now().UTC()
	if err := s.RegisterWorker(ctx, &store.Worker{ID: "w1", StartedAt: now, Heartbeat: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, running.ID, "w1", time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	if e, err := s.RequestCancel(ctx, queued.ID, time.Now()); err != nil || e.Status != corral.StatusCancelled {
		t.Fatalf("cancel queued: %v %+v", err, e)
	}
	if e, err := s.RequestCancel(ctx, unclaimed.ID, time.Now()); err != nil || e.Status != corral.StatusCancelled {
		t.Fatalf("cancel unclaimed: %v %+v", err, e)
	}
	if _, err := s.Claim(ctx, unclaimed.ID, "w2", time.Now(), ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim after cancel: %v", err)
	}
	e, err := s.RequestCancel(ctx, running.ID, time.Now())
	if err != nil || e.Status != corral.StatusRunning || !e.CancelRequested {
		t.Fatalf("cancel running: %v %+v", err, e)
	}
	ids, err := s.CancelRequested(ctx, "w1")
	if err != nil || len(ids) != 1 || ids[0] != running.ID {
		t.Fatalf("cancel requests of w1: %v %v", ids, err)
	}
	if ids, _ := s.CancelRequested(ctx, "w2"); len(ids) != 0 {
		t.Fatalf("w2 sees another's cancel: %v", ids)
	}
	finish(t, s, running.ID, corral.StatusCancelled)
	if _, err := s.RequestCancel(ctx, running.ID, time.Now()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("cancel terminal: %v", err)
	}
	if n := len(slots(t, s, "k")); n != 0 {
		t.Fatalf("%d slots held after cancelling all", n)
	}
}

func testGrowCapacity(t *testing.T, s store.Store) {
	a := agent(t, s, "g", 1, corral.OverflowQueue, 10)
	submit(t, s, "g", "1")
	q1, q2 := submit(t, s, "g", "2"), submit(t, s, "g", "3")
	a.MaxParallelTasks = 3
	if err := s.UpdateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if get(t, s, q1.ID).Status != corral.StatusRunning || get(t, s, q2.ID).Status != corral.StatusRunning {
		t.Fatal("raising capacity did not promote the queue")
	}
}

func testDeleteBusy(t *testing.T, s store.Store) {
	agent(t, s, "d", 1, corral.OverflowReject, 0)
	e := submit(t, s, "d", "x")
	if err := s.DeleteAgent(ctx, "d"); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("delete busy agent: %v", err)
	}
	finish(t, s, e.ID, corral.StatusSucceeded)
	if err := s.DeleteAgent(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, e.ID); got.Status != corral.StatusSucceeded {
		t.Fatal("finished execution lost with its agent")
	}
}

func testList(t *testing.T, s store.Store) {
	agent(t, s, "l1", 100, corral.OverflowReject, 0)
	agent(t, s, "l2", 100, corral.OverflowReject, 0)
	var ids []string
	for i := range 25 {
		e := submit(t, s, "l1", fmt.Sprint(i))
		ids = append(ids, e.ID)
	}
	submit(t, s, "l2", "other")
	finish(t, s, ids[0], corral.StatusFailed)
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		page, next, err := s.ListExecutions(ctx, store.ExecutionFilter{Agent: "l1", Limit: 10, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for i, e := range page {
			if seen[e.ID] {
				t.Fatalf("%s listed twice", e.ID)
			}
			seen[e.ID] = true
			if i > 0 && page[i-1].CreatedAt.Before(e.CreatedAt) {
				t.Fatal("not newest first")
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 25 || pages != 3 {
		t.Fatalf("listed %d in %d pages, want 25 in 3", len(seen), pages)
	}
	failed, _, _ := s.ListExecutions(ctx, store.ExecutionFilter{Statuses: []corral.Status{corral.StatusFailed}})
	if len(failed) != 1 || failed[0].ID != ids[0] {
		t.Fatalf("status filter: %v", failed)
	}
	future, _, _ := s.ListExecutions(ctx, store.ExecutionFilter{Since: time.Now().Add(time.Hour)})
	if len(future) != 0 {
		t.Fatalf("since filter: %d", len(future))
	}
	if _, _, err := s.ListExecutions(ctx, store.ExecutionFilter{Cursor: "garbage"}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatal("bad cursor accepted")
	}
}

func testScheduleFire(t *testing.T, s store.Store) {
	agent(t, s, "s", 5, corral.OverflowReject, 0)
	at := time.Now().UTC().Truncate(time.Second)
	sc := &corral.Schedule{ID: "sch1", Agent: "s", Cron: "* * * * * *", Input: "tick", Enabled: true, Missed: corral.MissedSkip, NextFireAt: &at, CreatedAt: at}
	if err := s.CreateSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSchedule(ctx, &corral.Schedule{ID: "x", Agent: "nobody"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("schedule for unknown agent: %v", err)
	}
	if next, ok, err := s.NextFire(ctx); err != nil || !ok || !next.Equal(at) {
		t.Fatalf("next fire: %v %v %v", next, ok, err)
	}
	due, err := s.DueSchedules(ctx, at)
	if err != nil || len(due) != 1 {
		t.Fatalf("due: %v %v", due, err)
	}
	wins := race(t, 6, func(int) error {
		adm, err := s.FireSchedule(ctx, "sch1", at, at.Add(time.Second), &store.Submission{Agent: "s", Input: "tick", Trigger: corral.TriggerSchedule, ScheduleID: "sch1"})
		if err == nil && adm.Execution.Trigger != corral.TriggerSchedule {
			t.Error("trigger not recorded")
		}
		return err
	})
	if wins != 1 {
		t.Fatalf("%d workers fired the same time, want 1", wins)
	}
	got, _ := s.GetSchedule(ctx, "sch1")
	if got.NextFireAt == nil || !got.NextFireAt.Equal(at.Add(time.Second)) || got.LastExecution == "" {
		t.Fatalf("after fire: %+v", got)
	}
	got.Enabled = false
	if err := s.UpdateSchedule(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.NextFire(ctx); ok {
		t.Fatal("disabled schedule still pending")
	}
	list, _, err := s.ListSchedules(ctx, store.ScheduleFilter{Agent: "s"})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	if err := s.DeleteSchedule(ctx, "sch1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSchedule(ctx, "sch1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted schedule: %v", err)
	}
}

func testWorkers(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	w := &store.Worker{ID: "w1", Host: "h", Pid: 1, StartedAt: now, Heartbeat: now}
	if err := s.RegisterWorker(ctx, w); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Minute)
	if err := s.Heartbeat(ctx, "w1", later); err != nil {
		t.Fatal(err)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 1 || !ws[0].Heartbeat.Equal(later.Truncate(time.Microsecond)) {
		t.Fatalf("workers: %+v %v", ws, err)
	}
	if err := s.DeleteWorker(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Heartbeat(ctx, "w1", later); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("heartbeat of a deleted worker: %v", err)
	}
}

func testUnclaimed(t *testing.T, s store.Store) {
	agent(t, s, "u", 2, corral.OverflowReject, 0)
	a, b := submit(t, s, "u", "a"), submit(t, s, "u", "b")
	if _, err := s.Claim(ctx, a.ID, "w", time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	un, err := s.Unclaimed(ctx, time.Now().Add(time.Second))
	if err != nil || len(un) != 1 || un[0].ID != b.ID {
		t.Fatalf("unclaimed: %v %v", un, err)
	}
	if err := s.Redispatch(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Redispatch(ctx, a.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("redispatch of a claimed execution: %v", err)
	}
}

// testEngine runs four executions of a two-slot agent through the job
// engine. Each dispatch is also claimed by a second worker, as a
// duplicate dispatch would be: only one claim per execution may win, and
// the queued two must run when slots are released. Mutations caught: a claim
// without its compare-and-set (an execution claimed twice), a finish that
// releases no slot (build tag mutation_slotrelease: the queued two never
// run).
func testEngine(t *testing.T, s store.Store) {
	agent(t, s, "e", 2, corral.OverflowQueue, 10)
	var mu sync.Mutex
	claims := map[string]int{}
	done := make(chan string, 10)
	err := startDispatcher(ctx, s, store.DispatchConfig{WorkerID: "w-engine", Run: func(rctx context.Context, id string) error {
		won := 0
		for _, w := range []string{"w-engine", "w-duplicate"} {
			_, err := s.Claim(rctx, id, w, time.Now(), "")
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				return err
			}
		}
		if won == 0 {
			return nil // a duplicate dispatch of a claimed execution
		}
		mu.Lock()
		claims[id] += won
		mu.Unlock()
		s.Finish(rctx, id, &corral.Outcome{Status: corral.StatusSucceeded}, nil)
		done <- id
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Dispatcher().Stop(ctx)
	want := map[string]bool{}
	for i := range 4 {
		want[submit(t, s, "e", fmt.Sprint(i)).ID] = true
	}
	timeout := time.After(20 * time.Second)
	for range 4 {
		select {
		case id := <-done:
			if !want[id] {
				t.Fatalf("ran unknown %s", id)
			}
		case <-timeout:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("engine ran %d of 4 within 20s (claims %v): are slots released at finish?", len(claims), claims)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range claims {
		if n != 1 {
			t.Fatalf("%s claimed %d times", id, n)
		}
	}
}

func testLabels(t *testing.T, s store.Store) {
	a := &corral.Agent{Name: "lab", Kind: corral.KindShell, Labels: []string{"gpu", "eu-west", "gpu"}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAgent(ctx, "lab")
	if err != nil || fmt.Sprint(got.Labels) != "[eu-west gpu]" {
		t.Fatalf("labels: %v %v", got.Labels, err)
	}
	for _, bad := range [][]string{{""}, {"GPU"}, {"a b"}, {"-x"}} {
		b := &corral.Agent{Name: "bad", Kind: corral.KindShell, Labels: bad}
		if err := b.Normalize(); err == nil {
			t.Errorf("labels %q accepted", bad)
		}
	}
	if !corral.Serves([]string{"a", "b"}, []string{"b"}) || corral.Serves([]string{"a"}, []string{"a", "b"}) || !corral.Serves(nil, nil) {
		t.Fatal("Serves")
	}
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
