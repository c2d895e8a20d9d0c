package shell

import (
	"context"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// The session's wrapper traps SIGTERM to save the state, and bash holds a
// trapped signal until the foreground command ends: a stop that landed
// while the wrapper was restoring the state, or starting the command,
// never reached the command, and the kill sat out the whole grace period.

func TestJobKillRightAfterStartReturnsBeforeTheGrace(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	for i := range 40 {
		res, err := s.Start(context.Background(), Request{Command: "sleep 60"})
		if err != nil {
			t.Fatal(err)
		}
		j, _ := s.Job(res.JobID)
		start, clock := time.Now(), testutil.StartSchedClock()
		info := j.Kill()
		if d := time.Since(start); d > proc.DefaultGrace/2+clock.Waited() || info.Signal == "SIGKILL" {
			t.Errorf("kill %d returned after %v (%v of CPU starvation): %+v", i, d, clock.Waited(), info)
		}
	}
}

func TestShortTimeoutReturnsBeforeTheGrace(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	for i := range 40 {
		timeout := time.Duration(1+i%20) * time.Millisecond
		start, clock := time.Now(), testutil.StartSchedClock()
		res, err := s.Run(context.Background(), Request{Command: "sleep 60", Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > proc.DefaultGrace/2+clock.Waited() || !res.TimedOut || res.Signal == "SIGKILL" {
			t.Errorf("run %d with timeout %v returned after %v (%v of CPU starvation): %s", i, timeout, d, clock.Waited(), res.Status())
		}
	}
	if res := run(t, s, "echo alive"); res.Stdout != "alive\n" {
		t.Fatalf("session broken after the timeouts: %+v", res)
	}
}
