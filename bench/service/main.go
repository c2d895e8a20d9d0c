// Command service measures corral's task service on the embedded SQLite
// store and prints each figure beside the peer it is compared with,
// measured in the same run on the same machine:
//
//   - admission decision (one Submit transaction) p50/p99, beside a bare
//     INSERT transaction on the same database file (the floor of any
//     durable decision), and beside the whole HTTP round trip;
//   - end-to-end trivial shell tasks per second (submit over HTTP, run
//     under supervision, record), beside the same commands run with
//     proc.Run directly at the same concurrency (the supervision floor);
//   - slot release latency after a run's process tree is gone, beside a
//     bare UPDATE transaction (the commit floor).
//
// With -queue it measures instead queue turnover: trivial tasks through 4
// slots with overflow: queue, tasks per second and the slot idle time
// between a run's end and the next run's start, on SQLite (and
// PostgreSQL with -pg), beside River's own job throughput on SQLite.
//
// With -dashboards N it measures instead the CPU that N live agent
// dashboards cost (12 agents, 5,000 schedules), idle and with tasks
// running, beside the same service without dashboards.
//
// With -fleet it compares instead the embedded SQLite store and the shared
// PostgreSQL store with one and three workers on one machine: tasks per
// second and admission p50/p99, each configuration in the same run
// (PostgreSQL from -pg or CORRAL_TEST_POSTGRES).
//
// With -serve-fleet it runs instead fleets of real corral serve
// processes (built from this module) on one PostgreSQL, of each size in
// -serve-workers (1,3,10) in the same run: 5,000 trivial tasks from 50
// HTTP clients over 20 agents; throughput, admission and slot release
// p50/p99, PostgreSQL connections used, where the CPU went, and checks
// that no agent was overbooked (the database's slot log,
// storetest.LogSlots) and no task lost (every submitted id recorded once
// and succeeded); a failed check prints FAILED.
//
// With -serve-scale it measures instead one real corral serve holding
// many runs at once (100, 1,000, 10,000: one shell agent of that many
// slots, as many `sleep` tasks from -serve-clients HTTP clients): the
// time until every task's process has started and until the last has
// ended, the service's CPU, resident memory, descriptors and threads per
// run, and that nothing was left (Linux).
//
// Run it as root on Linux for the cgroup tier: go run ./bench/service
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/sqlite"
)

var (
	admissions  = flag.Int("admissions", 2000, "admission decisions to time")
	tasks       = flag.Int("tasks", 1000, "trivial tasks to run end to end")
	parallel    = flag.Int("parallel", 32, "slots of the agent (and concurrency of the peer)")
	submitters  = flag.Int("submitters", 16, "concurrent HTTP submitters")
	releaseRuns = flag.Int("release-runs", 300, "runs to time the slot release of")
	fleetMode   = flag.Bool("fleet", false, "compare SQLite and PostgreSQL with 1 and 3 workers instead")
	pgURL       = flag.String("pg", os.Getenv("CORRAL_TEST_POSTGRES"), "PostgreSQL `URL` for -fleet (a user that may create databases)")
	fleetTasks  = flag.Int("fleet-tasks", 1000, "tasks per configuration with -fleet")
	queueMode   = flag.Bool("queue", false, "measure queue turnover through 4 slots instead, beside River's raw throughput")
	queueTasks  = flag.Int("queue-tasks", 2000, "tasks with -queue")
	cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the run to `FILE`")
	dashMode    = flag.Int("dashboards", 0, "measure the CPU of `N` live agent dashboards instead")
	dashSpan    = flag.Duration("dashboard-span", 20*time.Second, "how long each figure of -dashboards is measured")
	serveMode   = flag.Bool("serve-fleet", false, "run fleets of corral serve processes on one PostgreSQL instead (see -serve-*)")
	serveSizes  = flag.String("serve-workers", "1,3,10", "fleet sizes of -serve-fleet, in `N,N,…` workers")
	serveTasks  = flag.Int("serve-tasks", 5000, "tasks per fleet size with -serve-fleet")
	serveCli    = flag.Int("serve-clients", 50, "concurrent HTTP clients with -serve-fleet")
	serveAgents = flag.Int("serve-agents", 20, "agents with -serve-fleet")
	serveSlots  = flag.Int("serve-slots", 4, "slots of each agent with -serve-fleet")
	serveConns  = flag.Int("serve-db-max-conns", 0, "--db-max-conns of each worker with -serve-fleet (0: corral serve's default)")
	serveProcs  = flag.Int("serve-gomaxprocs", 0, "GOMAXPROCS of each worker with -serve-fleet (0: Go's default, the cores)")
	serveBin    = flag.String("serve-corral", "", "with -serve-fleet, run this corral `BINARY` instead of building this module's")
	serveLimit  = flag.Duration("serve-deadline", 15*time.Minute, "bound on the whole -serve-fleet run")
	taskGuard   = flag.String("task-guard", "auto", "the service's task guard: auto, on or off")
	scaleMode   = flag.String("serve-scale", "", "measure instead one corral serve holding `N,N,…` runs at once (one agent of N slots, N sleep tasks), as bench/scale does the library")
	scaleSleep  = flag.Duration("serve-scale-sleep", 10*time.Second, "how long each task of -serve-scale sleeps")
	scaleFiles  = flag.Uint64("serve-scale-nofile", 0, "with -serve-scale, give corral serve this RLIMIT_NOFILE, soft and hard (raising the hard limit needs root; 0: this process's)")
)

