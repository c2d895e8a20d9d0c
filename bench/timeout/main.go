//go:build linux

// Command timeout measures what `corral timeout 10 /bin/true` costs beside
// GNU `timeout 10 /bin/true`, in one run on one machine: each command is
// started from here (fork, exec, wait) and timed from the fork to the
// reaped exit, the runs interleaved so that a change of load hits them all
// alike, and the medians compared. `corral --version` and `corral run
// --timeout 10s -- /bin/true` are measured beside them, with the start of
// corral's guardian alone (which corral timeout forks on the cgroup tier)
// and a Go hello world: the shares of the binary's own start. With
// -corral, corral-shim is looked for beside the binary given.
//
//	go run ./bench/timeout                 # builds corral, 150 runs of each
//	go run ./bench/timeout -n 300 -corral ./corral
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/internal/guardelf"
)

// runner is one command line, with the wall times of its runs.
type runner struct {
	name string
	argv []string
	env  []string // added to this program's environment
	wall []time.Duration
}

func main() {
	n := flag.Int("n", 150, "runs of each command")
	bin := flag.String("corral", "", "the corral binary (default: build ./cmd/corral)")
	only := flag.String("only", "", "comma-separated names of the rows to run (default: all)")
	flag.Parse()
	dir := benchutil.TempDir("", "corral-bench-timeout-")
	defer os.RemoveAll(dir)
	corral := *bin
	if corral == "" {
		// corral-shim beside it, as go install ./cmd/... puts it: the
		// guardian corral timeout forks starts from it.
		corral = benchutil.BuildCorral(dir)
	}
	corral, err := filepath.Abs(corral)
	benchutil.Check(err)
	link := filepath.Join(dir, "timeout")
	benchutil.Check(os.Symlink(corral, link))
	gnu, err := exec.LookPath("timeout")
	benchutil.Check(err)
	hello := benchutil.BuildHello(dir)
	guardian := []string{"CORRAL_SHIM=guardian", "CORRAL_SHIM_CGROUP_DIR=" + dir}
	// The native guardian as corral runs it (from a memory file), here from
	// a file: its start, end of file on its stdin, its write and exit.
	native := filepath.Join(dir, "native-guardian")
	benchutil.Check(os.WriteFile(native, guardelf.Image(), 0o755))
	runners := pick([]*runner{
		{name: "GNU timeout 10 /bin/true", argv: []string{gnu, "10", "/bin/true"}},
		{name: "corral timeout 10 /bin/true", argv: []string{corral, "timeout", "10", "/bin/true"}},
		{name: "timeout (symlink to corral) 10 /bin/true", argv: []string{link, "10", "/bin/true"}},
		{name: "corral --version", argv: []string{corral, "--version"}},
		{name: "corral run --timeout 10s -- /bin/true", argv: []string{corral, "run", "--timeout", "10s", "--", "/bin/true"}},
		{name: "corral's guardian alone (its start, then exit)", argv: []string{corral}, env: guardian},
		{name: "corral-shim's guardian alone", argv: []string{filepath.Join(filepath.Dir(corral), "corral-shim")}, env: guardian},
		{name: "the native guardian alone (internal/guardelf)", argv: []string{native, filepath.Join(dir, "no-such-cgroup")}},
		{name: "a Go hello world", argv: []string{hello}},
	}, *only)
	// Each program starts as one installed long ago: read back from disk
	// (benchutil.Settle), then warmed alike.
	settled := []string{filepath.Dir(corral), "/bin/true"}
	for _, r := range runners {
		settled = append(settled, r.argv[0])
	}
	benchutil.Settle(settled...)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	benchutil.Check(err)
	for _, r := range runners { // warm the page cache
		for range 5 {
			_, err := runOnce(r, null)
			benchutil.Check(err)
		}
	}
	for range *n {
		for _, r := range runners {
			d, err := runOnce(r, null)
			benchutil.Check(err)
			r.wall = append(r.wall, d)
		}
	}
	base := benchutil.Median(runners[0].wall)
	fmt.Printf("%d runs of each, interleaved\n\n", *n)
	fmt.Printf("| %-42s | %9s | %9s | %9s | %7s |\n", "command", "p10", "median", "p90", "ratio")
	fmt.Printf("|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 44), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 9))
	for _, r := range runners {
		slices.Sort(r.wall)
		m := benchutil.Median(r.wall)
		fmt.Printf("| %-42s | %9s | %9s | %9s | %6.2f× |\n", r.name, benchutil.MS(pct(r.wall, 10)), benchutil.MS(m), benchutil.MS(pct(r.wall, 90)), float64(m)/float64(base))
	}
}

// runOnce starts r's command with stdio on the null device and returns the
// time from the fork to its reaped exit; a non-zero exit is an error.
func runOnce(r *runner, null *os.File) (time.Duration, error) {
	argv := r.argv
	start := time.Now()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   append(os.Environ(), r.env...),
		Files: []uintptr{null.Fd(), null.Fd(), null.Fd()},
	})
	if err != nil {
		return 0, err
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	d := time.Since(start)
	if err == nil && ws.ExitStatus() != 0 {
		err = fmt.Errorf("%s: %v", strings.Join(argv, " "), ws)
	}
	return d, err
}

func pick(all []*runner, only string) []*runner {
	if only == "" {
		return all
	}
	var out []*runner
	for _, r := range all {
		for _, name := range strings.Split(only, ",") {
			if strings.Contains(r.name, name) {
				out = append(out, r)
				break
			}
		}
	}
	if len(out) == 0 || out[0] != all[0] {
		out = append([]*runner{all[0]}, out...) // the peer always runs
	}
	return out
}

func pct(sorted []time.Duration, p int) time.Duration { return sorted[len(sorted)*p/100] }
