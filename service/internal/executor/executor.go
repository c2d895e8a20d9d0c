// Package executor runs one task of an agent as a supervised process tree:
// a shell agent's command line, or a headless agent turn. It knows nothing
// of storage: it reports how the run ended as a corral.Outcome, the shape
// the service records as it is.
package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/proc"
)

// Executor runs tasks of one agent kind.
type Executor interface {
	// Run runs job to its end and reports how it ended; the outcome is
	// never nil and its status is terminal. Run returns when the process
	// tree is gone. Closing job.Stop asks for a graceful stop (the run is
	// then cancelled); a done ctx tears the tree down too, and the run is
	// interrupted for the reason its cause gives (see Interrupt). A run
	// that cannot start is failed with error type start; a failure of
	// supervision itself is recorded in the outcome's error, beside what
	// the run did.
	Run(ctx context.Context, job *Job) *corral.Outcome
}

// Job is one task to run.
type Job struct {
	Agent     *corral.Agent
	Execution *corral.Execution
	// Env holds extra KEY=VALUE entries, added last to the environment
	// the executor's Policy builds.
	Env []string
	// Timeout is the budget of the run; zero means none.
	Timeout time.Duration
	// Stop is closed to cancel the run.
	Stop <-chan struct{}
	// OnStart is called once the process tree exists, before it is
	// waited on, with what crash recovery needs to kill it.
	OnStart func(proc.Handle)
	// OnLine receives each output line ("stdout", "stderr") or stream
	// event ("event"), cut at MaxLine bytes. It is called from the
	// reading goroutines, one line at a time per stream.
	OnLine func(stream string, line []byte)
	// OnSalvage receives what a headless turn has revealed so far (its
	// session id), to be recorded before the run ends.
	OnSalvage func(sessionID string)
	// OnSpend receives a headless turn's spend after every usage event; an
	// error it returns ends the turn as max_budget, for that reason (the
	// agent's budget window is spent).
	OnSpend func(headless.Spend) error
	// Sessions keeps the state of headless sessions between attempts:
	// when the agent resumes sessions, a turn's session file is saved to it
	// while the turn runs, and an attempt that resumes one restores it
	// from there. Nil turns both off.
	Sessions Sessions
	// MaxOutput caps the bytes kept per stream in the outcome.
	MaxOutput int
}

// MaxLine is the longest output line passed to OnLine.
const MaxLine = 64 << 10

// Label names a run of execution id in the places proc shows it (its
// cgroup leaf); crash recovery finds an unrecorded tree by it.
func Label(executionID string) string { return "exec-" + executionID }

// An Interruption is the cause a service gives when it cancels a run's
// context (context.WithCancelCause): the run is recorded interrupted,
// with this reason.
type Interruption struct{ Reason string }

func (i *Interruption) Error() string { return i.Reason }

// Interrupt returns the cause that interrupts a run for reason.
func Interrupt(reason string) error { return &Interruption{Reason: reason} }

// interruptReason says why ctx ended a run.
func interruptReason(ctx context.Context) string {
	var i *Interruption
	if errors.As(context.Cause(ctx), &i) {
		return i.Reason
	}
	return "the service shut down while the run was in flight"
}

// end decides how a run that its layer reported as o ended, from why it
// was stopped: the one place that tells cancelled, interrupted and failed
// apart. cut says the run was ended early by a stop (Job.Stop or ctx);
// stopped says Job.Stop asked for it.
func end(ctx context.Context, o *corral.Outcome, cut, stopped bool) *corral.Outcome {
	switch {
	case cut && stopped:
		o.Status, o.ErrorType, o.Error = corral.StatusCancelled, corral.ErrorCancelled, "cancelled on request"
	case cut:
		o.Status, o.ErrorType, o.Error = corral.StatusInterrupted, corral.ErrorInterrupted, interruptReason(ctx)
	case o.Status == corral.StatusSucceeded:
		o.ErrorType, o.Error = "", ""
	}
	return o
}

// notStarted is the outcome of a run that ended before its process
// started: cancelled or interrupted if that is why, else failed with err.
func notStarted(ctx context.Context, j *Job, err error, user string) *corral.Outcome {
	o := &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStart, Error: err.Error(), User: user}
	select {
	case <-j.Stop:
		end(ctx, o, true, true)
		o.Error = "cancelled before it started"
	default:
		if ctx.Err() != nil {
			end(ctx, o, true, false)
		}
	}
	return o
}

// supervision adds to o the failure of supervision itself that the layer
// below reported beside the run's own result.
func supervision(o *corral.Outcome, err error) {
	if err == nil {
		return
	}
	msg := "supervision: " + err.Error()
	if o.Error != "" {
		msg = o.Error + "; " + msg
	}
	o.Error = msg
	if o.Status == corral.StatusSucceeded {
		o.Status, o.ErrorType = corral.StatusFailed, corral.ErrorCrash
	}
}

// fromProc fills the supervision facts of o from a proc result.
func fromProc(o *corral.Outcome, pr *proc.Result) {
	if pr.Signal == 0 {
		code := pr.ExitCode
		o.ExitCode = &code
	} else {
		o.Signal = proc.SignalName(pr.Signal)
	}
	o.Stdout, o.Stderr = pr.Stdout.Text(), pr.Stderr.Text()
	o.StdoutBytes, o.StderrBytes = pr.Stdout.Bytes, pr.Stderr.Bytes
	o.OutputTruncated = pr.Stdout.Truncated || pr.Stderr.Truncated
	o.Containment = pr.Containment
	o.Killed, o.Survivors = pr.Killed, pr.Survivors
	o.Sandbox = pr.Sandbox
	o.Guard = pr.Guard
	o.Duration = pr.Duration
}

// exitStatus judges a command's own end from its proc result.
func exitStatus(pr *proc.Result, timeout time.Duration) (corral.Status, corral.ErrorType, string) {
	switch {
	case pr.TimedOut:
		return corral.StatusFailed, corral.ErrorTimeout, fmt.Sprintf("timed out after %v", timeout)
	case pr.Signal != 0:
		return corral.StatusFailed, corral.ErrorSignal, "signal " + proc.SignalName(pr.Signal)
	case pr.ExitCode != 0:
		return corral.StatusFailed, corral.ErrorExit, fmt.Sprintf("exit %d", pr.ExitCode)
	}
	return corral.StatusSucceeded, "", ""
}
