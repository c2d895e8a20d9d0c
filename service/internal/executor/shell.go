package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/shell"
)

// forever stands for "no timeout" with the shell tool, whose zero means
// its two-minute default.
const forever = 100 * 365 * 24 * 3600 * 1e9

// Shell runs a shell agent's input as a one-shot command of the shell tool
// (SHELL -c INPUT under the supervision core).
type Shell struct{}

func (Shell) Run(ctx context.Context, j *Job) (*Result, error) {
	outLines, errLines := lineWriter(j, "stdout"), lineWriter(j, "stderr")
	timeout := j.Timeout
	if timeout <= 0 {
		timeout = forever
	}
	tool := &shell.Tool{
		Shell:          j.Agent.Shell,
		Dir:            j.Agent.Workdir,
		Env:            env(j),
		Timeout:        timeout,
		MaxTimeout:     timeout,
		Grace:          j.Agent.Grace.D(),
		MaxOutputChars: max(j.MaxOutput, 1) * 2,
		MaxSpillBytes:  -1, // the service keeps its own log
	}
	defer tool.Close()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-j.Stop:
			close(stopped)
			cancel()
		case <-rctx.Done():
		}
	}()
	res, err := tool.Run(rctx, shell.Request{
		Command: j.Execution.Input,
		OnStart: j.OnStart,
		OnOutput: func(stream string, p []byte) {
			if stream == "stderr" {
				errLines.Write(p)
			} else {
				outLines.Write(p)
			}
		},
	})
	cancel()
	outLines.flush()
	errLines.flush()
	wasStopped := false
	select {
	case <-stopped:
		wasStopped = true
	default:
	}
	if err != nil {
		switch {
		case wasStopped:
			return &Result{Status: corral.StatusCancelled, ErrorType: corral.ErrorCancelled, Error: "cancelled before it started", Cancelled: true}, nil
		case ctx.Err() != nil:
			return &Result{Status: corral.StatusInterrupted, ErrorType: corral.ErrorInterrupted, Error: "the service shut down before the run started", Interrupted: true}, nil
		}
		return startFailure(err), nil
	}
	r := &Result{
		Stdout:      corral.Output{Head: []byte(res.Stdout), Bytes: res.StdoutBytes, Truncated: res.Truncated},
		Stderr:      corral.Output{Head: []byte(res.Stderr), Bytes: res.StderrBytes, Truncated: res.Truncated},
		Containment: corral.Containment(res.Containment),
		Killed:      res.Killed,
		Survivors:   res.Survivors,
	}
	if res.Proc != nil {
		fromProc(r, res.Proc) // the core's own head+tail and facts
	} else {
		code := res.ExitCode
		r.ExitCode = &code
	}
	switch {
	case res.Denied:
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorStart, "denied: "+res.Reason
	case res.Cancelled && wasStopped:
		r.Cancelled = true
		r.Status, r.ErrorType, r.Error = corral.StatusCancelled, corral.ErrorCancelled, "cancelled on request"
	case res.Cancelled:
		r.Interrupted = true
		r.Status, r.ErrorType, r.Error = corral.StatusInterrupted, corral.ErrorInterrupted, "the service shut down while the run was in flight"
	case res.TimedOut:
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorTimeout, fmt.Sprintf("timed out after %v", j.Timeout)
	case res.Signal != "":
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorSignal, "signal "+res.Signal
	case res.ExitCode != 0:
		r.Status, r.ErrorType, r.Error = corral.StatusFailed, corral.ErrorExit, fmt.Sprintf("exit %d", res.ExitCode)
	default:
		r.Status = corral.StatusSucceeded
	}
	return r, nil
}

// syncLines is a capture.Lines fed by one stream's reading goroutine and
// flushed once the stream is over.
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