func main() {
	flag.Parse()
	ctx := context.Background()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		benchutil.Check(err)
		benchutil.Check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	if *scaleMode != "" {
		ok := runServeScale(ctx, serveScaleConfig{counts: parseSizes(*scaleMode), sleep: *scaleSleep, clients: *serveCli,
			guard: *taskGuard, nofile: *scaleFiles, bin: *serveBin, deadline: *serveLimit})
		if !ok {
			benchutil.Exit(1)
		}
		return
	}
	if *serveMode {
		ok := runServeFleet(ctx, serveFleetConfig{pgURL: *pgURL, workers: parseSizes(*serveSizes), tasks: *serveTasks, clients: *serveCli,
			agents: *serveAgents, slots: *serveSlots, dbMaxConns: *serveConns, gomaxprocs: *serveProcs, bin: *serveBin, deadline: *serveLimit,
			taskGuard: *taskGuard})
		if !ok {
			benchutil.Exit(1)
		}
		return
	}
	if *fleetMode {
		runFleet(ctx, *pgURL, *fleetTasks, *admissions/4)
		return
	}
	if *dashMode > 0 {
		runDashboards(ctx, *dashMode, *dashSpan)
		return
	}
	if *queueMode {
		fmt.Printf("corral task service: queue turnover  (%s)\n\n", time.Now().UTC().Format(time.RFC3339))
		for _, kind := range []string{"sqlite", "postgres"} {
			if kind == "postgres" && *pgURL == "" {
				fmt.Println("queue turnover, postgres: no PostgreSQL (set CORRAL_TEST_POSTGRES or -pg)")
				continue
			}
			open, cleanup := freshDB(ctx, kind, *pgURL)
			runQueue(ctx, open, kind, *queueTasks)
			cleanup()
		}
		pprof.StopCPUProfile() // the profile is corral's, not the peer's
		fmt.Printf("peer: River alone on SQLite, %d no-op jobs, 4 workers  %7.1f jobs/s\n", *queueTasks, riverRaw(ctx, *queueTasks))
		return
	}
	dir := benchutil.TempDir("", "corral-bench-")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	benchutil.Check(err)
	defer st.Close()

	var relMu sync.Mutex
	var releases []time.Duration
	guard, err := service.ParseGuardMode(*taskGuard)
	benchutil.Check(err)
	svc, err := service.New(service.Config{Store: st, DataDir: dir, Guard: guard, OnSlotReleased: func(_ string, d time.Duration) {
		relMu.Lock()
		releases = append(releases, d)
		relMu.Unlock()
	}})
	benchutil.Check(err)
	guarded, why := svc.Guarded()
	benchutil.Check(svc.Start(ctx))
	defer svc.Close(ctx)
	h, err := api.New(api.Config{Service: svc})
	benchutil.Check(err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := client.New(srv.URL, "")

	fmt.Printf("corral task service benchmark  (%s)\n", time.Now().UTC().Format(time.RFC3339))
	if guarded {
		fmt.Printf("tasks guarded (task guard %s)\n\n", guard)
	} else {
		fmt.Printf("tasks not guarded: %s\n\n", why)
	}

	// 1. Admission decision.
	_, err = svc.CreateAgent(ctx, &corral.Agent{Name: "adm", Kind: corral.KindShell, Shell: "true", MaxParallelTasks: 10000})
	benchutil.Check(err)
	_, err = st.DB().Exec(`CREATE TABLE bench_peer (id INTEGER PRIMARY KEY, v TEXT)`)
	benchutil.Check(err)
	var submit, bare, roundTrip []time.Duration
	// The agent's runs would start; keep them from competing: a reject
	// agent at capacity takes the same transaction path (and the engine
	// stays idle), so admissions are timed on a full agent and on an
	// empty one alternately.
	_, err = svc.CreateAgent(ctx, &corral.Agent{Name: "full", Kind: corral.KindShell, MaxParallelTasks: 1})
	benchutil.Check(err)
	_, err = svc.Submit(ctx, service.Task{Agent: "full", Input: "sleep 3600"})
	benchutil.Check(err)
	for i := range *admissions {
		t0 := time.Now()
		svc.Submit(ctx, service.Task{Agent: "full", Input: "true"}) // rejected: a full decision, recorded
		submit = append(submit, time.Since(t0))
		t0 = time.Now()
		_, err := st.DB().Exec(`INSERT INTO bench_peer (v) VALUES (?)`, fmt.Sprint(i))
		benchutil.Check(err)
		bare = append(bare, time.Since(t0))
		if i%4 == 0 {
			t0 = time.Now()
			c.Submit(ctx, "full", "true", 0)
			roundTrip = append(roundTrip, time.Since(t0))
		}
	}
	// The heaviest decision: a slot taken and the run dispatched to River
	// in the same transaction (the runs are "true -c true" and start at
	// once, as in production).
	// Paced at the target throughput (100 tasks/s), and in a burst that
	// starts processes faster than 2 cores can spawn them.
	admit := func(n int, pace time.Duration) []time.Duration {
		var out []time.Duration
		tick := time.Now()
		for range n {
			t0 := time.Now()
			_, err := svc.Submit(ctx, service.Task{Agent: "adm", Input: "true"})
			benchutil.Check(err)
			out = append(out, time.Since(t0))
			tick = tick.Add(pace)
			time.Sleep(time.Until(tick))
		}
		return out
	}
	paced := admit(*admissions/4, 10*time.Millisecond)
	burst := admit(*admissions/4, 0)
	waitAll(ctx, svc, "adm", *admissions/2)
	fmt.Printf("admission decision, one transaction\n")
	fmt.Printf("  corral Submit, admitted, 100/s          n=%-5d p50 %8s  p99 %8s   (target p99 <= 10ms)\n", len(paced), pct(paced, 50), pct(paced, 99))
	fmt.Printf("  corral Submit, admitted, burst          n=%-5d p50 %8s  p99 %8s   (each starts a process at once)\n", len(burst), pct(burst, 50), pct(burst, 99))
	fmt.Printf("  corral Submit, rejected at capacity     n=%-5d p50 %8s  p99 %8s\n", len(submit), pct(submit, 50), pct(submit, 99))
	fmt.Printf("  peer: bare INSERT transaction           n=%-5d p50 %8s  p99 %8s\n", len(bare), pct(bare, 50), pct(bare, 99))
	fmt.Printf("  corral POST /tasks round trip (HTTP)    n=%-5d p50 %8s  p99 %8s\n\n", len(roundTrip), pct(roundTrip, 50), pct(roundTrip, 99))
	cancelAll(ctx, svc, "full")

	// 2. End-to-end trivial tasks per second.
	_, err = svc.CreateAgent(ctx, &corral.Agent{Name: "e2e", Kind: corral.KindShell, MaxParallelTasks: *parallel, Overflow: corral.OverflowQueue, MaxBacklog: *tasks + 10})
	benchutil.Check(err)
	relMu.Lock()
	releases = nil
	relMu.Unlock()
	t0 := time.Now()
	ids := make(chan string, *tasks)
	var wg sync.WaitGroup
	per := *tasks / *submitters
	for range *submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				e, err := c.Submit(ctx, "e2e", "true", 0)
				benchutil.Check(err)
				ids <- e.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	n := per * *submitters
	waitAll(ctx, svc, "e2e", n)
	e2e := time.Since(t0)

	peerRuns := func(g *proc.Guard) time.Duration {
		t0 := time.Now()
		sem := make(chan struct{}, *parallel)
		for range n {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				_, err := proc.Run(ctx, &proc.Spec{Args: []string{"bash", "-c", "true"}, Guard: g})
				benchutil.Check(err)
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	peer := peerRuns(nil)
	fmt.Printf("end-to-end trivial shell tasks (bash -c true), n=%d, %d slots, %d HTTP submitters\n", n, *parallel, *submitters)
	fmt.Printf("  corral serve (submit, run, record)  %7.1f tasks/s   (target >= 100/s)\n", float64(n)/e2e.Seconds())
	fmt.Printf("  peer: proc.Run alone, same concurrency %4.1f runs/s\n", float64(n)/peer.Seconds())
	if guarded {
		fmt.Printf("  peer: proc.Run guarded, same concurrency %4.1f runs/s\n", float64(n)/peerRuns(&proc.Guard{Hide: []string{dir}}).Seconds())
	}
	fmt.Println()

	// 3. Slot release latency after the tree is gone.
	relMu.Lock()
	releases = nil
	relMu.Unlock()
	_, err = svc.CreateAgent(ctx, &corral.Agent{Name: "rel", Kind: corral.KindShell, MaxParallelTasks: 4, Overflow: corral.OverflowQueue, MaxBacklog: *releaseRuns + 10})
	benchutil.Check(err)
	for range *releaseRuns {
		_, err := svc.Submit(ctx, service.Task{Agent: "rel", Input: "sleep 0.01 & true"})
		benchutil.Check(err)
	}
	waitAll(ctx, svc, "rel", *releaseRuns)
	var upd []time.Duration
	for i := range *releaseRuns {
		t0 := time.Now()
		_, err := st.DB().Exec(`UPDATE bench_peer SET v = ? WHERE id = ?`, "x", i+1)
		benchutil.Check(err)
		upd = append(upd, time.Since(t0))
	}
	relMu.Lock()
	rel := slices.Clone(releases)
	relMu.Unlock()
	fmt.Printf("slot release after the process tree is gone (terminal state + release + promotion, one tx), n=%d\n", len(rel))
	fmt.Printf("  corral release              p50 %8s  p99 %8s  max %8s   (target <= 100ms)\n", pct(rel, 50), pct(rel, 99), pct(rel, 100))
	fmt.Printf("  peer: bare UPDATE tx        p50 %8s  p99 %8s\n", pct(upd, 50), pct(upd, 99))
}

// waitAll waits until agent has nothing queued or running any more (its
// n tasks submitted before), looking at the database's counts every
// 50 ms, and checks that n finished.
func waitAll(ctx context.Context, svc *service.Service, agent string, n int) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		acts, err := svc.Activity(ctx, 0)
		benchutil.Check(err)
		for _, a := range acts {
			if a.Agent == agent && a.Running == 0 && a.Queued == 0 {
				if done := countDone(ctx, svc, agent); done < n {
					fmt.Fprintf(os.Stderr, "bench: %d of %d tasks of %s finished\n", done, n, agent)
					benchutil.Exit(1)
				}
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "timed out waiting for runs")
	benchutil.Exit(1)
}

func countDone(ctx context.Context, svc *service.Service, agent string) int {
	n, cursor := 0, ""
	for {
		list, next, err := svc.Executions(ctx, service.ExecutionFilter{Agent: agent, Statuses: []corral.Status{corral.StatusSucceeded, corral.StatusFailed}, Limit: 1000, Cursor: cursor})
		benchutil.Check(err)
		n += len(list)
		if next == "" {
			return n
		}
		cursor = next
	}
}

func cancelAll(ctx context.Context, svc *service.Service, agent string) {
	list, _, _ := svc.Executions(ctx, service.ExecutionFilter{Agent: agent, Statuses: []corral.Status{corral.StatusRunning, corral.StatusQueued}, Limit: 1000})
	for _, e := range list {
		svc.Cancel(ctx, e.ID)
	}
}

func pct(d []time.Duration, p int) string {
	if len(d) == 0 {
		return "-"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return s[i].Round(time.Microsecond).String()
}
