package proc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// heldRuns names the runs Spec.Hold is tried on: each Linux tier of this
// machine (a cgroup leaf and the guardian, an init) and a sandbox (an
// init that builds it).
func heldRuns(t *testing.T) []string {
	var names []string
	for _, tier := range tiers(t) {
		names = append(names, string(tier))
	}
	if sandboxProblem(t) == nil {
		names = append(names, "sandbox")
	}
	return names
}

// heldSpec is the run named by heldRuns: its command prints the file
// "ready" of dir, which the test makes only just before it lets the
// command go.
func heldSpec(name, dir, tag string) *proc.Spec {
	spec := &proc.Spec{Args: []string{"sh", "-c", "cat ready; : " + tag}, Dir: dir}
	if name == "sandbox" {
		spec.Sandbox = corral.Sandbox{Mode: corral.SandboxWorkspace}
	} else {
		spec.Containment = corral.Containment(name)
	}
	return spec
}

// TestHoldKeepsTheCommandBackUntilClosed: a held Start makes the run
// ready and does not start its command, nor return, until Hold is
// closed; the command then sees what was made just before the close.
func TestHoldKeepsTheCommandBackUntilClosed(t *testing.T) {
	testutil.CheckFDs(t)
	for _, name := range heldRuns(t) {
		t.Run(name, func(t *testing.T) {
			dir := workspace(t)
			tag := "corral-hold-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			spec := heldSpec(name, dir, tag)
			hold := make(chan struct{})
			spec.Hold = hold
			type started struct {
				p   *proc.Process
				err error
			}
			got := make(chan started, 1)
			go func() {
				p, err := proc.Start(context.Background(), spec)
				got <- started{p, err}
			}()
			select {
			case s := <-got:
				if s.p != nil {
					s.p.Wait()
				}
				t.Fatalf("Start returned while its Hold was open (err %v): the command was not held", s.err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := os.WriteFile(filepath.Join(dir, "ready"), []byte("made before the close\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			close(hold)
			s := <-got
			if s.err != nil {
				t.Fatal(s.err)
			}
			res, err := s.p.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || string(res.Stdout.Text()) != "made before the close\n" {
				t.Fatalf("the command ran before its Hold was closed: exit %d, stdout %q, stderr %q",
					res.ExitCode, res.Stdout.Text(), res.Stderr.Text())
			}
			testutil.AssertNoTagged(t, tag, 5*time.Second)
		})
	}
}

// TestHoldEndedByTheContextLeavesNothing: a Start whose context ends
// while it is held returns an error wrapping the context's; the command
// never ran, and no process, cgroup leaf or descriptor of the run is
// left.
func TestHoldEndedByTheContextLeavesNothing(t *testing.T) {
	testutil.CheckFDs(t)
	leaves := func() int {
		r, err := cgroup.Detect()
		if err != nil {
			return 0
		}
		ents, _ := os.ReadDir(r.Owner)
		n := 0
		for _, e := range ents {
			if e.IsDir() {
				n++
			}
		}
		return n
	}
	for _, name := range heldRuns(t) {
		t.Run(name, func(t *testing.T) {
			dir := workspace(t)
			tag := "corral-hold-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			spec := heldSpec(name, dir, tag)
			spec.Hold = make(chan struct{}) // never closed
			if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			before := leaves()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			p, err := proc.Start(ctx, spec)
			if err == nil {
				res, _ := p.Wait()
				t.Fatalf("Start of a held run whose context ended started it (exit %d)", res.ExitCode)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Start's error %v does not wrap context.Canceled", err)
			}
			testutil.AssertNoTagged(t, tag, 5*time.Second)
			if !testutil.Eventually(5*time.Second, func() bool { return leaves() <= before }) {
				t.Fatalf("a cgroup leaf of the held run was left: %d under the owner before, %d after", before, leaves())
			}
		})
	}
}
