package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// The checks of this file pin how records come back: every field a rule
// edits in place, and every time a column holds, read as it was written.

func testRunInfoSetsOnlyItsFields(t *testing.T, s store.Store) {
	agent(t, s, "ri", 1, corral.OverflowReject, 0)
	e := submit(t, s, "ri", "x")
	started := time.Now().UTC()
	claimed, err := s.Claim(ctx, e.ID, "w1", started, "/logs/first")
	if err != nil {
		t.Fatal(err)
	}
	if claimed.WorkerID != "w1" || claimed.StartedAt == nil || !claimed.StartedAt.Equal(started) || claimed.LogPath != "/logs/first" {
		t.Fatalf("claim returned worker %q, started %v (want %v), log %q", claimed.WorkerID, claimed.StartedAt, started, claimed.LogPath)
	}
	h := json.RawMessage(`{"pid":42,"start_ticks":7,"cgroup":"/corral/run-1"}`)
	info := store.RunInfo{Handle: h, Containment: corral.ContainmentCgroup, SessionID: "sess-1", NumTurns: 3, CostUSD: 0.25,
		Usage: json.RawMessage(`{"input_tokens":10,"output_tokens":5}`)}
	if err := s.SetRunInfo(ctx, e.ID, "w1", info); err != nil {
		t.Fatal(err)
	}
	// Zero fields leave what is there; a new usage replaces the old one
	// whole.
	if err := s.SetRunInfo(ctx, e.ID, "w1", store.RunInfo{NumTurns: 4, Usage: json.RawMessage(`{"input_tokens":12}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunInfo(ctx, e.ID, "w1", store.RunInfo{}); err != nil {
		t.Fatalf("empty run info: %v", err)
	}
	got, err := s.GetRun(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(got.Handle, h) || got.Containment != corral.ContainmentCgroup {
		t.Fatalf("handle %s, containment %q", got.Handle, got.Containment)
	}
	if got.LogPath != "/logs/first" || got.SessionID != "sess-1" || got.NumTurns != 4 || got.CostUSD != 0.25 {
		t.Fatalf("log %q, session %q, turns %d, cost %v", got.LogPath, got.SessionID, got.NumTurns, got.CostUSD)
	}
	var usage map[string]int
	if err := json.Unmarshal(got.Usage, &usage); err != nil || len(usage) != 1 || usage["input_tokens"] != 12 {
		t.Fatalf("usage %s (%v), want the second one whole", got.Usage, err)
	}
	if got.WorkerID != "w1" || got.Status != corral.StatusRunning || got.Input != "x" || got.Slot != 1 {
		t.Fatalf("run info changed other fields: %+v", got)
	}
	if err := s.SetRunInfo(ctx, "nope", "w1", store.RunInfo{SessionID: "s"}); err == nil {
		t.Fatal("run info of an unknown execution accepted")
	}
	// What was salvaged survives a finish that reports none of it.
	done, applied, err := s.Finish(ctx, e.ID, &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorCrash}, nil)
	if err != nil || !applied {
		t.Fatalf("finish: %v, applied %v", err, applied)
	}
	if done.SessionID != "sess-1" || done.NumTurns != 4 || done.CostUSD != 0.25 || len(done.Usage) == 0 || done.Containment != corral.ContainmentCgroup {
		t.Fatalf("finish lost the salvage: %+v", done)
	}
	if r, err := s.GetRun(ctx, e.ID); err != nil || !sameJSON(r.Handle, h) {
		t.Fatalf("finish lost the handle: %s (%v)", r.Handle, err)
	}
}

func testSlotsAndStats(t *testing.T, s store.Store) {
	agent(t, s, "st1", 3, corral.OverflowQueue, 10)
	agent(t, s, "st2", 1, corral.OverflowReject, 0)
	e1, e2 := submit(t, s, "st1", "1"), submit(t, s, "st1", "2")
	submit(t, s, "st2", "3")
	submit(t, s, "st2", "rejected")
	sl := slots(t, s, "st1")
	if len(sl) != 2 || sl[0].No != 1 || sl[0].ExecutionID != e1.ID || sl[1].No != 2 || sl[1].ExecutionID != e2.ID {
		t.Fatalf("slots %+v, want 1: %s and 2: %s", sl, e1.ID, e2.ID)
	}
	if !sl[0].Since.Equal(e1.AdmittedAt.Truncate(time.Microsecond)) || sl[0].Since.Location() != time.UTC {
		t.Fatalf("slot 1 held since %v, want the admission time %v in UTC", sl[0].Since, *e1.AdmittedAt)
	}
	finish(t, s, e1.ID, corral.StatusSucceeded)
	if sl := slots(t, s, "st1"); len(sl) != 1 || sl[0].No != 2 {
		t.Fatalf("after releasing slot 1: %+v", sl)
	}
	if e3 := submit(t, s, "st1", "3"); e3.Slot != 1 {
		t.Fatalf("the lowest free slot is 1, got %d", e3.Slot)
	}
	if sl, err := s.Slots(ctx, "nope"); err == nil {
		t.Fatalf("slots of an unknown agent: %v", sl)
	}
	stats, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(stats)
	want := fmt.Sprint([]corral.AgentStats{
		{Agent: "st1", Capacity: 3, SlotsUsed: 2, ByStatus: map[corral.Status]int{corral.StatusRunning: 2, corral.StatusSucceeded: 1}},
		{Agent: "st2", Capacity: 1, SlotsUsed: 1, ByStatus: map[corral.Status]int{corral.StatusRunning: 1, corral.StatusRejected: 1}},
	})
	if got != want {
		t.Fatalf("stats\n got %s\nwant %s", got, want)
	}
}

func testListFilters(t *testing.T, s store.Store) {
	agent(t, s, "lf", 10, corral.OverflowReject, 0)
	a, b, c := submit(t, s, "lf", "a"), submit(t, s, "lf", "b"), submit(t, s, "lf", "c")
	if _, err := s.Claim(ctx, b.ID, "w-list", time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	finish(t, s, a.ID, corral.StatusFailed)
	finish(t, s, c.ID, corral.StatusSucceeded)
	ids := func(f store.ExecutionFilter) string {
		t.Helper()
		list, _, err := s.ListExecutions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range list {
			out = append(out, e.Input)
		}
		return fmt.Sprint(out)
	}
	if got := ids(store.ExecutionFilter{Agent: "lf", Statuses: []corral.Status{corral.StatusFailed, corral.StatusSucceeded}}); got != "[c a]" {
		t.Errorf("two statuses: %s, want [c a]", got)
	}
	if got := ids(store.ExecutionFilter{WorkerID: "w-list"}); got != "[b]" {
		t.Errorf("worker: %s, want [b]", got)
	}
	if got := ids(store.ExecutionFilter{Agent: "lf", Since: b.CreatedAt, Until: c.CreatedAt}); got != "[b]" {
		t.Errorf("since b until c: %s, want [b]", got)
	}
	if got := ids(store.ExecutionFilter{Agent: "lf", Until: b.CreatedAt}); got != "[a]" {
		t.Errorf("until b: %s, want [a]", got)
	}
	list, next, err := s.ListExecutions(ctx, store.ExecutionFilter{Agent: "lf", Limit: 2})
	if err != nil || len(list) != 2 || next == "" {
		t.Fatalf("first page: %d, next %q, %v", len(list), next, err)
	}
	if got := ids(store.ExecutionFilter{Agent: "lf", Cursor: next}); got != "[a]" {
		t.Errorf("after the cursor of b: %s, want [a]", got)
	}
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
