//go:build unix

package proc_test

import (
	"testing"
	"time"

	"github.com/corralrun/corral/proc"
)

// ownBound is the documented bound on corral's own lateness: SIGKILL
// comes within it after the grace, and the run returns within it after
// Timeout + Grace + Drain, by corral's own clock (see proc.Timeline), plus
// perProcess for each process corral signals and reaps.
const ownBound = 50 * time.Millisecond

// perProcess is what corral's own clock may spend on each process of the
// tree it ends (signalling it, reaping it): a few system calls, and a
// good deal more under the race detector on a machine this busy (measured:
// up to 170 µs with two busy loops beside three test binaries).
const perProcess = 250 * time.Microsecond

// assertOwnBounds checks a run's timeline against the bounded-return
// guarantee: by corral's own clock, SIGKILL no later than ownBound after
// the grace, and the sum of its actions' lateness within ownBound. These
// figures leave out what the machine withheld, so they hold as tightly on
// a starved machine as on an idle one.
func assertOwnBounds(t *testing.T, res *proc.Result, grace time.Duration) {
	t.Helper()
	tl := res.Timeline
	if testing.Verbose() {
		t.Logf("timeline: begin +%v stop +%v kill +%v (starved %v) drained +%v returned +%v (starved %v); late %v",
			tl.Begin.Late, tl.Stop.Late, tl.Kill.Late, tl.Kill.Starved, tl.Drained.Late, tl.Returned.Late, tl.Returned.Starved, tl.Late())
	}
	if !tl.Kill.At.IsZero() {
		if tl.Kill.Late > ownBound {
			t.Errorf("SIGKILL came %v after the grace by corral's own clock (bound %v; %v more was the machine's)", tl.Kill.Late, ownBound, tl.Kill.Starved)
		}
		if !tl.Stop.At.IsZero() && tl.Kill.At.Sub(tl.Stop.At) < grace {
			t.Errorf("SIGKILL came %v after the stop signal, before the grace (%v) ended", tl.Kill.At.Sub(tl.Stop.At), grace)
		}
	}
	if l, bound := tl.Late(), ownBound+time.Duration(res.Killed)*perProcess; l > bound {
		t.Errorf("corral's own actions came %v late in all, bound %v for %d processes: %+v", l, bound, res.Killed, tl)
	}
	if tl.Returned.At.IsZero() {
		t.Errorf("no return in the timeline: %+v", tl)
	}
}
