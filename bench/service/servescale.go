//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/procfs"
)

// serveScaleConfig is one run of -serve-scale: for each count, one
// corral serve (its embedded SQLite store) with one shell agent of that
// many slots, and that many `sleep` tasks submitted at once.
type serveScaleConfig struct {
	counts   []int
	sleep    time.Duration
	clients  int
	guard    string // corral serve --task-guard
	nofile   uint64 // RLIMIT_NOFILE (soft and hard) given to corral serve; 0: this process's
	bin      string
	deadline time.Duration
}

// scaleFigures are what one count measured.
type scaleFigures struct {
	n                        int
	submitted, rejected      int
	submitAll, startAll, end time.Duration // from the first submission
	firstStart               time.Duration // the first sleep seen, from the first submission
	started                  int           // most sleeps seen at once
	cpu                      time.Duration // the service's own CPU over the load
	rss0, rssAll, rssPeak    int64         // the service's resident bytes: before, while all ran, at most
	fd0, fdAll               int           // its descriptors (the database's aside): before, while all ran
	thr0, thrAll, thrPeak    int           // its threads: before, while all ran, at most
	succeeded                int
	left                     string
	load                     [2]string
}

// runServeScale measures corral serve holding many runs at once, as the
// library does in bench/scale: the time until every task's process has
// started and until the last has ended, and what the service held per
// run (resident memory, descriptors, threads) while all ran; then that
// nothing was left. Each task is `sleep` tagged with a token of this
// run in its environment; a tagged process found after the service
// recorded every end is killed (by pid and start time) and reported.
func runServeScale(ctx context.Context, cfg serveScaleConfig) bool {
	ctx, cancel := context.WithTimeout(ctx, cfg.deadline)
	defer cancel()
	if cfg.nofile > 0 {
		// Children inherit it: corral serve raises its soft limit to
		// the hard one. Raising the hard limit needs root.
		lim := unix.Rlimit{Cur: cfg.nofile, Max: cfg.nofile}
		benchutil.Check(unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	}
	var lim unix.Rlimit
	benchutil.Check(unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	bin := cfg.bin
	if bin == "" {
		b, cleanup := buildCorral()
		defer cleanup()
		bin = b
	}
	var tok [8]byte
	rand.Read(tok[:])
	tag := "CORRAL_SCALE_TAG=" + hex.EncodeToString(tok[:])
	fmt.Printf("corral serve holding many runs at once  (%s)\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("one worker, embedded SQLite; one shell agent of N slots (overflow: reject); N tasks `sleep %s` from %d HTTP clients;\n",
		seconds(cfg.sleep), cfg.clients)
	fmt.Printf("--max-runs N, --task-guard %s; RLIMIT_NOFILE %d (soft and hard, inherited)\n\n", cfg.guard, lim.Max)
	ok := true
	var all []*scaleFigures
	var notRun []string
	for _, n := range cfg.counts {
		// Three descriptors a run unguarded (two pipes, a pidfd; the
		// log is open only while a batch is written), four guarded (the
		// init's socket); the service's own beside them.
		each := uint64(3)
		if cfg.guard != "off" {
			each = 4
		}
		if need := each*uint64(n) + 256; need > lim.Max {
			notRun = append(notRun, fmt.Sprintf("%d runs: not run: they need about %d descriptors (%d a run), and RLIMIT_NOFILE's hard limit is %d here (raising it needs root with CAP_SYS_RESOURCE: -serve-scale-nofile)",
				n, need, each, lim.Max))
			continue
		}
		f := scaleRun(ctx, bin, cfg, n, tag)
		all = append(all, f)
		if f.left != "nothing" || f.succeeded != n || f.rejected > 0 {
			ok = false
		}
		fmt.Fprintf(os.Stderr, "bench: %d runs done\n", n)
	}
	fmt.Println("| runs | submit all | first start | all started | last end | service CPU / run | RSS / run (peak) | fds / run | threads added (peak) | succeeded | rejected | left after | load |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range all {
		per := func(d int64) string { return fmt.Sprintf("%.1f KiB", float64(d)/1024/float64(f.n)) }
		started := inSeconds(f.startAll)
		if f.started < f.n {
			started = fmt.Sprintf("never (at most %d at once)", f.started)
		}
		fmt.Printf("| %d | %s | %s | %s | %s | %.0f µs | %s (%s) | %.2f | %d (%d) | %d | %d | %s | %s–%s |\n",
			f.n, inSeconds(f.submitAll), inSeconds(f.firstStart), started, inSeconds(f.end),
			float64(f.cpu.Microseconds())/float64(f.n), per(f.rssAll-f.rss0), per(f.rssPeak-f.rss0), float64(f.fdAll-f.fd0)/float64(f.n),
			f.thrAll-f.thr0, f.thrPeak-f.thr0, f.succeeded, f.rejected, f.left, f.load[0], f.load[1])
	}
	for _, l := range notRun {
		fmt.Println("| " + l + " |")
	}
	fmt.Println("\n(times from the first submission; \"all started\": every task's process seen at once under the service (its children, less its helpers); \"last end\": none left; per run: the service's figure while all ran, once the clients had gone, over its figure before the load; descriptors without the database's files)")
	if !ok {
		fmt.Println("FAILED: a task was rejected or did not succeed, or something was left")
	}
	return ok
}

func inSeconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// scaleRun starts one corral serve of n runs, submits n tagged sleeps,
// samples the service until they have all ended, and checks what is left.
func scaleRun(ctx context.Context, bin string, cfg serveScaleConfig, n int, tag string) *scaleFigures {
	fl := startFleet(ctx, bin, "", 1, n, 0, 0, cfg.guard)
	defer fl.stop()
	w := fl.workers[0]
	pid := w.cmd.Process.Pid
	w.c.HTTP = &http.Client{Timeout: time.Minute}
	_, err := w.c.CreateAgent(ctx, &corral.Agent{Name: "scale", Kind: corral.KindShell, MaxParallelTasks: n,
		Overflow: corral.OverflowReject, Timeout: corral.Duration(cfg.sleep + 10*time.Minute)})
	benchutil.Check(err)
	f := &scaleFigures{n: n}
	// One task first: what the service keeps from its first run on
	// (its guardian, idle inits) is in the baseline, not in the runs'.
	warm, err := w.c.Submit(ctx, "scale", "true", 0)
	benchutil.Check(err)
	for {
		e, err := w.c.Execution(ctx, warm.ID)
		benchutil.Check(err)
		if e.Status.Terminal() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the start settles
	f.rss0, _, f.thr0 = procFigures(pid)
	f.fd0 = len(runDescriptors(pid))
	f.rssPeak, f.thrPeak = f.rss0, f.thr0
	self0, _ := procCPU(pid)
	f.load[0] = loadAverage()

	kids, _ := procfs.Children(pid)
	helpers := len(kids)
	t0 := time.Now()
	var seen, allSeen atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the sampler
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			// The runs are the service's children (on the cgroup
			// tier, each task's shell, which execs sleep; with an init,
			// the init), beside the helpers it had before the load:
			// listed from its threads' children files, cheap beside a
			// walk of thousands of processes.
			kids, _ := procfs.Children(pid)
			sleeps := len(kids) - helpers
			at := time.Since(t0)
			if sleeps > 0 && !seen.Load() {
				seen.Store(true)
				f.firstStart = at
			}
			if sleeps > f.started {
				f.started = sleeps
				if sleeps == n {
					f.startAll = at
					allSeen.Store(true)
				}
			}
			if seen.Load() && sleeps == 0 && f.end == 0 {
				f.end = at
			}
			if sleeps > 0 {
				f.end = 0 // one seen again (a late start)
			}
			rss, _, thr := procFigures(pid)
			f.rssPeak, f.thrPeak = max(f.rssPeak, rss), max(f.thrPeak, thr)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	input := tag + " exec sleep " + seconds(cfg.sleep)
	var submitted, rejected atomic.Int64
	var cw sync.WaitGroup
	per := (n + cfg.clients - 1) / cfg.clients
	for i := range cfg.clients {
		c := client.New(w.addr, "")
		c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: time.Minute}
		cw.Add(1)
		go func() {
			defer cw.Done()
			defer c.HTTP.CloseIdleConnections()
			for j := i * per; j < min(n, (i+1)*per); j++ {
				if _, err := c.Submit(ctx, "scale", input, 0); err != nil {
					rejected.Add(1)
					fmt.Fprintln(os.Stderr, "bench: submit:", err)
					continue
				}
				submitted.Add(1)
			}
		}()
	}
	cw.Wait()
	f.submitAll = time.Since(t0)
	f.submitted, f.rejected = int(submitted.Load()), int(rejected.Load())
	// What the service holds while every run runs, once the clients'
	// connections are gone: taken when the sampler has seen them all
	// (or, if they never ran all at once, now).
	for wait := time.Now(); !allSeen.Load() && time.Since(wait) < cfg.sleep/2; {
		time.Sleep(100 * time.Millisecond)
	}
	f.rssAll, _, f.thrAll = procFigures(pid)
	f.fdAll = len(runDescriptors(pid))

	// Every end recorded, and no sleep left under the service.
	for {
		text, err := w.c.Metrics(ctx)
		benchutil.Check(err)
		if sumCounter(text, "corral_executions_finished_total") >= f.submitted+1 && seen.Load() && f.end > 0 {
			f.succeeded = sumGauge(text, `corral_executions{agent="scale",status="succeeded"}`) - 1 // the first task's
			break
		}
		select {
		case <-ctx.Done():
			benchutil.Check(fmt.Errorf("%d runs: the ends were not all recorded in time: %w", n, ctx.Err()))
		case <-time.After(250 * time.Millisecond):
		}
	}
	close(stop)
	wg.Wait()
	if f.succeeded < f.submitted {
		// Say why: the errors of a few that did not succeed.
		bad, _, err := w.c.Executions(ctx, client.ListOptions{Agent: "scale", Limit: 5,
			Statuses: []corral.Status{corral.StatusFailed, corral.StatusInterrupted, corral.StatusCancelled}})
		benchutil.Check(err)
		for _, e := range bad {
			fmt.Fprintf(os.Stderr, "bench: %d runs: %s %s: %s %s\n", n, e.ID, e.Status, e.ErrorType, e.Error)
		}
	}
	self1, _ := procCPU(pid)
	f.cpu = self1 - self0
	f.load[1] = loadAverage()
	w.c.HTTP.CloseIdleConnections() // its connection is not a run's
	f.left = scaleLeftovers(pid, tag, f.fd0)
	return f
}

// runDescriptors lists what a process's descriptors point to, less the
// store's database files (corral.db, its -wal and -shm).
func runDescriptors(pid int) []string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(dir + "/" + e.Name())
		if err == nil && !strings.Contains(target, "/corral.db") {
			out = append(out, target)
		}
	}
	return out
}

