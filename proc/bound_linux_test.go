package proc_test

import (
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestSigkillComesWhenTheGraceEnds is guarantee 1 on corral's own clock: a
// tree that ignores SIGTERM gets SIGKILL no later than 50 ms after the
// grace ends, and the run returns within 50 ms of its bound, not counting
// what the machine withheld (proc.Timeline). The figures are exact: the
// machine's share is what the supervising thread waited for a CPU, so a
// starved machine does not stretch the bound and an idle one does not
// tighten it.
func TestSigkillComesWhenTheGraceEnds(t *testing.T) {
	testutil.CheckFDs(t)
	const grace = 300 * time.Millisecond
	for _, tier := range tiers(t) {
		t.Run(string(tier), func(t *testing.T) {
			tag := testutil.Tag(t)
			spec := bash(tag, `trap '' TERM; for i in 1 2 3; do bash -c "trap '' TERM; sleep 600" & done; echo up; while :; do sleep 1; done`)
			spec.Timeout = 200 * time.Millisecond
			spec.Grace = grace
			spec.Containment = tier
			res := run(t, spec)
			tl := res.Timeline
			if !res.TimedOut || tl.Stop.At.IsZero() || tl.Kill.At.IsZero() || tl.Gone.At.IsZero() {
				t.Fatalf("want a timeout, a stop signal, SIGKILL and the tree gone: %s %+v", res.Status(), tl)
			}
			due := tl.Stop.At.Add(grace)
			if wall := tl.Kill.At.Sub(due); wall < 0 || tl.Kill.Late+tl.Kill.Starved != wall {
				t.Errorf("SIGKILL %v after the grace; its account (late %v + starved %v) does not add up", wall, tl.Kill.Late, tl.Kill.Starved)
			}
			t.Logf("SIGKILL %v after the grace by corral's clock (%v of CPU withheld); late in all %v", tl.Kill.Late, tl.Kill.Starved, tl.Late())
			assertOwnBounds(t, res, grace)
			// The wall clock, as a backstop only.
			if d := time.Since(res.Start); d > spec.Timeout+grace+proc.DefaultDrain+10*time.Second {
				t.Errorf("returned after %v", d)
			}
			testutil.AssertNoTagged(t, tag, 2*time.Second)
		})
	}
}
