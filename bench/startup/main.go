//go:build linux

// Command startup measures what a user pays to start corral, beside the
// peer each start is compared with (issue 27), in one run on one machine:
//
//   - `corral --version` beside a Go hello world (target ≤ 1.5×);
//   - `corral run -- /bin/true` beside GNU `timeout 10 /bin/true`
//     (target ≤ 1.5×), and beside both the floor of a Go supervisor: a Go
//     program that only starts /bin/true and waits for it;
//   - `corral run --sandbox workspace -- /bin/true` beside bubblewrap with
//     the same confinement (target ≤ 1.5×), when bwrap is installed; and
//     `getent passwd root` in both, a command that looks a user up (the C
//     library's connect to its name service cache's socket goes to
//     corral's gate).
//
// Each command is started from here (fork, exec, wait) with stdio on the
// null device and timed from the fork to the reaped exit; the runs of all
// rows are interleaved, so that a change of the shared machine's load hits
// them alike (in a new random order each round). A pair prints both medians and their ratio, and the CPU time
// the reaped process used (its own and its waited children's, not a
// helper that outlives it, such as the cgroup tier's guardian).
//
// -alive N leaves N supervisors running (this build's corral run --
// sleep 3600) while the rows are measured, as on a machine that runs many
// agents: what a corral command's start does per supervisor alive shows.
//
// corral is built with its companions (corral-client, corral-mcp, corral-serve, corral-shim) beside
// it, as CGO_ENABLED=0 go install ./cmd/... installs them (README); the
// "cgo build" rows are the same source built with cgo on (the default
// where a C compiler is installed: net and os/user then link libc, and
// corral is dynamically linked); the "corral alone" rows run the static
// binary from a directory without its companions, where its runs start
// their helpers from corral itself. -before adds the rows of another
// corral binary (an older build), with the corral-shim beside it if there
// is one. corral and the older build also get a row of corral timeout and
// one of the subreaper tier (an init per run: a user without a cgroup of
// their own).
//
//	go run ./bench/startup                  # 150 runs of each
//	go run ./bench/startup -n 300 -before /tmp/old/corral   # corral-shim beside it, if built
//	go run ./bench/startup -alive 300 -before /tmp/old/corral  # beside 300 supervisors left running
//	go run ./bench/startup -dir /tmp        # builds and workspace under /tmp
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/corralrun/corral/bench/internal/benchutil"
)

// row is one command line, with the wall and CPU times of its runs.
type row struct {
	name      string
	argv      []string
	peer      *row // the row it is compared with; nil for a peer
	wall, cpu []time.Duration
}

// floorSource is the least a supervisor written in Go can do to run a
// command: start it (fork and exec, its stdio inherited) and wait for it,
// with no signal handled, no deadline, no containment. Its row beside GNU
// timeout is what a Go program's own start leaves of the 1.5× asked of
// corral run.
const floorSource = `package main

import (
	"os"
	"syscall"
)

func main() {
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		os.Exit(125)
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	os.Exit(ws.ExitStatus())
}
`

