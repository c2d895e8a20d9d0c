// Package executor runs one task of an agent as a supervised process tree:
// a shell agent's command line, or a headless agent turn. It knows nothing
// of storage; the service records what it reports.
package executor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/store"
)

// Executor runs tasks of one agent kind.
type Executor interface {
	// Run runs job to its end and reports it. Run returns when the
	// process tree is gone. Closing job.Stop asks for a graceful stop
	// (the run is then reported Cancelled); a done ctx tears the tree
	// down too (the service is shutting down). The error reports only a
	// failure to start; everything else is in the Result.
	Run(ctx context.Context, job *Job) (*Result, error)
}

// Job is one task to run.
type Job struct {
	Agent     *store.Agent
	Execution *store.Execution
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
	// MaxOutput caps the bytes kept per stream in the result.
	MaxOutput int
}

// MaxLine is the longest output line passed to OnLine.
const MaxLine = 64 << 10

// Result is how a run ended.
type Result struct {
	Status    corral.Status
	ErrorType corral.ErrorType
	Error     string
	ExitCode  *int
	Signal    string
	Cancelled bool // Job.Stop was honoured
	// Interrupted means ctx ended the run (the service is going away).
	Interrupted bool

	Result      string
	SessionID   string
	NumTurns    int
	CostUSD     float64
	Usage       json.RawMessage
	FinalizedBy string

	Stdout, Stderr corral.Output
	Containment    corral.Containment
	// Sandbox is what confined the run, nil when nothing did; User is
	// who it ran as.
	Sandbox   *corral.SandboxReport
	User      string
	Killed    int
	Survivors int
	Duration  time.Duration
}

// fromProc fills the supervision facts of r from a proc result.
func fromProc(r *Result, pr *proc.Result) {
	code := pr.ExitCode
	if pr.Signal == 0 {
		r.ExitCode = &code
	} else {
		r.Signal = proc.SignalName(pr.Signal)
	}
	r.Stdout, r.Stderr = pr.Stdout, pr.Stderr
	r.Containment = pr.Containment
	r.Killed = pr.Killed
	r.Survivors = pr.Survivors
	r.Duration = pr.Duration
}

// startFailure is the result of a run whose process never started.
func startFailure(err error) *Result {
	return &Result{Status: corral.StatusFailed, ErrorType: corral.ErrorStart, Error: err.Error()}
}
