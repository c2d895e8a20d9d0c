package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/sqlite"
)

// runFleet compares the stores with one and three workers sharing the
// database, in this process: trivial tasks per second end to end, and
// the admission decision's p50/p99 at 100 tasks/s. PostgreSQL figures
// need a server (pgURL, a user that may create databases); each
// configuration gets a fresh database.
func runFleet(ctx context.Context, pgURL string, tasks, admissions int) {
	fmt.Printf("fleet: %d trivial tasks (bash -c true) per configuration, 32 slots, 16 submitters spread over the workers;\n", tasks)
	fmt.Printf("admission decision timed on %d admitted submissions at 100/s\n\n", admissions)
	fmt.Printf("  %-22s %12s %14s %14s\n", "store, workers", "tasks/s", "admission p50", "admission p99")
	for _, workers := range []int{1, 3} {
		for _, kind := range []string{"sqlite", "postgres"} {
			if kind == "postgres" && pgURL == "" {
				fmt.Printf("  %-22s (no PostgreSQL: set CORRAL_TEST_POSTGRES or -pg)\n", kind)
				continue
			}
			open, cleanup := freshDB(ctx, kind, pgURL)
			tps, p50, p99 := fleetRound(ctx, open, workers, tasks, admissions)
			cleanup()
			fmt.Printf("  %-22s %12.1f %14s %14s\n", fmt.Sprintf("%s, %d worker(s)", kind, workers), tps, p50, p99)
		}
	}
}

// freshDB returns an opener of handles on a new database of kind, and
// its cleanup.
func freshDB(ctx context.Context, kind, pgURL string) (func() store.Store, func()) {
	dir := benchutil.TempDir("", "corral-fleet-bench-")
	var mu sync.Mutex
	var opened []store.Store
	keep := func(s store.Store) store.Store {
		mu.Lock()
		opened = append(opened, s)
		mu.Unlock()
		return s
	}
	closeAll := func() {
		for _, s := range opened {
			s.Close()
		}
	}
	if kind == "sqlite" {
		path := filepath.Join(dir, "corral.db")
		return func() store.Store {
				s, err := sqlite.Open(ctx, sqlite.Options{Path: path})
				benchutil.Check(err)
				return keep(s)
			}, func() {
				closeAll()
				os.RemoveAll(dir)
			}
	}
	u, drop := createDB(ctx, pgURL)
	return func() store.Store {
			s, err := postgres.Open(ctx, postgres.Options{URL: u})
			benchutil.Check(err)
			return keep(s)
		}, func() {
			closeAll()
			drop()
			os.RemoveAll(dir)
		}
}

// createDB creates a database on the server of pgURL and returns its URL
// and what drops it.
func createDB(ctx context.Context, pgURL string) (string, func()) {
	admin, err := pgx.Connect(ctx, pgURL)
	benchutil.Check(err)
	var b [6]byte
	rand.Read(b[:])
	name := "corral_bench_" + hex.EncodeToString(b[:])
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	benchutil.Check(err)
	u, err := url.Parse(pgURL)
	benchutil.Check(err)
	u.Path = "/" + name
	return u.String(), func() {
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(context.Background())
	}
}

func fleetRound(ctx context.Context, open func() store.Store, workers, tasks, admissions int) (float64, string, string) {
	var svcs []*service.Service
	for i := range workers {
		dir := benchutil.TempDir("", "corral-fleet-worker-")
		defer os.RemoveAll(dir)
		svc, err := service.New(service.Config{Store: open(), DataDir: dir, WorkerID: fmt.Sprint("bench-w", i)})
		benchutil.Check(err)
		benchutil.Check(svc.Start(ctx))
		defer svc.Close(ctx)
		svcs = append(svcs, svc)
	}
	_, err := svcs[0].CreateAgent(ctx, &corral.Agent{Name: "e2e", Kind: corral.KindShell, MaxParallelTasks: 32, Overflow: corral.OverflowQueue, MaxBacklog: tasks + 10})
	benchutil.Check(err)
	t0 := time.Now()
	var wg sync.WaitGroup
	const submitters = 16
	for i := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tasks / submitters {
				_, err := svcs[i%workers].Submit(ctx, service.Task{Agent: "e2e", Input: "true"})
				benchutil.Check(err)
			}
		}()
	}
	wg.Wait()
	n := tasks / submitters * submitters
	waitAll(ctx, svcs[0], "e2e", n)
	tps := float64(n) / time.Since(t0).Seconds()

	_, err = svcs[0].CreateAgent(ctx, &corral.Agent{Name: "adm", Kind: corral.KindShell, Shell: "true", MaxParallelTasks: 10000})
	benchutil.Check(err)
	var lat []time.Duration
	tick := time.Now()
	for i := range admissions {
		t := time.Now()
		_, err := svcs[i%workers].Submit(ctx, service.Task{Agent: "adm", Input: "true"})
		benchutil.Check(err)
		lat = append(lat, time.Since(t))
		tick = tick.Add(10 * time.Millisecond)
		time.Sleep(time.Until(tick))
	}
	waitAll(ctx, svcs[0], "adm", admissions)
	return tps, pct(lat, 50), pct(lat, 99)
}
