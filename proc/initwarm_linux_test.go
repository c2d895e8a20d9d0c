package proc_test

import (
	"context"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// lonePlainStart readies the process for a start that finds no idle init
// and follows none: no init is being started ahead, none is idle, no
// earlier start is remembered.
func lonePlainStart(t *testing.T) {
	t.Helper()
	if !testutil.Eventually(10*time.Second, func() bool { return !proc.StartingAhead() }) {
		t.Fatal("inits were still being started ahead after 10 s")
	}
	proc.ForgetStarts()
}

// TestABurstOfStartsTakesInitsStartedAhead proves that runs of an init's
// tier started one after another do not each wait for an init of their
// own to start: from the second start that found none idle, inits are
// started ahead, and later starts take them; every run still gets its own
// streams and exit, and nothing is left.
func TestABurstOfStartsTakesInitsStartedAhead(t *testing.T) {
	becomeSubreaper(t)
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	// Cleanups, so that they look after the runs' own (last in, first out).
	t.Cleanup(func() { testutil.AssertNoZombies(t, 10*time.Second) })
	t.Cleanup(func() { testutil.AssertNoTagged(t, tag, 10*time.Second) })
	lonePlainStart(t)
	const n = 30
	started, taken := proc.StartedAhead(), proc.TakenAhead()
	ps, w := startReading(t, n, proc.Spec{
		Args: []string{"sh", "-c", "cat; echo done"}, Env: []string{testutil.TagEnvVar(tag)},
		Containment: corral.ContainmentSubreaper,
	})
	gotStarted, gotTaken := proc.StartedAhead()-started, proc.TakenAhead()-taken
	t.Logf("%d runs started one after another: %d inits started ahead, %d runs took one", n, gotStarted, gotTaken)
	if gotTaken < 1 {
		t.Errorf("%d runs of the subreaper tier started one after another: none took an init started ahead (%d were started)", n, gotStarted)
	}
	w.Close()
	for _, p := range ps {
		res, err := p.Wait()
		if err != nil || res.ExitCode != 0 || res.Stdout.Text() != "done\n" || res.Survivors > 0 {
			t.Fatalf("run: %v, exit %d, stdout %q, %d survivors", err, res.ExitCode, res.Stdout.Text(), res.Survivors)
		}
	}
	lonePlainStart(t) // the idle inits go: the zombie check counts on it
}

// TestALoneStartStartsNothingAhead proves that a program starting one run
// of an init's tier (the corral CLI, a script) starts no init it will not
// use: only a second start that finds no idle init within a second of
// the first starts inits ahead.
func TestALoneStartStartsNothingAhead(t *testing.T) {
	becomeSubreaper(t)
	lonePlainStart(t)
	started := proc.StartedAhead()
	res := run(t, &proc.Spec{Args: []string{"true"}, Containment: corral.ContainmentSubreaper})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if proc.StartingAhead() || proc.StartedAhead() != started {
		t.Errorf("one run of the subreaper tier, the first in a second: inits were started ahead (%d started, starting: %v)", proc.StartedAhead()-started, proc.StartingAhead())
	}
	lonePlainStart(t)
}

// TestRunsOneAfterAnotherReuseTheirInits proves that inits started ahead
// do not displace those coming back: after a burst has filled the pool,
// runs made one after another each take an idle init and give it back,
// and no init is started for them.
func TestRunsOneAfterAnotherReuseTheirInits(t *testing.T) {
	becomeSubreaper(t)
	lonePlainStart(t)
	var ps []*proc.Process
	for range 12 { // a burst: the pool fills with inits started ahead
		p, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"sleep", "0.2"}, Containment: corral.ContainmentSubreaper})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		p.Wait()
	}
	if !testutil.Eventually(10*time.Second, func() bool { return !proc.StartingAhead() }) {
		t.Fatal("inits were still being started ahead after 10 s")
	}
	started := proc.StartedAhead()
	for range 20 {
		if res := run(t, &proc.Spec{Args: []string{"true"}, Containment: corral.ContainmentSubreaper}); res.ExitCode != 0 {
			t.Fatalf("exit %d", res.ExitCode)
		}
	}
	if got := proc.StartedAhead() - started; got != 0 || proc.StartingAhead() {
		t.Errorf("20 runs one after another, with the pool full: %d inits were started ahead for them (starting: %v), want none", got, proc.StartingAhead())
	}
	lonePlainStart(t)
}

// TestAnEnclosuresBurstStaysInItsSandbox proves that runs started at once
// in an enclosure, more than it has idle inits for, each run inside it
// (its /tmp): inits started ahead are plain ones, never an enclosure's,
// whose holder forks them inside its namespaces.
func TestAnEnclosuresBurstStaysInItsSandbox(t *testing.T) {
	needSandbox(t)
	tag := testutil.Tag(t)
	defer testutil.AssertNoTagged(t, tag, 10*time.Second)
	e, err := proc.NewEnclosure(context.Background(), proc.EnclosureSpec{Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}, Workdir: workspace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	note := "/tmp/note-" + tag
	if res, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"sh", "-c", "echo inside > " + note}, Enclosure: e}); err != nil || res.ExitCode != 0 {
		t.Fatalf("writing the note: %v %+v", err, res)
	}
	var ps []*proc.Process
	for range 12 {
		p, err := proc.Start(context.Background(), &proc.Spec{
			Args: []string{"sh", "-c", "cat " + note + "; sleep 0.3"}, Env: []string{testutil.TagEnvVar(tag)}, Enclosure: e,
		})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for i, p := range ps {
		res, err := p.Wait()
		if err != nil || res.Stdout.Text() != "inside\n" {
			t.Errorf("run %d of the burst: %v, stdout %q, stderr %q: not inside the enclosure", i, err, res.Stdout.Text(), res.Stderr.Text())
		}
	}
}
