package proc_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

// sandboxInits returns this process's living children in a user namespace
// other than its own: the inits of sandboxes.
func sandboxInits(t *testing.T) []int {
	t.Helper()
	own, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, task := range tasks {
		// A thread may end meanwhile: its children are then another's.
		b, _ := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "children"))
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			if ns, err := os.Readlink("/proc/" + f + "/ns/user"); err == nil && ns != own && pid > 0 {
				out = append(out, pid)
			}
		}
	}
	return out
}

// TestABoxThatCannotBeMadeLeavesNoInit: a sandbox's init is forked while
// its box (policy, private /tmp) is made; when the box cannot be made, the
// init is killed and reaped before Start returns its error.
func TestABoxThatCannotBeMadeLeavesNoInit(t *testing.T) {
	needSandbox(t)
	before := sandboxInits(t)
	forks := proc.EarlyForks()
	for i := range 5 {
		_, err := proc.Start(context.Background(), &proc.Spec{
			Args:    []string{"true"},
			Dir:     filepath.Join(workspace(t), "missing"),
			Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace},
		})
		if err == nil {
			t.Fatal("a sandboxed run in a missing directory started")
		}
		var left []int
		for _, pid := range sandboxInits(t) {
			if !slices.Contains(before, pid) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			for _, pid := range left { // this process's own children
				unix.Kill(pid, unix.SIGKILL)
				var ws unix.WaitStatus
				unix.Wait4(pid, &ws, 0, nil)
			}
			t.Fatalf("start %d failed (%v) and left the sandbox's init %v alive", i, err, left)
		}
	}
	if proc.EarlyForks()-forks != 5 {
		t.Fatalf("%d of 5 starts forked their init while the box was made", proc.EarlyForks()-forks)
	}
}

// TestSandboxedRunEndsAfterItsChores: the sweeps a sandboxed run starts
// beside its command (dead supervisors' private /tmp directories) are
// done before its Wait returns: no goroutine of the run outlives it.
func TestSandboxedRunEndsAfterItsChores(t *testing.T) {
	needSandbox(t)
	release := proc.HoldChores()
	defer release()
	p, err := proc.Start(context.Background(), &proc.Spec{
		Args:    []string{"true"},
		Dir:     workspace(t),
		Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Wait()
		done <- err
	}()
	select {
	case <-done:
		t.Fatal("Wait returned while the run's chores were held")
	case <-time.After(time.Second):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return 30 s after the chores were let go")
	}
}
