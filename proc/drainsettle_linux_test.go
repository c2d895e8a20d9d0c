package proc_test

import (
	"context"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestRunEndingWithItsPipesTakesNoThread: a drain shorter than a second
// first waits for the pipes on the runtime's timer, for half of it up to
// a settle time, and only then locks corral's own clock, a thread of
// its own: the pipes of a main process that exited usually end with it.
// The settle is made long here, so that a leftover that holds the pipes
// for a twentieth of a second stands for pipes that end a moment after
// the exit is seen, on any machine: the run ends without taking a thread, and
// still reads what the leftover wrote.
func TestRunEndingWithItsPipesTakesNoThread(t *testing.T) {
	testutil.CheckFDs(t)
	defer proc.SetDrainSettle(3 * time.Second)()
	tag := testutil.Tag(t)
	p, err := proc.Start(context.Background(), &proc.Spec{
		Args:  []string{"sh", "-c", "(sleep 0.05; echo late) & echo early"},
		Env:   []string{testutil.TagEnvVar(tag)},
		Drain: 900 * time.Millisecond, // under a second: the clock's last stretch
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout.Text() != "early\nlate\n" || res.Killed != 0 {
		t.Fatalf("stdout %q, %d killed (%s)", res.Stdout.Text(), res.Killed, res.Status())
	}
	settle := 450 * time.Millisecond // half the drain
	if tl := res.Timeline; proc.TookThread(p) && tl.Drained.At.Sub(tl.Begin.At) >= settle {
		// The machine held the leftover back past the settle: the thread
		// was the right wait then.
		t.Logf("the pipes ended %v after the exit was seen, past the settle of %v", tl.Drained.At.Sub(tl.Begin.At), settle)
		return
	}
	if proc.TookThread(p) {
		t.Fatalf("the run took a thread for its drain although its pipes ended %v after its main process, within the settle", 50*time.Millisecond)
	}
}
