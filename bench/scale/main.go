//go:build linux

// Command scale measures what many concurrent runs cost one supervisor:
// for each count of the curve, that many `sleep S` runs are started at
// once under corral (proc.Start, capturing both streams) and, in the same
// run, under os/exec (exec.Command with both streams captured into
// buffers, its own copying goroutines), and for each it prints the time to
// start them all, the time until the last has ended (from the first
// start), and what the supervisor held while all of them ran: resident
// memory, file descriptors, goroutines and threads, per run over the
// baseline; then that every process is gone and every count is back to
// its baseline. -peers fork adds the floor: a bare syscall.ForkExec of each
// run and a wait4 on its pid, no descriptor, goroutine or cgroup kept, so
// that its time is the kernel's and the program's own start.
//
//	go run ./bench/scale                          # 100, 1000, 10000 x sleep 10, cgroup tier
//	go run ./bench/scale -n 1000 -sleep 1 -tier subreaper
//	go run ./bench/scale -starters 2              # Start from two goroutines
//	go run ./bench/scale -n 1000 -sleep 60s -stop # stop them all once started: the teardown
//	go run ./bench/scale -null                    # output to the null device: no pipes, 10,000 fit 20,000 descriptors
//	go run ./bench/scale -null -peers fork,corral,os/exec  # beside the floor
//
// The processes carry a token of this run in their environment; the
// program checks that none is left and kills only those (by pid and start
// time) if one is.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/proc"
)

func main() {
	counts := flag.String("n", "100,1000,10000", "comma-separated counts of concurrent runs")
	sleep := flag.Duration("sleep", 10*time.Second, "how long each run sleeps")
	tier := flag.String("tier", "", "containment tier (default: the strongest available)")
	starters := flag.Int("starters", 1, "goroutines that call Start (or cmd.Start) concurrently")
	peers := flag.String("peers", "os/exec,corral", "which to measure, in order: os/exec, corral, fork (the floor: a bare fork and exec, no descriptor held)")
	stop := flag.Bool("stop", false, "stop every run once all have started (corral: Stop; os/exec: SIGTERM) and time the teardown instead: \"last end\" counts from the stop")
	null := flag.Bool("null", false, "give every run the null device as its output instead of capturing it (corral: Spec.Stdio; os/exec: nil Stdout and Stderr): no pipes")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole program to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var ns []int
	for _, s := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bad count %q\n", s)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	var b [6]byte
	rand.Read(b[:])
	tag := "CORRAL_SCALE_TAG=" + hex.EncodeToString(b[:])
	// Warm up once: the runtime's poller and signal handling, the guardian
	// of the cgroup tier and the reaper belong to the baseline.
	proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}, Containment: corral.Containment(*tier)})
	exec.Command("true").Run()
	settle()

	output := "both streams captured"
	if *null {
		output = "output to the null device"
	}
	fmt.Printf("# concurrent `sleep %v` runs: %v at once, %s, %s, %d CPUs, %s, tier %q, %d starter(s)\n\n",
		*sleep, ns, output, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04"), *tier, *starters)
	fmt.Println("| runs | supervisor | start all | last end (from first start) | supervisor CPU / run | Go memory / run (heap + stacks) | RSS / run | fds / run | goroutines / run | threads added (peak) | errors | left after |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range ns {
		if err := proc.CheckCapacityFor(n, corralRun{tier: corral.Containment(*tier), null: *null}.spec(*sleep, tag)); err != nil {
			fmt.Printf("| %d | both | not run: %v |\n", n, err)
			continue
		}
		for _, peer := range strings.Split(*peers, ",") {
			var r runner
			switch peer {
			case "os/exec":
				r = osExec{null: *null}
			case "corral":
				r = corralRun{tier: corral.Containment(*tier), null: *null}
			case "fork":
				r = bareFork{null: *null}
			default:
				fmt.Fprintf(os.Stderr, "unknown peer %q\n", peer)
				os.Exit(2)
			}
			m := measure(r, n, *sleep, *starters, *stop, tag)
			fmt.Printf("| %d | %s | %.2f s | %.2f s | %.0f µs | %.1f KiB | %.1f KiB | %.2f | %.2f | %d | %d | %s |\n",
				n, r.name(), m.startAll.Seconds(), m.lastEnd.Seconds(), float64(m.cpu.Microseconds())/float64(n),
				float64(m.live)/float64(n)/1024, float64(m.rss)/float64(n)/1024, float64(m.fds)/float64(n), float64(m.goroutines)/float64(n),
				m.threads, m.errors, m.left)
		}
	}
}

