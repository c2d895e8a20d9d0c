package shell

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/shell/internal/clip"
)

// runSpec is one command about to run under proc.
type runSpec struct {
	args     []string // after the shell's name
	dir      string
	envMode  corral.EnvMode
	envAllow []string
	env      []string
	req      Request
	timeout  time.Duration
	// enclosure, if set, is the sandbox the command runs in (a session's,
	// or a one-shot run's own); otherwise the Tool's Sandbox applies, with
	// dir as the workspace.
	enclosure *proc.Enclosure
}

// execute runs r to the end and builds its Result.
func (t *Tool) execute(ctx context.Context, r *runSpec) (*Result, error) {
	max := t.maxChars(r.req.MaxOutputChars)
	sp := &spill{limit: t.maxSpill(), threshold: max}
	if sp.limit > 0 {
		dir, err := t.spillDir()
		if err != nil {
			return nil, err
		}
		sp.dir = dir
	}
	defer sp.discard()
	spec := t.spec(r, sp)
	// The capture keeps enough bytes for max characters of any UTF-8.
	spec.MaxOutput = 4*max + 16
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("shell: starting %s: %w", t.shell, err)
	}
	if r.req.OnStart != nil {
		r.req.OnStart(p.Handle())
	}
	pr, err := p.Wait()
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	return t.result(pr, sp, max), nil
}

// spec builds the proc.Spec of r, its output going to sp and OnOutput.
func (t *Tool) spec(r *runSpec, sp *spill) *proc.Spec {
	grace := r.req.Grace
	if grace == 0 {
		grace = t.Grace
	}
	spec := &proc.Spec{
		Path:        t.shell,
		Args:        append([]string{t.shell}, r.args...),
		Dir:         r.dir,
		EnvMode:     r.envMode,
		EnvAllow:    r.envAllow,
		Env:         r.env,
		Timeout:     r.timeout,
		Grace:       grace,
		Containment: t.Containment,
		Label:       "shell",
	}
	if r.enclosure != nil {
		spec.Enclosure = r.enclosure
	} else {
		spec.Sandbox = t.Sandbox
	}
	on := r.req.OnOutput
	spec.Stdout = &streamWriter{sp: sp, name: "stdout", on: on}
	spec.Stderr = &streamWriter{sp: sp, name: "stderr", on: on}
	return spec
}

// result turns a proc.Result into what the model sees.
func (t *Tool) result(pr *proc.Result, sp *spill, max int) *Result {
	res := &Result{
		ExitCode:    pr.ExitCode,
		TimedOut:    pr.TimedOut,
		Cancelled:   pr.Cancelled,
		DurationMS:  pr.Duration.Milliseconds(),
		StdoutBytes: pr.Stdout.Bytes,
		StderrBytes: pr.Stderr.Bytes,
		Containment: string(pr.Containment),
		Killed:      pr.Killed,
		Survivors:   pr.Survivors,
		Proc:        pr,
	}
	if pr.Signal != 0 {
		res.Signal = proc.SignalName(pr.Signal)
	}
	a, b := clip.Budgets(clip.Size(pr.Stdout), clip.Size(pr.Stderr), max)
	out := clip.Output(pr.Stdout, a, "")
	errs := clip.Output(pr.Stderr, b, "")
	if out.Truncated || errs.Truncated {
		res.Truncated = true
		res.FullOutputPath = sp.keep()
		if res.FullOutputPath != "" {
			out = clip.Output(pr.Stdout, a, res.FullOutputPath)
			errs = clip.Output(pr.Stderr, b, res.FullOutputPath)
		}
	}
	res.Stdout, res.Stderr = out.S, errs.S
	return res
}

// streamWriter feeds one stream to the spill and to OnOutput.
type streamWriter struct {
	sp   *spill
	name string
	on   func(string, []byte)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.sp.write(p)
	if w.on != nil {
		w.on(w.name, p)
	}
	return len(p), nil
}

// spill holds the whole output of a command, stdout and stderr in arrival
// order: in memory up to threshold bytes (output that small is never
// truncated), in a file once it grows past, up to limit bytes.
type spill struct {
	dir       string
	limit     int64
	threshold int

	mu      sync.Mutex
	mem     []byte
	f       *os.File
	n       int64
	failed  bool
	skipped int64
}

func (s *spill) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit <= 0 || s.failed {
		return
	}
	if s.f == nil && len(s.mem)+len(p) <= s.threshold {
		s.mem = append(s.mem, p...)
		s.n += int64(len(p))
		return
	}
	if s.f == nil && !s.open() {
		return
	}
	if room := s.limit - s.n; int64(len(p)) > room {
		s.skipped += int64(len(p)) - max(room, 0)
		p = p[:max(room, 0)]
	}
	if len(p) == 0 {
		return
	}
	if _, err := s.f.Write(p); err != nil {
		s.failed = true // a full disk must not stop the command
		return
	}
	s.n += int64(len(p))
}

func (s *spill) open() bool {
	f, err := os.CreateTemp(s.dir, "output-*.log")
	if err != nil {
		s.failed = true
		return false
	}
	s.f = f
	if _, err := f.Write(s.mem); err != nil {
		s.failed = true
		return false
	}
	s.mem = nil
	return true
}

// keep closes the file and returns its path; the caller owns it.
func (s *spill) keep() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit <= 0 {
		return ""
	}
	if s.f == nil && !s.failed && !s.open() {
		return ""
	}
	if s.failed || s.f == nil {
		s.closeLocked(true)
		return ""
	}
	if s.skipped > 0 {
		fmt.Fprintf(s.f, "\n[corral: %d more bytes not written: the file is capped at %d bytes]\n", s.skipped, s.limit)
	}
	name := s.f.Name()
	s.f.Close()
	s.f = nil
	return name
}

// discard removes the file unless keep took it.
func (s *spill) discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked(true)
}

func (s *spill) closeLocked(remove bool) {
	if s.f != nil {
		s.f.Close()
		if remove {
			os.Remove(s.f.Name())
		}
		s.f = nil
	}
	s.mem = nil
}
