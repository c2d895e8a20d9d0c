package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// Attempts: a failed run's next attempt is recorded by the transaction
// that records its end, once; it waits for its time without a slot, then
// takes a free one or joins the queue.

// fail finishes running execution id as a failure with next.
func fail(t *testing.T, s store.Store, id string, next *store.NextAttempt) (*corral.Execution, bool) {
	t.Helper()
	e, applied, err := s.Finish(ctx, id, &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorRateLimit, CostUSD: 0.5}, next)
	if err != nil {
		t.Fatal(err)
	}
	return e, applied
}

func testNextAttemptOnce(t *testing.T, s store.Store) {
	agent(t, s, "re", 1, corral.OverflowReject, 0)
	const tp, ts = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "v=1"
	adm, err := s.Submit(ctx, &store.Submission{Agent: "re", Input: "x", TraceParent: tp, TraceState: ts})
	if err != nil {
		t.Fatal(err)
	}
	e := adm.Execution
	at := time.Now().UTC().Add(time.Hour).Truncate(time.Millisecond)
	done, applied := fail(t, s, e.ID, &store.NextAttempt{At: at, Reason: "attempt 1 of 3 failed", ResumeSession: "sess-1"})
	if !applied || done.RetriedBy == "" {
		t.Fatalf("end with a next attempt: applied %v, retried by %q", applied, done.RetriedBy)
	}
	if _, again := fail(t, s, e.ID, &store.NextAttempt{At: at, Reason: "a duplicate end"}); again {
		t.Fatal("a second end applied")
	}
	list, _, err := s.ListExecutions(ctx, store.ExecutionFilter{Agent: "re"})
	if err != nil || len(list) != 2 {
		t.Fatalf("%d executions (%v), want the run and one next attempt", len(list), err)
	}
	next := get(t, s, done.RetriedBy)
	if next.Status != corral.StatusWaiting || next.Attempt != 2 || next.RetryOf != e.ID || next.Trigger != corral.TriggerRetry ||
		next.NextAttemptAt == nil || !next.NextAttemptAt.Equal(at) || next.RetryReason != "attempt 1 of 3 failed" ||
		next.ResumeSession != "sess-1" || next.ChainCostUSD != 0.5 || next.Input != "x" ||
		next.TraceParent != tp || next.TraceState != ts || get(t, s, e.ID).TraceParent != tp {
		t.Fatalf("next attempt %+v", next)
	}
	if held := slots(t, s, "re"); len(held) != 0 {
		t.Fatalf("a waiting attempt holds slots %+v", held)
	}
	due, when, err := s.DueAttempts(ctx, time.Now().UTC())
	if err != nil || len(due) != 0 || !when.Equal(at) {
		t.Fatalf("due %v next %v (%v), want none due and the next at %v", due, when, err, at)
	}
	if _, err := s.AdmitAttempt(ctx, next.ID, time.Now().UTC()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("an attempt admitted before its time: %v", err)
	}
}

func testAdmitAttempt(t *testing.T, s store.Store) {
	agent(t, s, "ra", 1, corral.OverflowReject, 0)
	e := submit(t, s, "ra", "x")
	done, _ := fail(t, s, e.ID, &store.NextAttempt{At: time.Now().UTC().Add(-time.Second)})
	due, _, err := s.DueAttempts(ctx, time.Now().UTC())
	if err != nil || len(due) != 1 || due[0] != done.RetriedBy {
		t.Fatalf("due %v (%v), want %s", due, err, done.RetriedBy)
	}
	a, err := s.AdmitAttempt(ctx, done.RetriedBy, time.Now().UTC())
	if err != nil || a.Status != corral.StatusRunning || a.Slot != 1 || a.NextAttemptAt != nil {
		t.Fatalf("admitted attempt %+v (%v)", a, err)
	}
	if _, err := s.AdmitAttempt(ctx, done.RetriedBy, time.Now().UTC()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("an attempt admitted twice: %v", err)
	}
	// The agent's slot is taken: the next due attempt queues, and the
	// slot's release promotes it.
	third, _ := fail(t, s, a.ID, &store.NextAttempt{At: time.Now().UTC().Add(-time.Second)})
	other := submit(t, s, "ra", "y")
	q, err := s.AdmitAttempt(ctx, third.RetriedBy, time.Now().UTC())
	if err != nil || q.Status != corral.StatusQueued {
		t.Fatalf("attempt with no free slot: %+v (%v)", q, err)
	}
	finish(t, s, other.ID, corral.StatusSucceeded)
	if got := get(t, s, third.RetriedBy); got.Status != corral.StatusRunning || got.Attempt != 3 {
		t.Fatalf("queued attempt after a release: %s attempt %d", got.Status, got.Attempt)
	}
}

func testCancelWaiting(t *testing.T, s store.Store) {
	agent(t, s, "rc", 1, corral.OverflowReject, 0)
	e := submit(t, s, "rc", "x")
	done, _ := fail(t, s, e.ID, &store.NextAttempt{At: time.Now().UTC().Add(time.Hour)})
	if err := s.DeleteAgent(ctx, "rc"); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("agent with a waiting attempt deleted: %v", err)
	}
	c, err := s.RequestCancel(ctx, done.RetriedBy, time.Now().UTC())
	if err != nil || c.Status != corral.StatusCancelled {
		t.Fatalf("cancel of a waiting attempt: %+v (%v)", c, err)
	}
	if due, next, _ := s.DueAttempts(ctx, time.Now().UTC().Add(2*time.Hour)); len(due) != 0 || !next.IsZero() {
		t.Fatalf("a cancelled attempt is still due: %v %v", due, next)
	}
}

func testSessionStates(t *testing.T, s store.Store) {
	data := bytes.Repeat([]byte{0x1f, 0x8b, 0, 1, 2}, 1000)
	st := &corral.SessionState{SessionID: "sess-a", CLI: "claude", Path: "projects/-w/sess-a.jsonl", Data: data,
		CostUSD: 0.25, Usage: json.RawMessage(`{"input_tokens":10}`), UpdatedAt: time.Now().UTC().Add(-time.Hour)}
	if err := s.PutSessionState(ctx, st); err != nil {
		t.Fatal(err)
	}
	st.CostUSD = 0.5
	if err := s.PutSessionState(ctx, st); err != nil {
		t.Fatalf("replacing a session's state: %v", err)
	}
	got, err := s.GetSessionState(ctx, "sess-a")
	if err != nil || got.CLI != "claude" || got.Path != st.Path || !bytes.Equal(got.Data, data) || got.CostUSD != 0.5 || !sameJSON(got.Usage, st.Usage) {
		t.Fatalf("kept session state %+v (%v)", got, err)
	}
	if _, err := s.GetSessionState(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown session: %v", err)
	}
	if err := s.PutSessionState(ctx, &corral.SessionState{SessionID: "big", Data: make([]byte, corral.MaxSessionState+1)}); err == nil {
		t.Fatal("a state over the bound was kept")
	}
	if n, err := s.PruneSessionStates(ctx, time.Now().UTC().Add(-time.Minute)); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want the one older than a minute", n, err)
	}
	if _, err := s.GetSessionState(ctx, "sess-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a pruned state: %v", err)
	}
}