// runner starts one run and returns its wait.
type runner interface {
	name() string
	start(sleep time.Duration, tag string) (wait, stop func() error, err error)
}

type osExec struct{ null bool }

func (osExec) name() string { return "os/exec" }

func (o osExec) start(sleep time.Duration, tag string) (func() error, func() error, error) {
	cmd := exec.Command("sleep", seconds(sleep))
	cmd.Env = append(os.Environ(), tag)
	var out, errb bytes.Buffer
	if !o.null {
		cmd.Stdout, cmd.Stderr = &out, &errb
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() error { return cmd.Process.Signal(unix.SIGTERM) }
	wait := func() error {
		if err := cmd.Wait(); err != nil && !stopped(cmd.ProcessState) {
			return err
		}
		return nil
	}
	return wait, stop, nil
}

// bareFork is the floor of what starting a run costs a Go supervisor on
// this machine: syscall.ForkExec of the program's path, resolved once,
// with the null device (or one pipe per stream, read by nothing but
// closed at the end) as its stdio, no pidfd, no goroutine, no cgroup, no
// process of its own; each run is waited for with wait4 on its pid. What
// it takes to start n runs is what the kernel and the program's own start
// take: no supervisor starts them faster here.
type bareFork struct{ null bool }

func (bareFork) name() string { return "fork (floor)" }

var sleepPath = sync.OnceValues(func() (string, error) { return exec.LookPath("sleep") })

func (b bareFork) start(sleep time.Duration, tag string) (func() error, func() error, error) {
	path, err := sleepPath()
	if err != nil {
		return nil, nil, err
	}
	files := []uintptr{0, 0, 0}
	var held []*os.File
	if b.null {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, nil, err
		}
		defer null.Close()
		files = []uintptr{null.Fd(), null.Fd(), null.Fd()}
	} else {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, err
		}
		defer null.Close()
		files[0] = null.Fd()
		for i := 1; i <= 2; i++ {
			r, w, err := os.Pipe()
			if err != nil {
				return nil, nil, err
			}
			defer w.Close()
			files[i] = w.Fd()
			held = append(held, r)
		}
	}
	pid, err := syscall.ForkExec(path, []string{"sleep", seconds(sleep)}, &syscall.ProcAttr{
		Env: append(os.Environ(), tag), Files: files,
	})
	if err != nil {
		for _, f := range held {
			f.Close()
		}
		return nil, nil, err
	}
	stop := func() error { return syscall.Kill(pid, syscall.SIGTERM) }
	wait := func() error {
		defer func() {
			for _, f := range held {
				f.Close()
			}
		}()
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if ws.Exited() && ws.ExitStatus() == 0 || ws.Signaled() && ws.Signal() == syscall.SIGTERM {
				return nil
			}
			return fmt.Errorf("sleep: %v", ws)
		}
	}
	return wait, stop, nil
}

type corralRun struct {
	tier corral.Containment
	null bool
}

func (c corralRun) name() string {
	if c.tier == "" {
		return "corral"
	}
	return "corral, " + string(c.tier)
}

func (c corralRun) spec(sleep time.Duration, tag string) *proc.Spec {
	s := &proc.Spec{Args: []string{"sleep", seconds(sleep)}, Env: []string{tag}, Containment: c.tier, MaxOutput: 4096}
	if c.null {
		s.Stdio = &[3]*os.File{}
	}
	return s
}

func (c corralRun) start(sleep time.Duration, tag string) (func() error, func() error, error) {
	p, err := proc.Start(context.Background(), c.spec(sleep, tag))
	if err != nil {
		return nil, nil, err
	}
	stop := func() error { p.Stop(); return nil }
	return func() error {
		r, err := p.Wait()
		if err == nil && (r.ExitCode != 0 && !r.Cancelled || r.Survivors > 0) {
			err = fmt.Errorf("exit %d, %d survivors", r.ExitCode, r.Survivors)
		}
		return err
	}, stop, nil
}

