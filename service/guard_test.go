package service_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/storetest"
)

// TestRunsAreGuardedByDefault: a service configured with nothing but its
// store and data directory guards its runs (where the machine can): a run
// does not see the service's process nor its data directory, and its
// record says what guarded it. With GuardOff it records why it was not.
func TestRunsAreGuardedByDefault(t *testing.T) {
	if err := proc.ProbeGuard(); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	f := newFixture(t, storetest.Backends()[0], service.Config{})
	if on, why := f.svc.Guarded(); !on {
		t.Fatalf("a default service does not guard its runs: %s", why)
	}
	f.agent(corral.Agent{Name: "sh"})
	script := fmt.Sprintf("ls /proc/%d >/dev/null 2>&1 && echo SEES-SERVICE; ls -A %s; echo end", os.Getpid(), f.dir)
	e := f.waitTerminal(f.submit("sh", script).ID, 20*time.Second)
	if e.Status != corral.StatusSucceeded || e.Stdout != "end\n" {
		t.Errorf("a run of a default service saw it (%s %s):\n%s%s", e.Status, e.Error, e.Stdout, e.Stderr)
	}
	if !e.Guard.Guarded() || !strings.Contains(strings.Join(e.Guard.Hidden, ","), f.dir) {
		t.Errorf("the record's guard: %+v", e.Guard)
	}

	off := newFixture(t, storetest.Backends()[0], service.Config{Guard: service.GuardOff})
	off.agent(corral.Agent{Name: "sh"})
	e = off.waitTerminal(off.submit("sh", "true").ID, 20*time.Second)
	if e.Guard == nil || e.Guard.Guarded() || !strings.Contains(e.Guard.Unguarded, "off") {
		t.Errorf("an unguarded run's record: %+v", e.Guard)
	}
	if _, err := service.ParseGuardMode("maybe"); err == nil {
		t.Error("an unknown guard mode was taken")
	}
}
