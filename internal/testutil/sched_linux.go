package testutil

import (
	"bytes"
	"os"
	"strconv"
	"time"
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

// psiSome reads the total of /proc/pressure/cpu's "some" line (µs), or 0.
func psiSome() time.Duration {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	i := bytes.Index(line, []byte("total="))
	if !bytes.HasPrefix(line, []byte("some")) || i < 0 {
		return 0
	}
	us, err := strconv.ParseInt(string(bytes.TrimSpace(line[i+len("total="):])), 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(us) * time.Microsecond
}

// ownRunDelay sums the run-queue wait of this process's threads
// (/proc/self/task/*/schedstat, second field, ns).
func ownRunDelay() time.Duration {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum int64
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			sum += ns
		}
	}
	return time.Duration(sum)
}