// stopped reports whether a process ended by the SIGTERM of -stop.
func stopped(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// measurement is one count under one supervisor.
type measurement struct {
	startAll, lastEnd        time.Duration
	stopAt                   time.Duration // with -stop: when the stops were sent
	rss, live                int64         // over the baseline, with all runs live: resident; heap in use after a GC and stacks
	fds, goroutines, threads int           // over the baseline; threads: at the peak
	cpu                      time.Duration // the supervisor's, user and system, from first start to last end
	errors                   int
	left                     string
}

func measure(r runner, n int, sleep time.Duration, starters int, stopAll bool, tag string) measurement {
	var m measurement
	live0 := liveBytes()
	rss0, fd0, g0 := rss(), fds(), runtime.NumGoroutine()
	cpu0 := cpuTime()
	threads0 := threads()
	var peakThreads atomic.Int64
	stopSampling := sampleThreads(&peakThreads)

	waits := make([]func() error, n)
	stops := make([]func() error, n)
	var errs atomic.Int64
	var next atomic.Int64
	first := time.Now()
	var wg sync.WaitGroup
	for range starters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				w, st, err := r.start(sleep, tag)
				if err != nil {
					if errs.Add(1) == 1 {
						fmt.Fprintln(os.Stderr, "start:", err)
					}
					continue
				}
				waits[i], stops[i] = w, st
			}
		}()
	}
	wg.Wait()
	m.startAll = time.Since(first)
	// All are live if the start took less than the sleep.
	if m.startAll < sleep {
		m.rss, m.fds, m.goroutines = rss()-rss0, fds()-fd0, runtime.NumGoroutine()-g0
		c := cpuTime()
		m.live = liveBytes() - live0
		cpu0 += cpuTime() - c // the measurement's collection is not the runs'

	} else {
		m.left = "started slower than they sleep: counts not taken; "
	}
	if stopAll {
		m.stopAt = time.Since(first)
		for _, st := range stops {
			if st != nil {
				st()
			}
		}
	}
	// Waited for in the order they started (they end in that order): a
	// goroutine per os/exec Wait would block a thread each.
	for _, w := range waits {
		if w == nil {
			continue
		}
		if err := w(); err != nil {
			if errs.Add(1) == 1 {
				fmt.Fprintln(os.Stderr, "wait:", err)
			}
		}
	}
	m.lastEnd = time.Since(first)
	if stopAll {
		m.lastEnd -= m.stopAt // from the stop
	}
	m.cpu = cpuTime() - cpu0
	stopSampling()
	m.threads = int(peakThreads.Load() - threads0)
	m.errors = int(errs.Load())
	waits = nil
	m.left += leftovers(tag, fd0, g0)
	settle()
	return m
}

// leftovers reports what outlived the runs: tagged processes (killed, by
// pid and start time), zombies, descriptors and goroutines over the
// baseline.
func leftovers(tag string, fd0, g0 int) string {
	token := strings.TrimPrefix(tag, "CORRAL_SCALE_TAG=")
	var left []string
	if all, err := procfs.Scan(); err == nil {
		live, zombies := 0, 0
		for _, st := range all {
			if st.Pid == os.Getpid() {
				continue
			}
			if st.Zombie() && st.PPid == os.Getpid() {
				zombies++
			} else if !st.Zombie() && procfs.HasToken(st.Pid, token) {
				live++
				procfs.Signal(st.Pid, st.Start, unix.SIGKILL)
			}
		}
		if live > 0 {
			left = append(left, fmt.Sprintf("%d processes (killed)", live))
		}
		if zombies > 0 {
			left = append(left, fmt.Sprintf("%d zombies", zombies))
		}
	}
	// Goroutines of a finished run may take a moment to return.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (fds() > fd0 || runtime.NumGoroutine() > g0) {
		time.Sleep(20 * time.Millisecond)
	}
	if d := fds() - fd0; d > 0 {
		left = append(left, fmt.Sprintf("%d fds", d))
	}
	if d := runtime.NumGoroutine() - g0; d > 0 {
		left = append(left, fmt.Sprintf("%d goroutines", d))
	}
	if len(left) == 0 {
		return "nothing"
	}
	return strings.Join(left, ", ")
}

// sampleThreads records the peak of this process's thread count until the
// returned function is called.
func sampleThreads(peak *atomic.Int64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if n := threads(); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// settle lets the last runs' goroutines end and the heap shrink.
func settle() {
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
}

// threads returns this process's thread count.
func threads() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// fds counts this process's descriptors, less those corral keeps beyond
// any run (its idle inits' sockets and pidfds).
func fds() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && !shim.Kept(fd) {
			n++
		}
	}
	return n
}

// liveBytes returns the heap in use after a collection, and the
// goroutines' stacks: what the supervisor holds, garbage aside.
func liveBytes() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc + ms.StackInuse)
}

func rss() int64 {
	n, err := procfs.Memory(0, "VmRSS")
	if err != nil {
		panic(err)
	}
	return n
}
