package proc_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestManyDescriptorsStayOutOfTheChildsStart proves that once the
// supervisor holds many descriptors, its runs start from the lean thread,
// whose table holds none of them (so that a child's exec does not close
// them one by one), on the cgroup tier and with an init, with the
// command's streams where they belong; and that the thread ends once
// starts stop.
func TestManyDescriptorsStayOutOfTheChildsStart(t *testing.T) {
	held := holdDescriptors(t, 400)
	tiers := []corral.Containment{corral.ContainmentSubreaper}
	if _, err := cgroup.Detect(); err == nil {
		tiers = append(tiers, corral.ContainmentCgroup)
	}
	for _, tier := range tiers {
		before := proc.LeanStarts()
		// Nine at once: the pool keeps at most eight idle inits, so at
		// least one run of an init's tier starts a new one.
		var ps []*proc.Process
		for range 9 {
			p, err := proc.Start(context.Background(), &proc.Spec{
				Args:        []string{"sh", "-c", "echo out; echo err >&2; sleep 0.2"},
				Containment: tier,
			})
			if err != nil {
				t.Fatalf("%s: %v", tier, err)
			}
			ps = append(ps, p)
		}
		for _, p := range ps {
			res, err := p.Wait()
			if err != nil {
				t.Fatalf("%s: %v", tier, err)
			}
			if res.ExitCode != 0 || strings.TrimSpace(res.Stdout.Text()) != "out" || strings.TrimSpace(res.Stderr.Text()) != "err" {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q", tier, res.ExitCode, res.Stdout.Text(), res.Stderr.Text())
			}
		}
		if got := proc.LeanStarts() - before; got < 1 {
			t.Errorf("%s: with %d descriptors held, %d starts were made from the lean thread, want at least 1", tier, len(*held), got)
		}
	}
	closeAll(held)
	if !testutil.Eventually(10*time.Second, func() bool { return !proc.LeanRunning() }) {
		t.Error("the lean thread outlived its last start by 10 s")
	}
}

// TestLeanThreadKeepsItsChildrenOffTheMainThread proves that the lean
// thread does not end while many runs it started live: a thread's
// children pass to the main thread when it ends, and the main thread's
// list of children is what every run's end reads for its tree's orphans,
// so handing it thousands of live runs made each end cost what they
// number. Once they are gone, the thread ends.
func TestLeanThreadKeepsItsChildrenOffTheMainThread(t *testing.T) {
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	defer testutil.AssertNoTagged(t, tag, 10*time.Second)
	held := holdDescriptors(t, 400)
	var ps []*proc.Process
	defer func() {
		for _, p := range ps {
			p.Stop()
			p.Wait()
		}
	}()
	for range proc.LeanKeep + 8 {
		p, err := proc.Start(context.Background(), &proc.Spec{
			Args:  []string{"sleep", "600"},
			Env:   []string{testutil.TagEnvVar(tag)},
			Stdio: &[3]*os.File{},
		})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	tids := proc.LeanTids()
	if len(tids) == 0 {
		t.Fatal("with 400 descriptors held, no lean thread started the runs")
	}
	// One thread a CPU, up to four: a start holds its thread until the
	// child's exec, so one thread left the other cores idle.
	if want := min(runtime.GOMAXPROCS(0), 4); len(tids) != want {
		t.Errorf("%d lean threads serve starts, want %d (GOMAXPROCS %d)", len(tids), want, runtime.GOMAXPROCS(0))
	}
	var children []int
	for _, tid := range tids {
		children = append(children, childrenOf(t, tid)...)
	}
	if len(children) < len(ps) {
		t.Fatalf("the lean threads %v have children %v, want at least the %d runs'", tids, children, len(ps))
	}
	// Eight times the idle time after which the thread would end without
	// its children: a bounded watch of what must not happen.
	watch := time.Now().Add(8 * proc.LeanIdle)
	for time.Now().Before(watch) {
		main := childrenOf(t, os.Getpid())
		for _, c := range children {
			if slices.Contains(main, c) {
				t.Fatalf("run %d passed to the main thread's children (%d of them): the lean thread ended while %d runs it started lived", c, len(main), len(ps))
			}
		}
		if !proc.LeanRunning() {
			t.Fatalf("the lean thread ended while %d runs it started lived", len(ps))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range ps {
		p.Stop()
		p.Wait()
	}
	ps = nil
	closeAll(held)
	if !testutil.Eventually(10*time.Second, func() bool { return !proc.LeanRunning() }) {
		t.Error("the lean thread outlived its last start and its children by 10 s")
	}
}

// holdDescriptors opens n descriptors of the null device, closed when the
// test ends unless closeAll closed them first.
func holdDescriptors(t *testing.T, n int) *[]int {
	t.Helper()
	held := &[]int{}
	t.Cleanup(func() { closeAll(held) })
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	*held = append(*held, null)
	for len(*held) < n {
		fd, err := unix.FcntlInt(uintptr(null), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		*held = append(*held, fd)
	}
	return held
}

func closeAll(held *[]int) {
	for _, fd := range *held {
		unix.Close(fd)
	}
	*held = nil
}

// childrenOf returns the children of this process's thread tid.
func childrenOf(t *testing.T, tid int) []int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/children")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}
