package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/proc"
)

// Shell runs a shell agent's input as SHELL -c INPUT.
type Shell struct{}

func (Shell) Run(ctx context.Context, j *Job) (*Result, error) {
	sh := j.Agent.Shell
	if sh == "" {
		sh = "bash"
	}
	outLines, errLines := lineWriter(j, "stdout"), lineWriter(j, "stderr")
	spec := &proc.Spec{
		Args:      []string{sh, "-c", j.Execution.Input},
		Dir:       j.Agent.Workdir,
		Env:       env(j),
		Timeout:   j.Timeout,
		Grace:     j.Agent.Grace.D(),
		MaxOutput: j.MaxOutput,
		Stdout:    outLines,
		Stderr:    errLines,
		Label:     "exec-" + j.Execution.ID,
	}
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return startFailure(fmt.Errorf("start %s: %w", sh, err)), nil
	}
	if j.OnStart != nil {
		j.OnStart(p.Handle())
	}
	pr, stopped, interrupted := supervise(ctx, p, j.Stop)
	outLines.flush()
	errLines.flush()
	r := &Result{Cancelled: stopped, Interrupted: interrupted}
	fromProc(r, pr)
	switch {
	case stopped:
		r.Status, r.ErrorType, r.Error = corral.StatusCancelled, corral.ErrorCancelled, "cancelled on request"
	case interrupted:
		r.Status, r.ErrorType, r.Error = corral.StatusInterrupted, corral.ErrorInterrupted, "the service shut down while the run was in flight"
	case pr.TimedOut:
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorTimeout, fmt.Sprintf("timed out after %v (%s)", j.Timeout, pr.Status())
	case pr.Signal != 0:
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorSignal, pr.Status()
	case pr.ExitCode != 0:
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorExit, pr.Status()
	default:
		r.Status = corral.StatusSucceeded
	}
	return r, nil
}

// syncLines is a capture.Lines fed from one stream's reading goroutine
// and flushed once the stream is over.
type syncLines struct {
	mu sync.Mutex
	l  capture.Lines
}

func lineWriter(j *Job, stream string) *syncLines {
	s := &syncLines{}
	s.l.Max = MaxLine
	s.l.Func = func(line []byte, cut bool) {
		if j.OnLine != nil {
			j.OnLine(stream, line)
		}
	}
	return s
}

func (s *syncLines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.l.Write(p)
}

func (s *syncLines) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.l.Flush()
}
