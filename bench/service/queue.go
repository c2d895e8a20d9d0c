package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
)

// runQueue measures queue turnover: n trivial tasks submitted at once to
// an agent with 4 slots and overflow: queue, so that all but 4 wait and
// each run's end starts the next. It prints tasks per second and the
// slot idle time between a run's end and the next run's claim (from
// the records: a promoted execution is admitted in the transaction that
// ends the run before it, and started when claimed), beside River's own
// throughput on an identical SQLite file: n no-op jobs through 4
// workers, measured in the same run.
func runQueue(ctx context.Context, open func() store.Store, label string, n int) {
	dir := benchutil.TempDir("", "corral-queue-bench-")
	defer os.RemoveAll(dir)
	st := open()
	var mu sync.Mutex
	released := map[string]time.Time{} // execution -> when its end committed
	svc, err := service.New(service.Config{Store: st, DataDir: dir, OnSlotReleased: func(id string, _ time.Duration) {
		now := time.Now()
		mu.Lock()
		released[id] = now
		mu.Unlock()
	}})
	benchutil.Check(err)
	benchutil.Check(svc.Start(ctx))
	defer svc.Close(ctx)
	_, err = svc.CreateAgent(ctx, &corral.Agent{Name: "q", Kind: corral.KindShell, MaxParallelTasks: 4, Overflow: corral.OverflowQueue, MaxBacklog: n + 10})
	benchutil.Check(err)
	t0, self0, kids0 := time.Now(), cpu(), childCPU()
	for range n {
		_, err := svc.Submit(ctx, service.Task{Agent: "q", Input: "true"})
		benchutil.Check(err)
	}
	waitAll(ctx, svc, "q", n)
	elapsed := time.Since(t0)
	self, kids := cpu()-self0, childCPU()-kids0
	// A promoted execution is admitted in the transaction that ends the
	// run before it, at that run's finish time: match them by it.
	var all []*corral.Execution
	cursor := ""
	for {
		list, next, err := svc.Executions(ctx, service.ExecutionFilter{Agent: "q", Limit: 1000, Cursor: cursor})
		benchutil.Check(err)
		all = append(all, list...)
		if next == "" {
			break
		}
		cursor = next
	}
	commitOf := map[time.Time]time.Time{}
	mu.Lock()
	for _, e := range all {
		if at, ok := released[e.ID]; ok && e.FinishedAt != nil {
			commitOf[e.FinishedAt.UTC()] = at
		}
	}
	mu.Unlock()
	var idle, gap []time.Duration
	for _, e := range all {
		if e.AdmittedAt == nil || e.StartedAt == nil || e.AdmittedAt.Sub(e.CreatedAt) < time.Millisecond {
			continue // admitted at once, not promoted
		}
		gap = append(gap, e.StartedAt.Sub(*e.AdmittedAt))
		if at, ok := commitOf[e.AdmittedAt.UTC()]; ok {
			idle = append(idle, e.StartedAt.Sub(at))
		}
	}
	fmt.Printf("queue turnover, %s: %d trivial tasks (bash -c true) queued at once, 4 slots, overflow queue\n", label, n)
	fmt.Printf("  corral serve, queued tasks          %7.1f tasks/s   (target >= 300/s)\n", float64(n)/elapsed.Seconds())
	fmt.Printf("  CPU per task: service %s, the task's processes %s (2 cores: at most %.0f tasks/s on an idle machine)\n",
		(self / time.Duration(n)).Round(time.Microsecond), (kids / time.Duration(n)).Round(time.Microsecond), 2*float64(n)/(self+kids).Seconds())
	fmt.Printf("  reference, same directory's filesystem: creating %d files costs %s of CPU each (each task creates one: its log)\n", n, createCost(dir, n))
	fmt.Printf("  freed slot -> next claimed, from the release's commit (n=%d)  p50 %8s  p99 %8s   (target <= 5ms)\n", len(idle), pct(idle, 50), pct(idle, 99))
	fmt.Printf("  slot idle, from the run's tree gone, release transaction included (n=%d)  p50 %8s  p99 %8s\n", len(gap), pct(gap, 50), pct(gap, 99))
}

// riverRaw measures River alone on a fresh SQLite file opened as the
// store opens its own: n no-op jobs inserted at once, worked by 4
// workers, from the insert to the last completion.
func riverRaw(ctx context.Context, n int) float64 {
	dir := benchutil.TempDir("", "corral-river-bench-")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "river.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	benchutil.Check(err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	driver := riversqlite.New(db)
	mig, err := rivermigrate.New(driver, nil)
	benchutil.Check(err)
	_, err = mig.Migrate(ctx, rivermigrate.DirectionUp, nil)
	benchutil.Check(err)
	done := make(chan struct{}, n)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[noopArgs]) error {
		done <- struct{}{}
		return nil
	}))
	c, err := river.NewClient(driver, &river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 200 * time.Millisecond})
	benchutil.Check(err)
	benchutil.Check(c.Start(ctx))
	defer c.Stop(ctx)
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}}
	}
	t0 := time.Now()
	_, err = c.InsertManyFast(ctx, params)
	benchutil.Check(err)
	for range n {
		<-done
	}
	return float64(n) / time.Since(t0).Seconds()
}

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

// createCost measures what creating (and closing) an empty file costs in
// dir, in this process's CPU time: n files in a fresh subdirectory, as
// the service's logs directory is.
func createCost(dir string, n int) time.Duration {
	d := benchutil.TempDir(dir, "create-cost-")
	defer os.RemoveAll(d)
	c0 := cpu()
	for i := range n {
		f, err := os.OpenFile(filepath.Join(d, fmt.Sprintf("%06d.jsonl", i)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		benchutil.Check(err)
		f.Close()
	}
	return ((cpu() - c0) / time.Duration(n)).Round(time.Microsecond)
}
