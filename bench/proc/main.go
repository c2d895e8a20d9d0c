//go:build linux

// Command proc measures corral's supervision core beside its peers, in one
// run on one machine: timeout overshoot and survivors over escape scenarios
// (vs GNU timeout and os/exec with WaitDelay), output capture throughput and
// peak memory (vs cat through a pipe), a thousand concurrent runs, and how
// soon a killed supervisor's tree goes (vs os/exec, whose tree stays).
//
//	go run ./bench/proc            # everything
//	go run ./bench/proc overshoot  # one part: overshoot, capture, concurrent
//
// Spawn overhead is a Go benchmark: go test -bench Spawn ./proc
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/proc"
)

func main() {
	parts := map[string]func(){
		"spawn":      spawn,
		"overshoot":  overshoot,
		"capture":    capture,
		"concurrent": concurrent,
		"death":      death,
	}
	order := []string{"spawn", "overshoot", "capture", "concurrent", "death"}
	if len(os.Args) > 1 {
		order = os.Args[1:]
	}
	fmt.Printf("# corral proc benchmarks — %s, %d CPUs, %s\n\n", runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	for _, p := range order {
		f, ok := parts[p]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown part %q (want spawn, overshoot, capture, concurrent or death)\n", p)
			os.Exit(2)
		}
		f()
	}
}

// ---- spawn -------------------------------------------------------------

// spawn times Run of /bin/true under each tier against os/exec, the runs
// interleaved so that a change of load hits them all alike, and compares
// medians.
func spawn() {
	const n = 2000
	type runner struct {
		name string
		run  func()
	}
	runners := []runner{{"os/exec `exec.Command(\"/bin/true\").Run()`", func() { exec.Command("/bin/true").Run() }}}
	tiers := []corral.Containment{corral.ContainmentSubreaper, corral.ContainmentProcessGroup}
	if _, err := cgroup.Detect(); err == nil {
		tiers = append([]corral.Containment{corral.ContainmentCgroup}, tiers...)
	}
	for _, tier := range tiers {
		spec := &proc.Spec{Args: []string{"/bin/true"}, Containment: tier}
		runners = append(runners, runner{"corral `proc.Run`, " + string(tier), func() { proc.Run(context.Background(), spec) }})
	}
	times := make([][]time.Duration, len(runners))
	for i := 0; i < n; i++ {
		for j, r := range runners {
			t0 := time.Now()
			r.run()
			times[j] = append(times[j], time.Since(t0))
		}
	}
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	base := median(times[0])
	fmt.Printf("## Spawn overhead: /bin/true, %d runs each, interleaved\n\n", n)
	fmt.Println("| | median | ratio to os/exec |")
	fmt.Println("|---|---|---|")
	for j, r := range runners {
		m := median(times[j])
		fmt.Printf("| %s | %.0f µs | %.2f |\n", r.name, float64(m.Microseconds()), float64(m)/float64(base))
	}
	fmt.Println()
}

// ---- overshoot ---------------------------------------------------------

type escape struct {
	name   string
	script string // TAG is replaced by the run's tag
	dies   bool   // the tree dies on SIGTERM
}

var escapes = []escape{
	{"background job holds stdout", `sleep 600 & echo started; sleep 600`, true},
	{"double fork holds stdout", `(sleep 600 &); echo started; sleep 600`, true},
	{"setsid escapee holds stdout", `setsid sleep 600 & echo started; sleep 600`, true},
	{"daemon: setsid, closed fds, clean env", `setsid -f env -i bash -c 'exec 0<&- 1>&- 2>&-; exec -a TAG-daemon sleep 600'; echo started; sleep 600`, true},
	{"nohup job, output to /dev/null", `nohup sleep 600 >/dev/null 2>&1 & echo started; sleep 600`, true},
	{"tree ignores SIGTERM", `trap '' TERM; bash -c "trap '' TERM; sleep 600" & echo started; while :; do sleep 1; done`, false},
}

const (
	deadline = time.Second
	grace    = 2 * time.Second
	drain    = 250 * time.Millisecond
	hang     = 15 * time.Second // a peer that has not returned by then is reported hung
)

type outcome struct {
	elapsed   time.Duration
	hung      bool
	survivors int
}

