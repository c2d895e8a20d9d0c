package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/store/storetest"
)

// serveFleetConfig is one run of -serve-fleet: the same load on fleets
// of each size in workers.
type serveFleetConfig struct {
	pgURL                         string
	workers                       []int
	tasks, clients, agents, slots int
	dbMaxConns, gomaxprocs        int
	taskGuard                     string // corral serve --task-guard
	bin                           string // a corral binary; empty: build this module's
	deadline                      time.Duration
}

// parseSizes reads a list of counts (-serve-workers, -serve-scale).
func parseSizes(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			benchutil.Check(fmt.Errorf("%q: want counts, such as 1,3,10", s))
		}
		out = append(out, n)
	}
	return out
}

// fleetFigures are what one fleet size measured.
type fleetFigures struct {
	workers, maxRuns, dbBound int
	submitted                 int
	elapsed                   time.Duration
	roundTrip                 []time.Duration
	admission, release        histogram
	peakPerWorker             int
	smp                       sample
	check                     recordCheck
	cpu, idle                 cpuShare
	finishedTotal             int
	load                      [2]string // the machine's 1-minute load average at the load's start and end
}

// runServeFleet measures fleets of real corral serve processes (built
// from this module) on one fresh PostgreSQL database each, one size
// after the other in the same run, under the same load: cfg.clients
// concurrent HTTP clients submitting cfg.tasks trivial tasks (true) in
// all, round robin over cfg.agents agents of cfg.slots slots each
// (overflow: queue), each client through one worker. It reports whether
// every check passed (no overbooking, no loss, no bound passed).
func runServeFleet(ctx context.Context, cfg serveFleetConfig) bool {
	if cfg.pgURL == "" {
		fmt.Fprintln(os.Stderr, "bench: -serve-fleet needs PostgreSQL: set CORRAL_TEST_POSTGRES or -pg (a user that may create databases)")
		benchutil.Exit(1)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.deadline)
	defer cancel()
	bin := cfg.bin
	if bin == "" {
		b, cleanup := buildCorral()
		defer cleanup()
		bin = b
	}
	fmt.Printf("fleet of corral serve processes on one PostgreSQL  (%s)\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("%d trivial tasks (true) from %d HTTP clients over %d agents x %d slots (overflow queue); each client submits through one worker;\n",
		cfg.tasks, cfg.clients, cfg.agents, cfg.slots)
	conns := "its default (4 + max-runs/4, at most 20)"
	if cfg.dbMaxConns > 0 {
		conns = fmt.Sprint(cfg.dbMaxConns)
	}
	fmt.Printf("--max-runs per worker = the fleet's slots / workers; --db-max-conns %s; --task-guard %s", conns, cfg.taskGuard)
	if cfg.gomaxprocs > 0 {
		fmt.Printf("; GOMAXPROCS=%d", cfg.gomaxprocs)
	}
	fmt.Print("\n\n")
	var all []*fleetFigures
	for _, w := range cfg.workers {
		f := fleetRun(ctx, bin, cfg, w)
		all = append(all, f)
		fmt.Fprintf(os.Stderr, "bench: %d worker(s) done: %.1f tasks/s\n", w, float64(f.submitted)/f.elapsed.Seconds())
	}
	return printFleet(cfg, all)
}

