package proc_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// What a run may hold while its command runs, by tier (see FDsPerRun):
// the two output pipes and the command's pidfd; an init's control socket
// beside them where an init holds the tree (not its pidfd: the init is
// this process's child, whose pid stays its own until it is reaped).
var fdsPerRun = map[corral.Containment]int{
	corral.ContainmentCgroup:       3,
	corral.ContainmentSubreaper:    4,
	corral.ContainmentProcessGroup: 4,
}

// goroutinesPerRun: the supervising goroutine, one per output stream, and
// the waiter for the main process (or for the init's reports).
const goroutinesPerRun = 4

// TestThousandRunsHoldBoundedResources proves, without a clock, what many
// concurrent runs cost their supervisor: with 1,000 runs (100 on the tiers
// that start an init per run) live at once, at most fdsPerRun descriptors
// and goroutinesPerRun goroutines each; when all of them end together, at
// most 64 runs hold a thread of their own at once, and the process has
// at most that many threads more than before (and the runtime's own); and afterwards no process, zombie, descriptor or goroutine
// of theirs (goleak checks the goroutines when the package's tests end).
func TestThousandRunsHoldBoundedResources(t *testing.T) {
	for _, tier := range tiers(t) {
		t.Run(string(tier), func(t *testing.T) {
			n := 1000
			if tier != corral.ContainmentCgroup {
				n = 100 // an init each: a thousand Go programs would take minutes here
				if !testing.Short() && os.Getenv("CORRAL_TEST_SCALE_ALL") != "" {
					n = 1000
				}
			}
			tag := testutil.Tag(t)
			testutil.CheckFDs(t)
			// Every run's cat reads this pipe; closing its writer ends them all at once.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			// A first run, so that what the tier keeps for the process's
			// life (the guardian, the reaper, idle inits) is in the baseline.
			run(t, &proc.Spec{Args: []string{"true"}, Containment: tier})
			if err := proc.CheckCapacity(n, tier); err != nil {
				t.Skip(err)
			}
			// The idle inits' descriptors are the pool's, which it bounds
			// (inits started ahead in a burst add to them): not a run's.
			fd0, g0, th0 := testutil.UnkeptFDs(), runtime.NumGoroutine(), threads(t)
			ps := make([]*proc.Process, 0, n)
			defer func() {
				for _, p := range ps {
					p.Stop()
				}
				for _, p := range ps {
					p.Wait()
				}
			}()
			for range n {
				p, err := proc.Start(context.Background(), &proc.Spec{
					Args: []string{"cat"}, Stdin: r, Env: []string{testutil.TagEnvVar(tag)}, Containment: tier, MaxOutput: 1024,
				})
				if err != nil {
					t.Fatalf("run %d: %v", len(ps), err)
				}
				ps = append(ps, p)
			}
			r.Close()
			// An init being started ahead holds the null device and its end
			// of the socket for the time of its start.
			if !testutil.Eventually(10*time.Second, func() bool { return !proc.StartingAhead() }) {
				t.Fatal("inits were still being started ahead after 10 s")
			}
			fds, gs := testutil.UnkeptFDs()-fd0, runtime.NumGoroutine()-g0
			t.Logf("%d runs: %d descriptors (%.2f a run), %d goroutines (%.2f a run)", n, fds, float64(fds)/float64(n), gs, float64(gs)/float64(n))
			const shared = 4
			if fds > n*fdsPerRun[tier] {
				t.Errorf("%d runs hold %d descriptors: more than %d a run", n, fds, fdsPerRun[tier])
			}
			// The count is the process's: a goroutine of the package's own
			// that comes and goes (the idle inits' check, the reaper's
			// pass) may be in it, one per run may not.
			if gs > n*goroutinesPerRun+shared {
				t.Errorf("%d runs hold %d goroutines: more than %d a run (and %d shared)", n, gs, goroutinesPerRun, shared)
			}
			proc.LockedClocksPeak()
			w.Close() // every cat reads EOF and exits: n runs end together
			for _, p := range ps {
				res, err := p.Wait()
				if err != nil || res.ExitCode != 0 || res.Survivors > 0 {
					t.Fatalf("run: %v, exit %d, %d survivors", err, res.ExitCode, res.Survivors)
				}
			}
			ps = nil
			// The bound itself, counted where it is kept: it holds however
			// the machine schedules the runs' ends.
			peak := proc.LockedClocksPeak()
			t.Logf("%d runs ending together: at most %d held a thread for corral's own clock at once", n, peak)
			if peak > proc.MaxLockedClocks {
				t.Errorf("%d runs ending together held %d threads for corral's own clock at once, want at most %d", n, peak, proc.MaxLockedClocks)
			}
			// An idle thread of the runtime stays, so the count now is the
			// peak's: at most 64 runs held a thread at once. The runtime
			// adds its own: GOMAXPROCS, the poller, and one for each
			// goroutine blocked in a system call while the others need a
			// processor (a run's end reads /proc and removes its cgroup,
			// which waits for the hierarchy's lock): a fraction of the
			// runs at any moment, measured up to 104 in all on a loaded
			// machine. A thread a run, as before the cap, is n.
			th := threads(t) - th0
			t.Logf("%d runs ending together added %d threads", n, th)
			if bound := 64 + n/5; th > bound {
				t.Errorf("%d runs ending together added %d threads, want at most 64 + %d", n, th, n/5)
			}
			testutil.AssertNoTagged(t, tag, 5*time.Second)
			testutil.AssertNoZombies(t, 5*time.Second)
			testutil.WaitFor(t, 10*time.Second, "the goroutines of the runs to end", func() bool { return runtime.NumGoroutine() <= g0 })
		})
	}
}

