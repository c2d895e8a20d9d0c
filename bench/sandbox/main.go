//go:build linux

// Command sandbox measures what corral's sandbox costs to set up, beside
// its peers, in one run on one machine: /bin/true run plainly (os/exec),
// in corral's sandbox (a minimal init: clone into new namespaces, Prepare,
// Confine, exec), and under bubblewrap with an equivalent profile. The
// runs are interleaved, so that a change of load hits them all alike, and
// their medians compared.
//
//	go run ./bench/sandbox          # 300 runs of each
//	go run ./bench/sandbox -n 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/sandbox/sandboxtest"
	"github.com/corralrun/corral/proc"
)

// runner is one way of running /bin/true; run returns the wall time of one
// run.
type runner struct {
	name string
	run  func() (time.Duration, error)
	wall []time.Duration
}

func main() {
	sandboxtest.Main() // the re-executed init
	n := flag.Int("n", 300, "runs of each")
	flag.Parse()

	support, err := sandbox.Probe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
	ws := benchutil.TempDir("", "corral-bench-ws-")
	defer os.RemoveAll(ws)

	var setup, initStart, prepare, confine, fork []time.Duration
	corralRun := func() (time.Duration, error) {
		start := time.Now()
		// corral makes a private /tmp for each sandbox and removes it after.
		tmp, err := os.MkdirTemp("", "corral-bench-tmp-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(tmp)
		p := &sandbox.Policy{Mode: corral.SandboxWorkspace, Workdir: ws, TmpDir: tmp}
		i, err := sandboxtest.Start(sandboxtest.Config{Policy: p, Args: []string{"/bin/true"}}, os.Stdout, os.Stderr)
		if err != nil {
			return 0, err
		}
		code, err := i.Wait()
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d", code)
		}
		wall := time.Since(start)
		st := i.Status()
		setup = append(setup, i.SetupTime())
		initStart = append(initStart, time.Duration(st.InitStart-i.Started))
		fork = append(fork, time.Duration(st.Execed-st.Confined))
		prepare = append(prepare, time.Duration(st.Prepared-st.InitStart))
		confine = append(confine, time.Duration(st.Confined-st.Prepared))
		return wall, err
	}
	procRun := func(sb corral.Sandbox) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			start := time.Now()
			res, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"/bin/true"}, Dir: ws, Sandbox: sb})
			if err == nil && !res.Success() {
				err = fmt.Errorf("%s", res.Status())
			}
			return time.Since(start), err
		}
	}
	runners := []*runner{
		{name: "plain `/bin/true` (os/exec)", run: func() (time.Duration, error) { return timed(exec.Command("/bin/true")) }},
		{name: "corral `proc.Run`, no sandbox", run: procRun(corral.Sandbox{})},
		{name: "corral `proc.Run`, `--sandbox workspace` (the product path: init, policy, private /tmp, teardown)", run: procRun(corral.Sandbox{Mode: corral.SandboxWorkspace})},
		{name: "corral sandbox alone: clone, Prepare, Confine, exec (a minimal init)", run: corralRun},
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		runners = append(runners, &runner{
			name: "bubblewrap `bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind WS WS`",
			run: func() (time.Duration, error) {
				d, err := timed(exec.Command(bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
					"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", ws, ws, "/bin/true"))
				reapStrays()
				return d, err
			},
		})
	} else {
		fmt.Fprintln(os.Stderr, "bubblewrap is not installed (apt-get install bubblewrap): measured without it")
	}

	fmt.Printf("# corral sandbox setup — %s, %d CPUs, Linux, Landlock ABI %d, uid %d, %s\n\n", runtime.Version(), runtime.NumCPU(), support.LandlockABI, os.Getuid(), time.Now().UTC().Format("2006-01-02"))
	for _, r := range runners { // warm up: page cache, first clone
		if _, err := r.run(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", r.name, err)
			benchutil.Exit(1)
		}
	}
	setup, initStart, prepare, confine, fork = nil, nil, nil, nil, nil
	for i := 0; i < *n; i++ {
		for _, r := range runners {
			d, err := r.run()
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", r.name, err)
				benchutil.Exit(1)
			}
			r.wall = append(r.wall, d)
		}
	}

	base := median(runners[0].wall)
	fmt.Printf("/bin/true, %d runs each, interleaved: wall time from start to exit\n\n", *n)
	fmt.Println("| | median | p90 | extra over plain (median) |")
	fmt.Println("|---|---|---|---|")
	for _, r := range runners {
		m := median(r.wall)
		fmt.Printf("| %s | %s | %s | %s |\n", r.name, ms(m), ms(percentile(r.wall, 0.9)), ms(m-base))
	}
	fmt.Printf("\ncorral sandbox, clone to the command's exec (medians): %s in all: the init's clone, exec and start %s, Prepare %s, Confine %s, the command's fork and exec %s\n",
		ms(median(setup)), ms(median(initStart)), ms(median(prepare)), ms(median(confine)), ms(median(fork)))
}

// reapStrays reaps the zombies bubblewrap's processes leave to this
// process, a child subreaper once corral has run here: corral never reaps
// what it did not start, and hundreds of them would slow every later scan
// of its children. No run of corral is in flight when it is called.
func reapStrays() {
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

func timed(cmd *exec.Cmd) (time.Duration, error) {
	start := time.Now()
	err := cmd.Run()
	return time.Since(start), err
}

func median(d []time.Duration) time.Duration { return percentile(d, 0.5) }

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