// fleetRun starts n workers on a fresh database, runs the load through
// them, checks the records, and stops them.
func fleetRun(ctx context.Context, bin string, cfg serveFleetConfig, n int) *fleetFigures {
	db, drop := createDB(ctx, cfg.pgURL)
	defer drop()
	maxRuns := (cfg.agents*cfg.slots + n - 1) / n
	fl := startFleet(ctx, bin, db, n, maxRuns, cfg.dbMaxConns, cfg.gomaxprocs, cfg.taskGuard)
	defer fl.stop()
	f := &fleetFigures{workers: n, maxRuns: maxRuns, dbBound: fl.dbBound()}
	c0 := fl.workers[0].c
	for i := range cfg.agents {
		_, err := c0.CreateAgent(ctx, &corral.Agent{Name: fmt.Sprintf("a%02d", i), Kind: corral.KindShell, MaxParallelTasks: cfg.slots,
			Overflow: corral.OverflowQueue, MaxBacklog: cfg.tasks})
		benchutil.Check(err)
	}
	admin, err := pgx.Connect(ctx, db)
	benchutil.Check(err)
	defer admin.Close(context.Background())
	benchutil.Check(storetest.LogSlots(ctx, admin))
	// What the fleet costs doing nothing (heartbeats, polls), before the
	// load and once the start has settled.
	time.Sleep(3 * time.Second)
	idle0 := fl.cpu(ctx, admin)
	time.Sleep(5 * time.Second)
	f.idle = fl.cpu(ctx, admin).since(idle0)
	smp := startSampler(ctx, db)
	cpu0 := fl.cpu(ctx, admin)
	f.load[0] = loadAverage()
	t0 := time.Now()
	ids, rt := submitAll(ctx, fl, cfg)
	f.submitted, f.roundTrip = len(ids), rt
	last := waitTerminal(ctx, admin, len(ids))
	f.elapsed = last.Sub(t0)
	f.load[1] = loadAverage()
	f.cpu = fl.cpu(ctx, admin).since(cpu0)
	f.smp = smp.stop()
	for _, c := range f.smp.peakBy {
		f.peakPerWorker = max(f.peakPerWorker, c)
	}
	f.admission, f.release, f.finishedTotal = fl.metrics(ctx)
	f.check = checkRecords(ctx, admin, ids)
	return f
}