// threads returns this process's thread count.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: in /proc/self/status")
	return 0
}

// TestEndingRunsHoldAtMostMaxLockedClocks proves the bound on the threads
// that ending runs keep for corral's own clock, whatever the machine's
// load: 200 runs end together, and each stays in its end for its drain
// (a background job holds its output open), so that all 200 are ending at
// once; at most MaxLockedClocks of them may hold a thread.
func TestEndingRunsHoldAtMostMaxLockedClocks(t *testing.T) {
	const n = 200
	tier := tiers(t)[0]
	if err := proc.CheckCapacity(2*n, tier); err != nil {
		t.Skip(err)
	}
	tag := testutil.Tag(t)
	ps, w := startReading(t, n, proc.Spec{
		Args: []string{"bash", "-c", "sleep 600 & exec cat"}, Env: []string{testutil.TagEnvVar(tag)},
		Containment: tier, Drain: 3 * time.Second, MaxOutput: 1024,
	})
	testutil.WaitFor(t, time.Minute, "every run's cat and background job", func() bool { return len(testutil.Tagged(tag)) >= 2*n })
	proc.LockedClocksPeak()
	w.Close() // every cat exits; each run drains what its job holds open
	for _, p := range ps {
		if res, err := p.Wait(); err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %v, exit %d", err, res.ExitCode)
		}
	}
	peak := proc.LockedClocksPeak()
	t.Logf("%d runs ending together, each for its drain: at most %d held a thread for corral's own clock at once", n, peak)
	if peak > proc.MaxLockedClocks {
		t.Errorf("%d runs held a thread for corral's own clock at once, want at most %d", peak, proc.MaxLockedClocks)
	}
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	testutil.AssertNoZombies(t, 5*time.Second)
}

// startReading starts n runs of spec, each with the same pipe as its
// stdin, and returns them with the pipe's writer: closing it ends every
// run that reads to the end. When the test ends, the writer is closed and
// what still runs is stopped and waited for.
func startReading(t *testing.T, n int, spec proc.Spec) ([]*proc.Process, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ps := make([]*proc.Process, 0, n)
	t.Cleanup(func() {
		w.Close()
		for _, p := range ps {
			p.Stop()
			p.Wait()
		}
	})
	spec.Stdin = r
	for range n {
		s := spec
		p, err := proc.Start(context.Background(), &s)
		if err != nil {
			t.Fatalf("run %d: %v", len(ps), err)
		}
		ps = append(ps, p)
	}
	return ps, w
}