func main() {
	n := flag.Int("n", 150, "runs of each command")
	before := flag.String("before", "", "another corral binary to measure beside this one (alone in its directory)")
	alive := flag.Int("alive", 0, "supervisors left running while the rows are measured, as on a machine running many agents: this build's `corral run -- sleep 3600`, each with its guardian and its cgroup directory")
	where := flag.String("dir", "", "where the builds and the sandbox's workspace are made (default: the user's cache directory, as installed programs and projects are not in /tmp; under /tmp a sandboxed run makes and removes their mount points in its private /tmp, bubblewrap's tmpfs does not)")
	flag.Parse()
	if *where == "" {
		if c, err := os.UserCacheDir(); err == nil && os.MkdirAll(c, 0o755) == nil {
			*where = c
		}
	}
	dir := benchutil.TempDir(*where, "corral-bench-startup-")
	defer os.RemoveAll(dir)
	corral := benchutil.BuildCorral(filepath.Join(dir, "static"), "CGO_ENABLED=0")
	dynamic := benchutil.BuildCorral(filepath.Join(dir, "cgo"))
	alone := filepath.Join(dir, "alone", "corral")
	benchutil.Check(os.Mkdir(filepath.Dir(alone), 0o755))
	benchutil.Check(os.Link(corral, alone))
	ws := filepath.Join(dir, "ws")
	benchutil.Check(os.Mkdir(ws, 0o755))
	gnu, err := exec.LookPath("timeout")
	benchutil.Check(err)

	hello := &row{name: "a Go hello world", argv: []string{benchutil.BuildHello(dir)}}
	timeout := &row{name: "GNU timeout 10 /bin/true", argv: []string{gnu, "10", "/bin/true"}}
	floor := &row{name: "a Go program that runs /bin/true and waits", argv: []string{benchutil.BuildGo(dir, "floor", floorSource), "/bin/true"}, peer: timeout}
	rows := []*row{hello, timeout, floor}
	var bwrap, bwrapLookup *row
	// getent passwd root looks a user up as many commands do at their
	// start (bash without SHELL, id, ssh, git): the C library tries its
	// name service cache's socket first.
	lookup := []string{"getent", "passwd", "root"}
	if b, err := exec.LookPath("bwrap"); err == nil {
		bw := []string{b, "--unshare-all", "--die-with-parent",
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", ws, ws, "--chdir", ws}
		bwrap = &row{name: "bwrap --unshare-all --die-with-parent … /bin/true", argv: append(slices.Clone(bw), "/bin/true")}
		bwrapLookup = &row{name: "bwrap --unshare-all --die-with-parent … getent passwd root", argv: append(slices.Clone(bw), lookup...)}
		rows = append(rows, bwrap, bwrapLookup)
	} else {
		fmt.Fprintln(os.Stderr, "bubblewrap is not installed (apt-get install bubblewrap): the sandbox row is left out")
	}
	// more adds corral timeout (the drop-in, beside GNU's) and the
	// subreaper tier (where corral has no cgroup of its own, as a user
	// without a delegated one: an init per run).
	add := func(label, bin string, more bool) {
		rows = append(rows,
			&row{name: label + " --version", argv: []string{bin, "--version"}, peer: hello},
			&row{name: label + " run -- /bin/true", argv: []string{bin, "run", "--", "/bin/true"}, peer: timeout})
		if more {
			rows = append(rows,
				&row{name: label + " timeout 10 /bin/true", argv: []string{bin, "timeout", "10", "/bin/true"}, peer: timeout},
				&row{name: label + " run --containment subreaper -- /bin/true", argv: []string{bin, "run", "--containment", "subreaper", "--", "/bin/true"}, peer: timeout})
		}
		if bwrap != nil {
			sandboxed := []string{bin, "run", "--sandbox", "workspace", "--workdir", ws, "--"}
			rows = append(rows, &row{name: label + " run --sandbox workspace -- /bin/true",
				argv: append(slices.Clone(sandboxed), "/bin/true"), peer: bwrap})
			if more {
				rows = append(rows, &row{name: label + " run --sandbox workspace -- getent passwd root",
					argv: append(slices.Clone(sandboxed), lookup...), peer: bwrapLookup})
			}
		}
	}
	add("corral", corral, true)
	add("corral, cgo build", dynamic, false)
	add("corral alone", alone, false)
	if *before != "" {
		old := filepath.Join(dir, "before", "corral")
		benchutil.Check(os.Mkdir(filepath.Dir(old), 0o755))
		data, err := os.ReadFile(*before)
		benchutil.Check(err)
		benchutil.Check(os.WriteFile(old, data, 0o755))
		// Its helpers' program, when it has one beside it: as installed.
		if data, err := os.ReadFile(filepath.Join(filepath.Dir(*before), "corral-shim")); err == nil {
			benchutil.Check(os.WriteFile(filepath.Join(filepath.Dir(old), "corral-shim"), data, 0o755))
		}
		add("corral before", old, true)
	}

	// Every program measured starts as one installed long ago would: read
	// back from disk, not from the pieces of page cache its writer left
	// (benchutil.Settle); then warmed alike.
	settled := []string{filepath.Join(dir, "static"), filepath.Join(dir, "cgo"), filepath.Join(dir, "before"), "/bin/true"}
	for _, r := range rows {
		settled = append(settled, r.argv[0])
	}
	benchutil.Settle(settled...)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	benchutil.Check(err)
	held := holdSupervisors(corral, *alive, null)
	defer stopSupervisors(held)
	for _, r := range rows { // warm the page cache
		for range 5 {
			_, _, err := runOnce(r.argv, null)
			benchutil.Check(err)
		}
	}
	order := slices.Clone(rows)
	for range *n {
		// A new order each round: what a row leaves behind (a sandbox's
		// namespaces are torn down by the kernel after its exit) falls on
		// every row alike, not always on the one after it.
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, r := range order {
			wall, cpu, err := runOnce(r.argv, null)
			benchutil.Check(err)
			r.wall, r.cpu = append(r.wall, wall), append(r.cpu, cpu)
		}
	}
	fmt.Printf("%d runs of each, interleaved", *n)
	if *alive > 0 {
		fmt.Printf(", beside %d supervisors left running (corral run -- sleep 3600)", *alive)
	}
	fmt.Printf("\n\n")
	fmt.Printf("| %-60s | %9s | %9s | %9s | %9s | %-28s | %7s |\n", "command", "p10", "median", "p90", "CPU", "peer (median)", "ratio")
	fmt.Printf("|%s|%s|%s|%s|%s|%s|%s|\n", dashes(62), dashes(11), dashes(11), dashes(11), dashes(11), dashes(30), dashes(9))
	for _, r := range rows {
		s := slices.Sorted(slices.Values(r.wall))
		peer, ratio := "", ""
		if r.peer != nil {
			peer = fmt.Sprintf("%s (%s)", short(r.peer.name), benchutil.MS(benchutil.Median(r.peer.wall)))
			ratio = fmt.Sprintf("%.2f×", float64(benchutil.Median(r.wall))/float64(benchutil.Median(r.peer.wall)))
		}
		fmt.Printf("| %-60s | %9s | %9s | %9s | %9s | %-28s | %7s |\n", r.name, benchutil.MS(s[len(s)/10]), benchutil.MS(benchutil.Median(r.wall)), benchutil.MS(s[len(s)*9/10]), benchutil.MS(benchutil.Median(r.cpu)), peer, ratio)
	}
}

// runOnce starts argv with stdio on the null device and returns the time
// from the fork to its reaped exit and the CPU time it used; a non-zero
// exit is an error.
func runOnce(argv []string, null *os.File) (time.Duration, time.Duration, error) {
	start := time.Now()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{null.Fd(), null.Fd(), null.Fd()},
	})
	if err != nil {
		return 0, 0, err
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err = syscall.Wait4(pid, &ws, 0, &ru)
		if err != syscall.EINTR {
			break
		}
	}
	wall := time.Since(start)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if err == nil && ws.ExitStatus() != 0 {
		err = fmt.Errorf("%s: %v", strings.Join(argv, " "), ws)
	}
	reapStrays()
	return wall, cpu, err
}

