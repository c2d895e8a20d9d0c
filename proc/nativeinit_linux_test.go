package proc_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/initelf"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestPlainRunsHaveTheNativeInit: on linux/amd64 a plain run of the
// subreaper and process-group tiers is held by the native init
// (internal/initelf), not a Go program: its command's parent is the
// sealed memory file corral-init. (A sandboxed run's:
// TestSandboxedRunsHaveTheNativeInitAndTheSameSandbox.)
func TestPlainRunsHaveTheNativeInit(t *testing.T) {
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	for _, tier := range []corral.Containment{corral.ContainmentSubreaper, corral.ContainmentProcessGroup} {
		t.Run(string(tier), func(t *testing.T) {
			res, err := proc.Run(context.Background(), &proc.Spec{
				Args:        []string{"sh", "-c", `readlink /proc/$PPID/exe; cat /proc/$PPID/comm`},
				Containment: tier,
			})
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout.Text())
			if !strings.Contains(out, "memfd:corral-init") || !strings.Contains(out, shim.Comm) {
				_, err := shim.NativeInit()
				t.Fatalf("the command's parent is %q, want the native init (memfd:corral-init, named %s); the native init's program: %v; turned off by a refused start: %v",
					out, shim.Comm, err, proc.NativeInitOff())
			}
		})
	}
}

// TestIdleInitsAreOfTheKindAStartWouldMake: a plain run that takes an
// idle init gets the kind of init a start would make now, native or Go:
// an idle init of the other kind, kept from before the Go init was asked
// for (or after it no longer is), is let go rather than served. The
// tests of each kind hold that kind to its guarantees, whatever ran
// before them.
func TestIdleInitsAreOfTheKindAStartWouldMake(t *testing.T) {
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	defer shim.UseGoInitOnly(false)
	parent := func() string {
		t.Helper()
		exe, err := initProgram()
		if err != nil {
			t.Fatal(err)
		}
		return exe
	}
	// Each run leaves its init idle, for the next to find.
	for _, goOnly := range []bool{false, true, false, true, false} {
		shim.UseGoInitOnly(goOnly)
		for range 2 {
			if exe := parent(); strings.Contains(exe, "memfd:corral-init") == goOnly {
				t.Fatalf("with the Go init asked for %v, the command's parent is %q", goOnly, exe)
			}
		}
	}
}

// TestARefusedNativeInitFallsBackOnlyWhenTheGoInitStarts: where the
// kernel or a policy will not execute the native init's memory file
// (EACCES, EPERM or ENOEXEC at its start), the run starts the Go init
// instead, and so does every later plain run of the process. A start that
// fails with those errors whatever the program (its cgroup placement
// refused) fails the run and leaves the native init on.
func TestARefusedNativeInitFallsBackOnlyWhenTheGoInitStarts(t *testing.T) {
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	proc.ForgetStarts()
	defer proc.ForgetStarts()
	run := initProgram
	restore := proc.RefuseInitStarts(func(native bool) error {
		if native {
			return syscall.EACCES
		}
		return nil
	})
	exe, err := run()
	off := proc.NativeInitOff()
	restore()
	proc.ForgetStarts()
	if err != nil || strings.Contains(exe, "memfd:corral-init") || !off {
		t.Fatalf("the native init refused: parent %q (%v), native init off %v; want the Go init, and off", exe, err, off)
	}
	restore = proc.RefuseInitStarts(func(bool) error { return syscall.EACCES })
	_, err = run()
	off = proc.NativeInitOff()
	restore()
	if err == nil || off {
		t.Fatalf("every start refused: %v, native init off %v; want the run failed, and the native init on", err, off)
	}
	if exe, err := run(); err != nil || !strings.Contains(exe, "memfd:corral-init") {
		t.Fatalf("after: parent %q (%v), want the native init", exe, err)
	}
}

// initProgram runs a plain run on the subreaper tier and returns the
// program its command's parent, the run's init, executes.
func initProgram() (string, error) {
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:        []string{"sh", "-c", `readlink /proc/$PPID/exe`},
		Containment: corral.ContainmentSubreaper,
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.Stdout.Text())), nil
}

