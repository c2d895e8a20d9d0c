package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/storetest"
)

// cutStore is a store whose heartbeats and pings fail while cut is set,
// as if the worker were cut from the database.
type cutStore struct {
	store.Store
	cut atomic.Bool
}

var errCut = errors.New("connection refused (test)")

func (c *cutStore) Heartbeat(ctx context.Context, id string, now time.Time) error {
	if c.cut.Load() {
		return errCut
	}
	return c.Store.Heartbeat(ctx, id, now)
}

func (c *cutStore) Ping(ctx context.Context) error {
	if c.cut.Load() {
		return errCut
	}
	return c.Store.Ping(ctx)
}

func TestWorkerThatCannotRenewItsLeaseStopsItsRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		testutil.CheckFDs(t)
		tag := testutil.Tag(t)
		dir := t.TempDir()
		_, open := backend.Fresh(t, dir)
		cs := &cutStore{Store: open()}
		svc, err := service.New(service.Config{Store: cs, DataDir: dir, Lease: 2 * time.Second, Heartbeat: 200 * time.Millisecond, Env: []string{testutil.TagEnvVar(tag)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(bg); err != nil {
			t.Fatal(err)
		}
		defer svc.Close(bg)
		if err := svc.Ready(bg); err != nil {
			t.Fatalf("not ready after start: %v", err)
		}
		svc.CreateAgent(bg, &corral.Agent{Name: "f", Kind: corral.KindShell, MaxParallelTasks: 2})
		e, err := svc.Submit(bg, service.Task{Agent: "f", Input: "sleep 300 & setsid sleep 300 & sleep 300"})
		if err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 20*time.Second, "run started", func() bool { x, _ := svc.Execution(bg, e.ID); return x.Containment != "" })
		cut := time.Now()
		cs.cut.Store(true)
		var got *corral.Execution
		testutil.WaitFor(t, 20*time.Second, "the run stopped by its own worker", func() bool {
			got, _ = svc.Execution(bg, e.ID)
			return got.Status.Terminal()
		})
		took := time.Since(cut)
		if got.Status != corral.StatusInterrupted || !strings.Contains(got.Error, "could not renew its lease") {
			t.Fatalf("fenced run: %s %q", got.Status, got.Error)
		}
		// Fenced before the others may declare it dead (2 s).
		if took > 2*time.Second+time.Second {
			t.Fatalf("fenced %v after the cut; the lease is 2s", took)
		}
		t.Logf("run fenced %v after the cut", took.Round(time.Millisecond))
		testutil.AssertNoTagged(t, tag, 5*time.Second)
		if err := svc.Ready(bg); err == nil {
			t.Fatal("ready while cut from the database")
		}
		cs.cut.Store(false)
		testutil.WaitFor(t, 10*time.Second, "ready again once the database answers", func() bool { return svc.Ready(bg) == nil })
		again, err := svc.Submit(bg, service.Task{Agent: "f", Input: "echo back"})
		if err != nil {
			t.Fatal(err)
		}
		waitDone(t, svc, again.ID, corral.StatusSucceeded)
	})
}

func waitDone(t *testing.T, svc *service.Service, id string, want corral.Status) *corral.Execution {
	t.Helper()
	var e *corral.Execution
	testutil.WaitFor(t, 30*time.Second, "execution "+id+" finishing", func() bool {
		e, _ = svc.Execution(bg, id)
		return e != nil && e.Status.Terminal()
	})
	if e.Status != want {
		t.Fatalf("execution %s: %s (%s), want %s", id, e.Status, e.Error, want)
	}
	return e
}