// procFigures reads a process's resident bytes, descriptors and threads.
func procFigures(pid int) (rss int64, fds, threads int) {
	rss, _ = procfs.Memory(pid, "VmRSS")
	if st, err := procfs.ReadStat(pid); err == nil {
		threads = st.Threads
	}
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return rss, len(ents), threads
}

// sumGauge is the value of one series of a metrics text, zero when absent.
func sumGauge(text, series string) int {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			x, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(x)
		}
	}
	return 0
}

// scaleLeftovers reports what outlived the runs: tagged processes
// anywhere (killed, by pid and start time), processes under the service
// other than its own helpers (corral-shim: its guardian, idle inits), and
// descriptors of the service over its baseline once it has had five
// seconds to let go of them.
func scaleLeftovers(pid int, tag string, fd0 int) string {
	token := strings.TrimPrefix(tag, "CORRAL_SCALE_TAG=")
	var left []string
	if all, err := procfs.Scan(); err == nil {
		live := 0
		for _, st := range all {
			if !st.Zombie() && procfs.HasToken(st.Pid, token) {
				live++
				procfs.Signal(st.Pid, st.Start, unix.SIGKILL)
			}
		}
		if live > 0 {
			left = append(left, fmt.Sprintf("%d tagged processes (killed)", live))
		}
	}
	under := 0
	for _, st := range procfs.Descendants(pid) {
		if st.Comm != "corral-shim" {
			under++
		}
	}
	if under > 0 {
		left = append(left, fmt.Sprintf("%d processes under the service", under))
	}
	// The store's database files aside: its connection pool may keep
	// more connections open after a load than before it.
	deadline := time.Now().Add(5 * time.Second)
	var extra []string
	for {
		extra = runDescriptors(pid)
		if len(extra) <= fd0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(extra) > fd0 {
		left = append(left, fmt.Sprintf("%d descriptors of the service (%s)", len(extra)-fd0, strings.Join(extra, " ")))
	}
	if len(left) == 0 {
		return "nothing"
	}
	return strings.Join(left, ", ")
}
