package proc_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// A shell that traps SIGTERM holds it until its foreground command ends,
// and bash blocks it across fork: a stop that lands while the shell is
// starting the command never reached the command, which then sat out the
// whole grace period. Each tier must deliver the stop to a process that
// joined the tree, or executed its program, after the signal went out.
func TestStopReachesACommandStartedAfterTheSignal(t *testing.T) {
	testutil.CheckFDs(t)
	const grace = 2 * time.Second
	for _, tier := range tiers(t) {
		t.Run(string(tier), func(t *testing.T) {
			tag := testutil.Tag(t)
			for i := range 40 {
				spec := &proc.Spec{
					Args:        []string{"bash", "-c", "trap 'exit 143' TERM; sleep 60"},
					Env:         []string{testutil.TagEnvVar(tag)},
					Timeout:     time.Duration(1+i%20) * time.Millisecond,
					Grace:       grace,
					Containment: tier,
				}
				res, err := proc.Run(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				// SIGKILL at the grace's end means the stop signal never
				// reached the command: corral's own record says which
				// ended it, whatever the machine's load.
				if tl := res.Timeline; !tl.Kill.At.IsZero() || res.Signal == syscall.SIGKILL || tl.Gone.At.Sub(tl.Stop.At) >= grace {
					t.Errorf("run %d (timeout %v): the stop signal did not end it (%s): %+v", i, spec.Timeout, res.Status(), tl)
				}
				assertOwnBounds(t, res, grace)
			}
			testutil.AssertNoTagged(t, tag, 5*time.Second)
		})
	}
}