// TestGoInitHoldsTheEscapeMatrix: the Go init, which still holds
// sandboxed runs, enclosures, other users' runs and the runs of machines
// without a native init, holds every escape scenario of the plain tiers
// as the native one does (TestRunHoldsTheDeadlineAndLeavesNothing).
func TestGoInitHoldsTheEscapeMatrix(t *testing.T) {
	// Idle inits are let go on both sides: none of the other kind serves.
	shim.UseGoInitOnly(true)
	proc.ForgetStarts()
	defer func() {
		shim.UseGoInitOnly(false)
		proc.ForgetStarts()
	}()
	if out, err := initProgram(); err != nil || strings.Contains(out, "memfd:corral-init") {
		t.Fatalf("the command's parent is %q (%v) with the Go init asked for", out, err)
	}
	var h hiccups
	escapeMatrix(t, &h)
	h.verdict(t)
}

// TestNativeInitHoldsNoMemoryAcrossRuns: an idle init serves run after
// run; each run's configuration and arguments are let go of once the
// command has started, so that an init that served hundreds of runs is
// no larger than one that served one.
func TestNativeInitHoldsNoMemoryAcrossRuns(t *testing.T) {
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	initOf := func() (pid string, vm int) {
		t.Helper()
		res, err := proc.Run(context.Background(), &proc.Spec{
			Args:        []string{"sh", "-c", `echo $PPID; grep VmSize /proc/$PPID/status`},
			Env:         []string{"CORRAL_TEST_BULK=" + strings.Repeat("x", 64<<10)},
			Containment: corral.ContainmentSubreaper,
		})
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(res.Stdout.Text()))
		if len(f) < 3 {
			t.Fatalf("output %q", res.Stdout.Text())
		}
		kb, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatal(err)
		}
		return f[0], kb
	}
	first, vm0 := initOf()
	served := 0
	for range 300 {
		if pid, vm := initOf(); pid == first {
			served++
			if vm > vm0+1024 {
				t.Fatalf("the init's VmSize grew from %d to %d kB after %d runs", vm0, vm, served)
			}
		}
	}
	if served < 100 {
		t.Skipf("SKIP: the same idle init served only %d of 300 runs one after another", served)
	}
}

// TestNativeInitKillsABigTreeWhenItsSupervisorDies: the walk by which
// the native init kills a tree whose supervisor died has no bound of its
// own. The tree here is a process with 300 threads besides its main one,
// each with a child, and 4,200 children of its main thread (until stop
// 43 the walk read the children of at most 256 threads a process and
// 4,096 a thread, and a tree past that kept what it did not read); every
// one of its 4,501 processes is gone within the bound once the
// supervisor is SIGKILLed.
func TestNativeInitKillsABigTreeWhenItsSupervisorDies(t *testing.T) {
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP: python3 is not installed: the big tree is a Python program's")
	}
	becomeSubreaper(t)
	tag := testutil.Tag(t)
	t.Cleanup(func() { testutil.KillTagged(tag) })
	cmd, s := startSupervisor(t, tag, string(corral.ContainmentSubreaper)+",bigtree")
	if s.Handle.Init == 0 {
		t.Fatalf("no init holds the tree: %+v", s)
	}
	if exe, _ := os.Readlink("/proc/" + strconv.Itoa(s.Handle.Init) + "/exe"); !strings.Contains(exe, "memfd:corral-init") {
		t.Fatalf("the tree's init is %q, not the native one", exe)
	}
	kids, _ := procfs.Children(cmd.Process.Pid)
	clock := testutil.StartSchedClock()
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	// A walk of 4,501 processes reads each one's stat and children and
	// signals it twice: allow it ten seconds of a starved machine.
	if !testutil.Eventually(10*time.Second+clock.Waited(), func() bool { return len(testutil.Tagged(tag)) == 0 }) {
		t.Fatalf("%d of the tree's %d processes alive %v after the supervisor's death", len(testutil.Tagged(tag)), bigTreeSize, time.Since(killed))
	}
	t.Logf("the tree of %d processes went %v after the supervisor's death (%v of CPU starvation)", bigTreeSize, time.Since(killed), clock.Waited())
	orphansReaped(t, kids)
}