func (o outcome) String() string {
	if o.hung {
		return fmt.Sprintf("hung >%v, %d left", hang, o.survivors)
	}
	return fmt.Sprintf("+%d ms, %d left", (o.elapsed - deadline).Milliseconds(), o.survivors)
}

func overshoot() {
	fmt.Printf("## Timeout overshoot (deadline %v, grace %v, drain %v)\n\n", deadline, grace, drain)
	fmt.Println("Time past the deadline until the caller has the result (exit status and all output), and processes of the tree still alive after it returned.")
	fmt.Println()
	type runner struct {
		name string
		run  func(tag, script string) outcome
	}
	runners := []runner{}
	if _, err := cgroup.Detect(); err == nil {
		runners = append(runners, runner{"corral (cgroup)", corralRunner(corral.ContainmentCgroup)})
	}
	runners = append(runners,
		runner{"corral (subreaper)", corralRunner(corral.ContainmentSubreaper)},
		runner{"corral (pgroup)", corralRunner(corral.ContainmentProcessGroup)},
		runner{"GNU timeout -k 2s", gnuTimeout},
		runner{"os/exec + WaitDelay 2s", osExec},
	)
	fmt.Print("| scenario |")
	for _, r := range runners {
		fmt.Printf(" %s |", r.name)
	}
	fmt.Print("\n|---|")
	for range runners {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, e := range escapes {
		fmt.Printf("| %s |", e.name)
		for _, r := range runners {
			tag := newTag()
			o := r.run(tag, strings.ReplaceAll(e.script, "TAG", tag))
			o.survivors = sweep(tag)
			fmt.Printf(" %s |", o)
		}
		fmt.Println()
	}
	fmt.Println()
}

func corralRunner(tier corral.Containment) func(tag, script string) outcome {
	return func(tag, script string) outcome {
		start := time.Now()
		_, err := proc.Run(context.Background(), &proc.Spec{
			Args:        []string{"bash", "-c", script},
			Env:         []string{"CORRAL_BENCH_TAG=" + tag},
			Timeout:     deadline,
			Grace:       grace,
			Drain:       drain,
			Containment: tier,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		return outcome{elapsed: time.Since(start)}
	}
}

// gnuTimeout runs the script under GNU timeout and reads its output to EOF,
// as an agent tool that captures output does (subprocess.run with
// capture_output, child_process.exec).
func gnuTimeout(tag, script string) outcome {
	cmd := exec.Command("timeout", "-k", grace.String(), deadline.String(), "bash", "-c", script)
	cmd.Env = append(os.Environ(), "CORRAL_BENCH_TAG="+tag)
	return readToEOF(cmd)
}

// osExec runs the script with exec.CommandContext and WaitDelay, the best
// the standard library offers.
func osExec(tag, script string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(os.Environ(), "CORRAL_BENCH_TAG="+tag)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = grace
	// os/exec copies the output itself and stops waiting for it after
	// WaitDelay: the best use of the standard library.
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	done := make(chan struct{})
	go func() {
		cmd.Run()
		close(done)
	}()
	select {
	case <-done:
		return outcome{elapsed: time.Since(start)}
	case <-time.After(hang):
		return outcome{elapsed: time.Since(start), hung: true}
	}
}

func readToEOF(cmd *exec.Cmd) outcome {
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, out)
		cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return outcome{elapsed: time.Since(start)}
	case <-time.After(hang):
		// Give up on the peer: kill what it left (ours, by tag) so the
		// reader returns.
		return outcome{elapsed: time.Since(start), hung: true}
	}
}

func newTag() string {
	var b [6]byte
	rand.Read(b[:])
	return "corralbench_" + hex.EncodeToString(b[:])
}

// sweep counts the live processes carrying tag a moment after a run
// returned, then kills them by pid and start time. Only processes this
// program started carry the tag.
func sweep(tag string) int {
	time.Sleep(50 * time.Millisecond) // let a just-killed tree finish dying
	all, _ := procfs.Scan()
	n := 0
	for _, st := range all {
		if st.Zombie() || st.Pid == os.Getpid() || !procfs.HasToken(st.Pid, tag) {
			continue
		}
		n++
		procfs.Signal(st.Pid, st.Start, syscall.SIGKILL)
	}
	return n
}

// ---- capture -----------------------------------------------------------

func capture() {
	const size = 1 << 30
	fmt.Printf("## Capture of 1 GiB of output\n\n")
	src := fmt.Sprintf("head -c %d /dev/zero", size)
	// Peer: the same producer into cat through a pipe.
	start := time.Now()
	if err := exec.Command("bash", "-c", src+" | cat >/dev/null").Run(); err != nil {
		panic(err)
	}
	catDur := time.Since(start)
	base := hwm()
	start = time.Now()
	res, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"bash", "-c", src}, MaxOutput: proc.DefaultMaxOutput})
	if err != nil {
		panic(err)
	}
	dur := time.Since(start)
	peak := hwm()
	mbps := func(d time.Duration) float64 { return float64(size) / d.Seconds() / (1 << 20) }
	fmt.Println("| | throughput | ratio | supervisor peak RSS |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| `head -c 1G /dev/zero \\| cat >/dev/null` | %.0f MiB/s | 1.00 | — |\n", mbps(catDur))
	fmt.Printf("| corral Run, 1 MiB cap | %.0f MiB/s | %.2f | %.1f MiB (before: %.1f MiB; cap 1 MiB) |\n", mbps(dur), catDur.Seconds()/dur.Seconds(), float64(peak)/(1<<20), float64(base)/(1<<20))
	fmt.Printf("\nbytes seen %d, kept %d, truncated %v\n\n", res.Stdout.Bytes, len(res.Stdout.Head)+len(res.Stdout.Tail), res.Stdout.Truncated)
}