func TestCloseLetsRunsFinishWithinTheShutdownTimeoutThenInterrupts(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		testutil.CheckFDs(t)
		tag := testutil.Tag(t)
		dir := t.TempDir()
		_, open := backend.Fresh(t, dir)
		st := open()
		start := func(timeout time.Duration) *service.Service {
			svc, err := service.New(service.Config{Store: st, DataDir: dir, ShutdownTimeout: timeout, Env: []string{testutil.TagEnvVar(tag)}})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(bg); err != nil {
				t.Fatal(err)
			}
			return svc
		}
		svc := start(20 * time.Second)
		svc.CreateAgent(bg, &corral.Agent{Name: "g", Kind: corral.KindShell, MaxParallelTasks: 2, Overflow: corral.OverflowQueue})
		short, _ := svc.Submit(bg, service.Task{Agent: "g", Input: "sleep 1; echo finished"})
		testutil.WaitFor(t, 20*time.Second, "run started", func() bool { x, _ := svc.Execution(bg, short.ID); return x.Containment != "" })
		if err := svc.Close(bg); err != nil {
			t.Fatal(err)
		}
		if e, _ := st.GetExecution(bg, short.ID); e.Status != corral.StatusSucceeded || e.Stdout != "finished\n" {
			t.Fatalf("a run shorter than the shutdown timeout: %s %q", e.Status, e.Stdout)
		}
		if _, err := svc.Submit(bg, service.Task{Agent: "g", Input: "true"}); !errors.Is(err, service.ErrClosed) {
			t.Fatalf("submit after close: %v", err)
		}

		svc = start(500 * time.Millisecond)
		long, _ := svc.Submit(bg, service.Task{Agent: "g", Input: "sleep 300"})
		testutil.WaitFor(t, 20*time.Second, "run started", func() bool { x, _ := svc.Execution(bg, long.ID); return x.Containment != "" })
		t0 := time.Now()
		if err := svc.Close(bg); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(t0); took > 15*time.Second {
			t.Fatalf("close took %v with a 500ms shutdown timeout", took)
		}
		if e, _ := st.GetExecution(bg, long.ID); e.Status != corral.StatusInterrupted {
			t.Fatalf("a run longer than the shutdown timeout: %s", e.Status)
		}
		if sl, _ := st.Slots(bg, "g"); len(sl) != 0 {
			t.Fatalf("slots held after close: %v", sl)
		}
		testutil.AssertNoTagged(t, tag, 5*time.Second)
	})
}

func TestAgentPinnedToLabelsRunsOnlyOnWorkersWithThem(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		testutil.CheckFDs(t)
		tag := testutil.Tag(t)
		dir := t.TempDir()
		_, open := backend.Fresh(t, dir)
		var svcs []*service.Service
		for i, labels := range [][]string{nil, {"gpu", "eu"}} {
			svc, err := service.New(service.Config{Store: open(), DataDir: dir, WorkerID: fmt.Sprint("w", i), Labels: labels, Env: []string{testutil.TagEnvVar(tag)}})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(bg); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close(bg) })
			svcs = append(svcs, svc)
		}
		// Created through the worker without the labels: the other one
		// learns of the new label set on its next heartbeat.
		if _, err := svcs[0].CreateAgent(bg, &corral.Agent{Name: "gpu-job", Kind: corral.KindShell, MaxParallelTasks: 10, Labels: []string{"gpu"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := svcs[0].CreateAgent(bg, &corral.Agent{Name: "bad", Kind: corral.KindShell, Labels: []string{"Not A Label"}}); !errors.Is(err, service.ErrInvalid) {
			t.Fatalf("bad label: %v", err)
		}
		var ids []string
		for i := range 6 {
			e, err := svcs[i%2].Submit(bg, service.Task{Agent: "gpu-job", Input: "echo ok"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		for _, id := range ids {
			if e := waitDone(t, svcs[0], id, corral.StatusSucceeded); e.WorkerID != "w1" {
				t.Fatalf("a task of an agent pinned to gpu ran on %s, which lacks the label", e.WorkerID)
			}
		}
		if _, err := service.New(service.Config{Store: open(), DataDir: dir, Labels: []string{"UPPER"}}); err == nil {
			t.Fatal("a worker with an invalid label was created")
		}
		testutil.AssertNoTagged(t, tag, 5*time.Second)
	})
}