// submitAll runs cfg.clients clients, client i through worker i mod n,
// each submitting its share of cfg.tasks back to back, round robin over
// the agents; it returns the executions' ids and the round trips.
func submitAll(ctx context.Context, fl *serveFleet, cfg serveFleetConfig) ([]string, []time.Duration) {
	var mu sync.Mutex
	var ids []string
	var rt []time.Duration
	var wg sync.WaitGroup
	per := cfg.tasks / cfg.clients
	for i := range cfg.clients {
		w := fl.workers[i%len(fl.workers)]
		// Each client its own keep-alive connection, as separate
		// programs would have.
		c := client.New(w.addr, "")
		c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: time.Minute}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.HTTP.CloseIdleConnections()
			for j := range per {
				agent := fmt.Sprintf("a%02d", (i*per+j)%cfg.agents)
				t := time.Now()
				e, err := c.Submit(ctx, agent, "true", 0)
				d := time.Since(t)
				benchutil.Check(err)
				mu.Lock()
				ids, rt = append(ids, e.ID), append(rt, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ids, rt
}

// waitTerminal waits until n executions are terminal and returns when
// the last of them finished (its recorded finished_at).
func waitTerminal(ctx context.Context, admin *pgx.Conn, n int) time.Time {
	for {
		var done int
		var last *time.Time
		err := admin.QueryRow(ctx, `SELECT count(*), max((doc->>'finished_at')::timestamptz) FROM corral_executions
			WHERE status NOT IN ('queued', 'waiting', 'running')`).Scan(&done, &last)
		benchutil.Check(err)
		if done >= n && last != nil {
			return *last
		}
		select {
		case <-ctx.Done():
			benchutil.Check(fmt.Errorf("%d of %d tasks terminal when the run's time ran out: %w", done, n, ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// printFleet prints the fleet sizes side by side, and whether every
// check passed.
func printFleet(cfg serveFleetConfig, all []*fleetFigures) bool {
	row := func(label string, f func(*fleetFigures) string) {
		fmt.Printf("  %-44s", label)
		for _, x := range all {
			fmt.Printf(" %18s", f(x))
		}
		fmt.Println()
	}
	row("workers (--max-runs, --db-max-conns each)", func(f *fleetFigures) string {
		return fmt.Sprintf("%d (%d, %d)", f.workers, f.maxRuns, f.dbBound)
	})
	row("throughput, first submit to last end", func(f *fleetFigures) string {
		return fmt.Sprintf("%.1f tasks/s", float64(f.submitted)/f.elapsed.Seconds())
	})
	row("submit round trip (HTTP)  p50", func(f *fleetFigures) string { return pct(f.roundTrip, 50) })
	row("                          p99", func(f *fleetFigures) string { return pct(f.roundTrip, 99) })
	row("corral_admission_seconds  p50", func(f *fleetFigures) string { return f.admission.quantile(0.50) })
	row("                          p99", func(f *fleetFigures) string { return f.admission.quantile(0.99) })
	row("corral_slot_release_seconds p50", func(f *fleetFigures) string { return f.release.quantile(0.50) })
	row("                          p99", func(f *fleetFigures) string { return f.release.quantile(0.99) })
	row("PostgreSQL connections, peak (all workers)", func(f *fleetFigures) string {
		return fmt.Sprintf("%d of %d", f.smp.peakTotal, f.workers*f.dbBound)
	})
	row("  most of one worker (its bound)", func(f *fleetFigures) string { return fmt.Sprintf("%d (%d)", f.peakPerWorker, f.dbBound) })
	row("CPU: workers (service)", func(f *fleetFigures) string { return f.cpu.share(f.cpu.workers) })
	row("     the tasks' processes", func(f *fleetFigures) string { return f.cpu.share(f.cpu.tasks) })
	row("     PostgreSQL (the workers' backends)", func(f *fleetFigures) string { return f.cpu.share(f.cpu.postgres) })
	row("     this benchmark (its clients, sampler)", func(f *fleetFigures) string { return f.cpu.share(f.cpu.bench) })
	row("     the machine, all of it (2 cores = 200%)", func(f *fleetFigures) string { return f.cpu.share(f.cpu.machine) })
	row("load average (1 min), start / end", func(f *fleetFigures) string { return f.load[0] + " / " + f.load[1] })
	row("idle fleet, 5 s before the load: workers", func(f *fleetFigures) string { return f.idle.share(f.idle.workers) })
	row("     PostgreSQL", func(f *fleetFigures) string { return f.idle.share(f.idle.postgres) })
	row("overbooking: most slots of an agent held", func(f *fleetFigures) string {
		return fmt.Sprintf("%d/%d, %d over", f.smp.maxSlots, cfg.slots, f.smp.over)
	})
	row("  most running (sampled, n)", func(f *fleetFigures) string {
		return fmt.Sprintf("%d/%d, n=%d", f.smp.maxRuns, cfg.slots, f.smp.samples)
	})
	row("  slot log: most held by an agent, rules broken", func(f *fleetFigures) string {
		return fmt.Sprintf("%d/%d, %d", f.check.slots.MostHeld, f.check.slots.MostAllowed, f.check.slots.Bad)
	})
	row("  slot log: taken / released", func(f *fleetFigures) string {
		return fmt.Sprintf("%d/%d", f.check.slots.Takes, f.check.slots.Releases)
	})
	row("loss: submitted / recorded / succeeded", func(f *fleetFigures) string {
		return fmt.Sprintf("%d/%d/%d", f.submitted, f.check.recorded, f.check.succeeded)
	})
	row("  ends counted by the workers, attempts > 1", func(f *fleetFigures) string {
		return fmt.Sprintf("%d, %d", f.finishedTotal, f.check.retried)
	})
	failed := false
	for _, f := range all {
		if p := problems(f, cfg.slots); p != "" {
			fmt.Printf("\n  FAILED, %d worker(s): %s", f.workers, p)
			failed = true
		}
	}
	fmt.Println()
	return !failed
}

// problems says what went wrong in a run (overbooking, loss, a bound
// passed), or "".
func problems(f *fleetFigures, slots int) string {
	var p []string
	if rc := f.check.problems(f.submitted); rc != "" {
		p = append(p, rc)
	}
	if f.smp.over > 0 || f.smp.maxRuns > slots {
		p = append(p, fmt.Sprintf("an agent held more slots than it has in %d samples (%d running at most)", f.smp.over, f.smp.maxRuns))
	}
	if f.peakPerWorker > f.dbBound {
		p = append(p, fmt.Sprintf("a worker held %d connections, above its bound %d", f.peakPerWorker, f.dbBound))
	}
	if f.finishedTotal != f.submitted {
		p = append(p, fmt.Sprintf("the workers counted %d ends of %d tasks", f.finishedTotal, f.submitted))
	}
	return strings.Join(p, "; ")
}