// hwm returns this process's peak resident set size in bytes.
func hwm() int64 {
	n, err := procfs.Memory(0, "VmHWM")
	if err != nil {
		panic(err)
	}
	return n
}

// ---- concurrent --------------------------------------------------------

func concurrent() {
	const n = 1000
	fmt.Printf("## %d concurrent `sleep 1` runs\n\n", n)
	// One warm-up run first: the runtime's poller (two descriptors) and
	// signal goroutine, started once per process, belong to the baseline.
	proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}})
	time.Sleep(300 * time.Millisecond) // the reaper's goroutine lingers 100 ms
	runtime.GC()
	g0, fd0, rss0 := runtime.NumGoroutine(), fds(), rss()
	for _, tier := range []corral.Containment{corral.ContainmentAuto, corral.ContainmentSubreaper, corral.ContainmentProcessGroup} {
		start := time.Now()
		errs := make(chan error, n)
		peakG := 0
		var tierUsed corral.Containment
		procs := make([]*proc.Process, 0, n)
		starts := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			t0 := time.Now()
			p, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"sleep", "1"}, Containment: tier, MaxOutput: 4096})
			starts = append(starts, time.Since(t0))
			if err != nil {
				errs <- err
				continue
			}
			procs = append(procs, p)
		}
		peakG = runtime.NumGoroutine()
		peakRSS := rss()
		durs := make([]time.Duration, 0, n)
		for _, p := range procs {
			r, err := p.Wait()
			if err != nil {
				errs <- err
			}
			tierUsed = r.Containment
			durs = append(durs, r.Duration)
		}
		wall := time.Since(start)
		close(errs)
		nerr := 0
		for range errs {
			nerr++
		}
		sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
		sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
		procs = nil
		runtime.GC()
		fmt.Printf("- %s: wall %v for %d runs (%d errors); Start p50 %v p99 %v; run duration p50 %v p99 %v; during: %d goroutines, RSS %.1f MiB\n",
			tierUsed, wall.Round(time.Millisecond), len(durs), nerr, starts[len(starts)/2].Round(time.Microsecond), starts[len(starts)*99/100].Round(time.Microsecond),
			durs[len(durs)/2].Round(time.Millisecond), durs[len(durs)*99/100].Round(time.Millisecond), peakG, float64(peakRSS)/(1<<20))
	}
	time.Sleep(300 * time.Millisecond)
	runtime.GC()
	fmt.Printf("- before: %d goroutines, %d fds, RSS %.1f MiB; after: %d goroutines, %d fds, RSS %.1f MiB\n\n",
		g0, fd0, float64(rss0)/(1<<20), runtime.NumGoroutine(), fds(), float64(rss())/(1<<20))
}

func fds() int {
	e, _ := os.ReadDir("/proc/self/fd")
	return len(e)
}

func rss() int64 {
	n, err := procfs.Memory(0, "VmRSS")
	if err != nil {
		panic(err)
	}
	return n
}
