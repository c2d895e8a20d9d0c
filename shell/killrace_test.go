package shell

import (
	"context"
	"testing"
	"time"

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
		start := time.Now()
		info := j.Kill()
		if d := time.Since(start); d > proc.DefaultGrace/2 || info.Signal == "SIGKILL" {
			t.Errorf("kill %d returned after %v: %+v", i, d, info)
		}
	}
}

func TestShortTimeoutReturnsBeforeTheGrace(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	for i := range 40 {
		timeout := time.Duration(1+i%20) * time.Millisecond
		start := time.Now()
		res, err := s.Run(context.Background(), Request{Command: "sleep 60", Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > proc.DefaultGrace/2 || !res.TimedOut || res.Signal == "SIGKILL" {
			t.Errorf("run %d with timeout %v returned after %v: %s", i, timeout, d, res.Status())
		}
	}
	if res := run(t, s, "echo alive"); res.Stdout != "alive\n" {
		t.Fatalf("session broken after the timeouts: %+v", res)
	}
}
