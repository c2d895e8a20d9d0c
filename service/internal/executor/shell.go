package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
)

// Shell runs a shell agent's input as a script of its shell under the
// supervision core, as the user and in the environment its Policy gives.
//
// The input never appears in the shell's arguments, where every local user
// could read it (ps, /proc/PID/cmdline): it is written to an anonymous file
// the shell gets as its standard input, reads whole, and then replaces
// with the null device before it runs the script, so the script's own
// commands still read nothing. PowerShell is the exception: it takes the
// input as its -Command argument.
type Shell struct {
	Policy *Policy
}

// bashReader and posixReader read the script from standard input, give
// the script /dev/null as its standard input, and run it in the shell
// itself (its exit, traps and background jobs are the script's).
const (
	bashReader  = `IFS= read -r -d '' __corral_task; exec </dev/null; eval "unset __corral_task; $__corral_task"`
	posixReader = `__corral_task=$(cat; echo .); exec </dev/null; eval "unset __corral_task; ${__corral_task%.}"`
)

func (s Shell) Run(ctx context.Context, j *Job) *corral.Outcome {
	input := j.Execution.Input
	if strings.IndexByte(input, 0) >= 0 {
		return notStarted(ctx, j, errors.New("the input holds a NUL byte, which no shell can run"), "")
	}
	l, err := s.Policy.prepare(j)
	if err != nil {
		return notStarted(ctx, j, err, "")
	}
	sh := j.Agent.Shell
	if sh == "" {
		sh = "bash"
	}
	spec := &proc.Spec{
		Args:       []string{sh},
		Dir:        l.dir,
		EnvMode:    corral.EnvClean,
		Env:        l.env,
		Timeout:    j.Timeout,
		Grace:      j.Agent.Grace.D(),
		MaxOutput:  max(j.MaxOutput, 1),
		Credential: l.cred,
		Sandbox:    l.sandbox,
		Guard:      l.guard,
		Label:      Label(j.Execution.ID),
	}
	switch strings.TrimSuffix(filepath.Base(sh), ".exe") {
	case "pwsh", "powershell":
		spec.Args = append(spec.Args, "-NoProfile", "-NonInteractive", "-Command", input)
	case "bash":
		spec.Args = append(spec.Args, "-c", bashReader)
	default:
		spec.Args = append(spec.Args, "-c", posixReader)
	}
	var script *os.File
	if spec.Args[1] == "-c" {
		if script, err = scriptFile(input); err != nil {
			return notStarted(ctx, j, err, l.user)
		}
		spec.Stdin = script
	}
	outLines, errLines := lineWriter(j, "stdout"), lineWriter(j, "stderr")
	spec.Stdout, spec.Stderr = outLines, errLines
	p, err := proc.Start(ctx, spec)
	if script != nil && !mutant.ScriptKept {
		// Once Start returns, the command (or the init that starts it)
		// holds a descriptor of the script of its own: the service keeps
		// none for the run's life, one fewer a run at 10,000 runs.
		script.Close()
	}
	if err != nil {
		return notStarted(ctx, j, startError(err, l), l.user)
	}
	if j.OnStart != nil {
		j.OnStart(p.Handle())
	}
	stopped := false
	select {
	case <-p.Done():
	case <-j.Stop:
		stopped = true
		p.Stop()
	}
	pr, err := p.Wait() // ctx ending tears the tree down too
	outLines.flush()
	errLines.flush()
	o := &corral.Outcome{User: l.user}
	fromProc(o, pr)
	o.Guard = l.guardReport(pr.Guard)
	o.Status, o.ErrorType, o.Error = exitStatus(pr, j.Timeout)
	end(ctx, o, pr.Cancelled, stopped)
	supervision(o, err)
	return o
}

// scriptFile returns an unlinked file holding script, at its start: only
// the process that inherits it can read it. Where the system has anonymous
// memory files (Linux) the script never reaches a disk, and costs no file
// creation, the largest cost of a trivial task on a real disk.
func scriptFile(script string) (*os.File, error) {
	f, err := memFile("corral-task")
	if err != nil {
		if f, err = os.CreateTemp("", "corral-task-*"); err != nil {
			return nil, fmt.Errorf("could not write the task's input to a temporary file: %w", err)
		}
		os.Remove(f.Name())
	}
	if _, err := f.WriteString(script); err != nil {
		f.Close()
		return nil, fmt.Errorf("could not write the task's input to a temporary file: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// startError says why a run could not start, in terms of the agent's
// settings where they are the cause.
func startError(err error, l *launch) error {
	switch {
	case errors.Is(err, proc.ErrSandboxUnavailable):
		return fmt.Errorf("the agent's sandbox (%s) cannot be built on this worker, so nothing ran: %w", l.sandbox.Mode, err)
	case errors.Is(err, proc.ErrGuardUnavailable):
		return fmt.Errorf("the task guard cannot be built for this run, so nothing ran (corral serve --task-guard off runs tasks unguarded): %w", err)
	case errors.Is(err, os.ErrPermission) && l.cred != nil:
		return fmt.Errorf("could not start the run as user %s (corral serve needs root, or CAP_SETUID and CAP_SETGID, to switch users; and the user needs access to the working directory %q): %w", l.user, l.dir, err)
	}
	return err
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
