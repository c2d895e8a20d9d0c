package testutil

import (
	"os"
	"strconv"
	"time"

	"github.com/corralrun/corral/internal/procfs"
)

// SchedClock measures how long the machine withheld CPUs from runnable
// tasks since it was started. Corral's time bounds are on its own actions,
// not on the scheduler: a test adds Waited to the bound it asserts, so the
// bound is strict on an idle machine and follows the load on a busy one.
type SchedClock struct {
	start     time.Time
	psi, self time.Duration
}

// StartSchedClock starts a SchedClock.
func StartSchedClock() *SchedClock {
	return &SchedClock{start: time.Now(), psi: psiSome(), self: ownRunDelay()}
}

// Waited returns, since the clock started, the wall time during which some
// task of the machine was runnable but waiting for a CPU (the kernel's
// pressure stall information, /proc/pressure/cpu "some"), or, where the
// kernel has none, the time this process's threads spent waiting on a run
// queue. It never exceeds the time elapsed.
func (c *SchedClock) Waited() time.Duration {
	var w time.Duration
	if p := psiSome(); p > 0 || c.psi > 0 {
		w = p - c.psi
	} else {
		w = ownRunDelay() - c.self
	}
	return min(max(w, 0), time.Since(c.start))
}

// psiSome is the machine's CPU stall time so far, or 0.
func psiSome() time.Duration { return procfs.CPUStall() }

// ownRunDelay sums the run-queue wait of this process's threads.
func ownRunDelay() time.Duration {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			sum += procfs.RunWait(tid)
		}
	}
	return sum
}
