package proc_test

import (
	"context"
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
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	held := []int{null}
	defer func() {
		for _, fd := range held {
			unix.Close(fd)
		}
	}()
	for len(held) < 400 {
		fd, err := unix.FcntlInt(uintptr(null), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, fd)
	}
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
			t.Errorf("%s: with %d descriptors held, %d starts were made from the lean thread, want at least 1", tier, len(held), got)
		}
	}
	for _, fd := range held {
		unix.Close(fd)
	}
	held = nil
	if !testutil.Eventually(10*time.Second, func() bool { return !proc.LeanRunning() }) {
		t.Error("the lean thread outlived its last start by 10 s")
	}
}
