package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/storetest"
)

// TestFleetWorkerHoldsAtMostDBMaxConnsUnderLoad runs two workers with
// the smallest connection bound under a burst of short tasks, counting
// every few milliseconds each worker's connections as the server sees
// them (pg_stat_activity, by the application_name corral/WORKER_ID the
// worker gives them): neither ever holds more than its bound, and every
// task succeeds (the bound slows a worker, never stalls it). From the
// records: every submitted task is recorded once and succeeded, none
// besides them (no loss), and the database's log of every slot taken and
// released (storetest.LogSlots) never shows a slot held twice or the
// agent holding more than its slots (no overbooking).
func TestFleetWorkerHoldsAtMostDBMaxConnsUnderLoad(t *testing.T) {
	bound := postgres.MinConns
	f := newFleet(t, 2, "--db-max-conns", fmt.Sprint(bound), "--max-runs", "8", "--shutdown-timeout", "0s")
	admin, err := pgxpool.New(bg, f.db)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var mu sync.Mutex
	peak := map[string]int{}
	samples := 0
	ctx, stop := context.WithCancel(bg)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			rows, err := admin.Query(ctx, `SELECT application_name, count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name LIKE 'corral/%' GROUP BY 1`)
			if err != nil {
				continue
			}
			mu.Lock()
			for rows.Next() {
				var app string
				var n int
				if rows.Scan(&app, &n) == nil {
					peak[app] = max(peak[app], n)
				}
			}
			samples++
			mu.Unlock()
			rows.Close()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	createAgent(t, f.workers[0].c, &client.Agent{Name: "burst", MaxParallelTasks: 8, Overflow: corral.OverflowQueue, MaxBacklog: 1000})
	logConn, err := pgx.Connect(bg, f.db)
	if err != nil {
		t.Fatal(err)
	}
	defer logConn.Close(bg)
	if err := storetest.LogSlots(bg, logConn); err != nil {
		t.Fatal(err)
	}
	const total = 300
	var wg sync.WaitGroup
	errs := make(chan error, total)
	ids := make(chan string, total)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range total / 16 {
				e, err := f.workers[i%2].c.Submit(bg, "burst", "true", 0)
				if err != nil {
					errs <- err
					continue
				}
				ids <- e.ID
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Fatalf("submission failed: %v", err)
	}
	n := total / 16 * 16
	statuses := func() map[string]int {
		m := map[string]int{}
		rows, err := admin.Query(bg, `SELECT status, count(*) FROM corral_executions GROUP BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var st string
			var k int
			rows.Scan(&st, &k)
			m[st] = k
		}
		return m
	}
	deadline := time.Now().Add(4 * time.Minute)
	for st := statuses(); st["succeeded"] != n; st = statuses() {
		if time.Now().After(deadline) || st["failed"]+st["interrupted"] > 0 {
			t.Fatalf("%d tasks: %v\n%s\n%s\n%s", n, st, failures(t, admin), f.workers[0].log(), f.workers[1].log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	<-sampled
	checkNoLoss(t, admin, ids)
	replay, err := storetest.CheckSlots(bg, logConn)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slot log: %d taken, %d released, at most %d of %d held", replay.Takes, replay.Releases, replay.MostHeld, replay.MostAllowed)
	if p := replay.Overbooked(); p != "" || replay.Takes != n || replay.Releases != n {
		t.Errorf("slot log of %d tasks: %d taken, %d released; %s", n, replay.Takes, replay.Releases, p)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("most connections per worker over %d samples: %v (bound %d)", samples, peak, bound)
	for _, w := range []string{"corral/w0", "corral/w1"} {
		if peak[w] > bound {
			t.Errorf("worker %s held %d connections, above --db-max-conns %d", w, peak[w], bound)
		}
		if peak[w] < 2 {
			t.Errorf("worker %s seen with %d connections: its connections are not named %s", w, peak[w], w)
		}
	}
	f.stop()
}

// TestServeRefusesADBMaxConnsTheServerCannotTake: a bound the server
// would not accept stops corral serve at start with the limit named, as
// does a bound too small to work or one given without PostgreSQL.
func TestServeRefusesADBMaxConnsTheServerCannotTake(t *testing.T) {
	db := storetest.PostgresURL(t)
	// A refusal comes at once; a serve that starts instead is killed
	// after half a minute (and fails the check).
	s := &served{t: t, tag: testutil.Tag(t), cliBound: 30 * time.Second}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--db-max-conns", "100000"}, "max_connections"},
		{[]string{"--db", db, "--db-max-conns", fmt.Sprint(postgres.MinConns - 1)}, "--db-max-conns"},
		{[]string{"--db-max-conns", "8"}, "none is opened to SQLite"},
	} {
		_, stderr, code := s.cli(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v: exit %d, %q; want exit 1 and %q", c.args[len(c.args)-2:], code, stderr, c.want)
		}
	}
}

// checkNoLoss checks that every id submitted is recorded once, as
// succeeded, and that no other execution is recorded.
func checkNoLoss(t *testing.T, admin *pgxpool.Pool, submitted <-chan string) {
	t.Helper()
	want := map[string]bool{}
	for id := range submitted {
		if want[id] {
			t.Errorf("execution id %s given to two submissions", id)
		}
		want[id] = true
	}
	rows, err := admin.Query(bg, `SELECT id, status FROM corral_executions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var id, status string
		if err := rows.Scan(&id, &status); err != nil {
			t.Fatal(err)
		}
		switch {
		case !want[id]:
			t.Errorf("execution %s (%s) recorded, not submitted", id, status)
		case status != "succeeded":
			t.Errorf("execution %s %s", id, status)
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Errorf("%d executions recorded of %d submitted", seen, len(want))
	}
}

// failures describes the executions that failed or were interrupted.
func failures(t *testing.T, admin *pgxpool.Pool) string {
	rows, err := admin.Query(context.Background(), `SELECT id, status, doc::text FROM corral_executions WHERE status IN ('failed', 'interrupted')`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, st, data string
		rows.Scan(&id, &st, &data)
		fmt.Fprintf(&b, "%s %s: %s\n", id, st, data)
	}
	return b.String()
}