// holdSupervisors starts n of corral's `corral run -- sleep 3600` and
// waits until each runs its sleep (its child, or its init's); it returns
// their pids. Each gets SIGTERM when this program ends (its parent-death
// signal), if it has not ended them itself.
func holdSupervisors(corral string, n int, null *os.File) []int {
	var pids []int
	for range n {
		pid, err := syscall.ForkExec(corral, []string{corral, "run", "--", "sleep", "3600"}, &syscall.ProcAttr{
			Env:   os.Environ(),
			Files: []uintptr{null.Fd(), null.Fd(), null.Fd()},
			Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}, // ended with this program, however it ends
		})
		benchutil.Check(err)
		pids = append(pids, pid)
	}
	deadline := time.Now().Add(time.Minute)
	for _, pid := range pids {
		for !hasChildren(pid) {
			if time.Now().After(deadline) {
				stopSupervisors(pids)
				benchutil.Check(fmt.Errorf("the %d supervisors to hold were not all running within a minute", n))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return pids
}

// hasChildren reports whether pid has a child: any of its threads may
// have forked it.
func hasChildren(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		if kids, _ := os.ReadFile(f); len(strings.TrimSpace(string(kids))) > 0 {
			return true
		}
	}
	return false
}

// stopSupervisors ends holdSupervisors' supervisors with SIGTERM (each
// takes its tree down) and reaps them.
func stopSupervisors(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	for _, pid := range pids {
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
	}
}

// reapStrays reaps the zombies left to this process (bubblewrap's own
// processes can be reparented here).
func reapStrays() {
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

func short(name string) string {
	if i := strings.Index(name, " "); i > 0 && strings.HasPrefix(name, "bwrap") {
		return "bwrap"
	}
	return strings.TrimSuffix(name, " /bin/true")
}

func dashes(n int) string { return strings.Repeat("-", n) }
