package proc_test

import (
	"context"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestConcurrentRunsDoNotTouchEachOther proves that tearing one run down
// never reaches the processes of another run of the same supervisor.
func TestConcurrentRunsDoNotTouchEachOther(t *testing.T) {
	for _, tier := range tiers(t) {
		t.Run(string(tier), func(t *testing.T) {
			tagA, tagB := testutil.Tag(t), testutil.Tag(t)
			specB := bash(tagB, `sleep 600 & (sleep 600 &); echo up; sleep 600`)
			specB.Containment = tier
			b, err := proc.Start(context.Background(), specB)
			if err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, "run B up", func() bool { o, _ := b.Output(); return o.Text() == "up\n" })
			specA := bash(tagA, `sleep 600 & (sleep 600 &); echo up; sleep 600`)
			specA.Containment = tier
			specA.Timeout = 300 * time.Millisecond
			res := run(t, specA)
			if !res.TimedOut {
				t.Fatal("run A did not time out")
			}
			testutil.AssertNoTagged(t, tagA, time.Second)
			if n := len(testutil.Tagged(tagB)); n != 3 {
				t.Fatalf("run B has %d live processes after run A ended, want 3", n)
			}
			b.Stop()
			b.Wait()
			testutil.AssertNoTagged(t, tagB, time.Second)
			testutil.AssertNoZombies(t, 2*time.Second)
		})
	}
}
