package shell

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/shell/internal/clip"
	"github.com/corralrun/corral/shell/internal/snapshot"
)

// Job is a command running in the background under the supervision core:
// a dev server, a watcher, a long build. Its stdout and stderr go, in
// arrival order, to a log file and to an in-memory buffer (head and tail
// within Tool.JobOutput bytes) read incrementally with Output. It has no
// timeout unless its Request gave one. It ends when it exits, when Kill is
// called, or when its session (or Tool) is closed; its whole process tree
// goes with it.
type Job struct {
	id      string
	command string
	dir     string
	session string
	started time.Time
	tool    *Tool
	p       *proc.Process
	out     *jobOutput
	done    chan struct{}
	span    commandSpan // the job's span (trace.go)

	mu     sync.Mutex
	cursor int64
	killed bool
	res    *Result
}

// maxListedCommand is the most characters of a job's command its JobInfo
// holds, so that listing many jobs stays small.
const maxListedCommand = 2000

// shorten cuts s to n characters, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("… (%d more characters)", len(r)-n)
}

// JobInfo describes a job for listing.
type JobInfo struct {
	ID string `json:"job_id"`
	// Command is the job's command line, its first 2000 characters for a
	// longer one.
	Command string `json:"command"`
	// Status is "running", "exited", "killed" or "timed_out".
	Status      string    `json:"status"`
	Pid         int       `json:"pid"`
	StartedAt   time.Time `json:"started_at"`
	DurationMS  int64     `json:"duration_ms"`
	ExitCode    *int      `json:"exit_code,omitempty"`
	Signal      string    `json:"signal,omitempty"`
	OutputBytes int64     `json:"output_bytes"`
	LogPath     string    `json:"log_path,omitempty"`
}

// JobOutput is what a read of a job's output returns.
type JobOutput struct {
	JobInfo
	// Output is the job's output from Since to Next, stdout and stderr
	// interleaved as they arrived.
	Output string `json:"output"`
	Since  int64  `json:"since"`
	// Next is the offset to pass as since to read on from here.
	Next int64 `json:"next"`
	// Dropped counts bytes between Since and Next that were not kept in
	// memory; they are in the log file.
	Dropped int64 `json:"dropped,omitempty"`
	// Truncated reports that Output was cut to the character budget.
	Truncated bool `json:"truncated,omitempty"`
}

// jobSeq numbers jobs; stateSeq names the state files of session jobs.
var jobSeq, stateSeq atomic.Uint64

// Start starts req.Command as a background job in a fresh shell and returns
// at once with Result.JobID set (or Denied). The job ends with the Tool's
// Close at the latest.
func (t *Tool) Start(ctx context.Context, req Request) (*Result, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	if t.isClosed() {
		return nil, ErrClosed
	}
	dir := req.Dir
	if dir == "" {
		dir = t.Dir
	}
	if res := t.check(ctx, req.Command, dir, "", "job_start"); res != nil {
		return res, nil
	}
	r := &runSpec{args: oneShotArgs(t.family, req.Command), dir: dir, envMode: t.EnvMode, envAllow: t.EnvAllow, env: t.Env, req: req, timeout: req.Timeout}
	enc, err := t.enclosure(ctx, dir)
	if err != nil {
		return nil, err
	}
	var cleanup func()
	if enc != nil {
		r.enclosure = enc
		cleanup = func() { enc.Close() }
	}
	return t.startJob(ctx, &t.jobs, r, "", t.Env, cleanup)
}

// Start starts req.Command as a background job in the session's current
// state (directory, environment, functions, aliases, options) and returns
// at once with Result.JobID set (or Denied). The job does not change the
// session's state. It ends when the session is closed or reset, at the
// latest.
func (s *Session) Start(ctx context.Context, req Request) (*Result, error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	st := s.state
	s.mu.Unlock()
	t := s.tool
	dir, note := s.workdir(st, req.Dir)
	if res := t.check(ctx, req.Command, dir, s.id, "job_start"); res != nil {
		return res, nil
	}
	id := "j" + strconv.FormatUint(stateSeq.Add(1), 10)
	args, err := snapshot.Args(s.dir, id, st.Prefix, snapshot.Job, req.Command)
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	r := &runSpec{args: args, dir: dir, envMode: corral.EnvClean, env: withPWD(st.Env, dir), req: req, timeout: req.Timeout, enclosure: s.enc}
	res, err := t.startJob(ctx, &s.jobs, r, s.id, st.Env, func() { snapshot.Remove(s.dir, id) })
	if res != nil {
		res.Cwd = st.Dir
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	return res, err
}

// startJob starts r as a job in table jt.
// cleanup, if set, runs when the job has ended, or at once when it could
// not start.
func (t *Tool) startJob(ctx context.Context, jt *jobTable, r *runSpec, session string, env []string, cleanup func()) (*Result, error) {
	if cleanup == nil {
		cleanup = func() {}
	}
	if err := jt.reserve(t.MaxJobs); err != nil {
		cleanup()
		return nil, err
	}
	keep := t.JobOutput
	if keep <= 0 {
		keep = DefaultJobOutput
	}
	j := &Job{
		id:      "job" + strconv.FormatUint(jobSeq.Add(1), 10),
		command: r.req.Command,
		dir:     r.dir,
		session: session,
		tool:    t,
		out:     &jobOutput{buf: capture.NewBuffer(keep), limit: t.maxSpill(), wake: make(chan struct{})},
		done:    make(chan struct{}),
	}
	if j.out.limit > 0 {
		dir, err := t.spillDir()
		if err == nil {
			j.out.f, err = os.CreateTemp(dir, j.id+"-*.log")
		}
		if err == nil {
			j.out.name = j.out.f.Name()
		}
		if err != nil {
			jt.release()
			cleanup()
			return nil, fmt.Errorf("shell: creating the job's log file: %w", err)
		}
	}
	spec := t.spec(r, &spill{})
	spec.Stdout = &jobWriter{o: j.out, name: "stdout", on: r.req.OnOutput}
	spec.Stderr = &jobWriter{o: j.out, name: "stderr", on: r.req.OnOutput}
	spec.MaxOutput = -1
	spec.Label = "shell-job"
	// The job outlives the request that started it: only Kill, its
	// timeout and Close end it. Its span is a child of the request's.
	jctx, span := traceCommand(ctx, spanJob, r.req, session)
	p, err := proc.Start(context.WithoutCancel(jctx), spec)
	if err != nil {
		span.end(nil, err)
		jt.release()
		j.out.close()
		if j.out.f != nil {
			os.Remove(j.out.f.Name())
		}
		cleanup()
		return nil, fmt.Errorf("shell: starting job: %w", err)
	}
	j.p = p
	j.span = span
	j.started = time.Now()
	if r.req.OnStart != nil {
		r.req.OnStart(p.Handle())
	}
	jt.add(j)
	t.audit(AuditRecord{Event: "job_start", Session: session, Job: j.id, Command: j.command, Dir: j.dir, Decision: "allow", Pid: p.Pid(), Containment: string(p.Handle().Containment)}, env)
	go j.wait(jt, env, cleanup)
	return &Result{JobID: j.id, ExitCode: -1, Containment: string(p.Handle().Containment)}, nil
}

// wait collects the job's end.
func (j *Job) wait(jt *jobTable, env []string, cleanup func()) {
	defer close(j.done)
	pr, _ := j.p.Wait()
	j.out.close()
	res := &Result{
		JobID: j.id, ExitCode: pr.ExitCode, TimedOut: pr.TimedOut, DurationMS: pr.Duration.Milliseconds(),
		Containment: string(pr.Containment), Killed: pr.Killed, Survivors: pr.Survivors, Proc: pr,
		StdoutBytes: pr.Stdout.Bytes, StderrBytes: pr.Stderr.Bytes,
	}
	if pr.Signal != 0 {
		res.Signal = proc.SignalName(pr.Signal)
	}
	j.mu.Lock()
	res.Cancelled = j.killed
	j.res = res
	j.mu.Unlock()
	jt.finished()
	cleanup()
	j.span.end(res, nil)
	j.tool.auditEnd("job_end", j.session, j.command, j.dir, res, env)
}

// ID returns the job's id.
func (j *Job) ID() string { return j.id }

// Done returns a channel closed when the job has ended and its process
// tree is gone.
func (j *Job) Done() <-chan struct{} { return j.done }

// Info describes the job now.
func (j *Job) Info() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := JobInfo{ID: j.id, Command: shorten(j.command, maxListedCommand), Status: "running", Pid: j.p.Pid(), StartedAt: j.started,
		DurationMS: time.Since(j.started).Milliseconds(), OutputBytes: j.out.buf.Len(), LogPath: j.out.path()}
	if r := j.res; r != nil {
		code := r.ExitCode
		info.ExitCode = &code
		info.Signal = r.Signal
		info.DurationMS = r.DurationMS
		switch {
		case j.killed:
			info.Status = "killed"
		case r.TimedOut:
			info.Status = "timed_out"
		default:
			info.Status = "exited"
		}
	}
	return info
}

// Output returns the job's output from offset since (negative: from where
// the previous read ended) and advances the read position. If there is
// nothing new and the job is running, it waits up to wait for output or the
// job's end. Output longer than maxChars (zero: the Tool's
// MaxOutputChars) keeps its head and tail.
func (j *Job) Output(ctx context.Context, since int64, wait time.Duration, maxChars int) JobOutput {
	j.mu.Lock()
	if since < 0 {
		since = j.cursor
	}
	j.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		for {
			wake := j.out.waitChan()
			if j.out.buf.Len() > since {
				break
			}
			select {
			case <-wake:
				continue
			case <-j.done:
			case <-t.C:
			case <-ctx.Done():
			}
			break
		}
	}
	data, next, dropped := j.out.buf.ReadFrom(since)
	j.mu.Lock()
	if next > j.cursor {
		j.cursor = next
	}
	j.mu.Unlock()
	text := clip.Output(corral.Output{Head: data, Bytes: int64(len(data))}, j.tool.maxChars(maxChars), j.out.path())
	return JobOutput{JobInfo: j.Info(), Output: text.S, Since: since, Next: next, Dropped: dropped, Truncated: text.Truncated}
}

// Kill ends the job and its process tree (SIGTERM, the grace period, then
// SIGKILL) and returns once it is gone.
func (j *Job) Kill() JobInfo {
	j.mu.Lock()
	if j.res == nil {
		j.killed = true
	}
	j.mu.Unlock()
	j.p.Stop()
	<-j.done
	return j.Info()
}

// Job returns the session's job with the given id.
func (s *Session) Job(id string) (*Job, bool) { return s.jobs.get(id) }

// Jobs lists the session's jobs, running and ended, oldest first.
func (s *Session) Jobs() []JobInfo { return s.jobs.list() }

// Job returns the Tool's own job with the given id (jobs started with
// Tool.Start).
func (t *Tool) Job(id string) (*Job, bool) { return t.jobs.get(id) }

// Jobs lists the Tool's own jobs.
func (t *Tool) Jobs() []JobInfo { return t.jobs.list() }

// jobTable holds the jobs of a session or a Tool.
type jobTable struct {
	mu      sync.Mutex
	max     int
	running int
	jobs    []*Job
	closed  bool
}

// ErrTooManyJobs means the job limit is reached.
var ErrTooManyJobs = fmt.Errorf("shell: too many background jobs running: kill one (job_kill) or wait for one to end")

func (jt *jobTable) reserve(max int) error {
	if max <= 0 {
		max = DefaultMaxJobs
	}
	jt.mu.Lock()
	defer jt.mu.Unlock()
	if jt.closed {
		return ErrClosed
	}
	if jt.running >= max {
		return ErrTooManyJobs
	}
	jt.running++
	return nil
}

func (jt *jobTable) release() {
	jt.mu.Lock()
	jt.running--
	jt.mu.Unlock()
}

func (jt *jobTable) finished() { jt.release() }

func (jt *jobTable) add(j *Job) {
	jt.mu.Lock()
	closed := jt.closed
	jt.jobs = append(jt.jobs, j)
	jt.mu.Unlock()
	if closed {
		j.Kill()
	}
}

func (jt *jobTable) get(id string) (*Job, bool) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	for _, j := range jt.jobs {
		if j.id == id {
			return j, true
		}
	}
	return nil, false
}

func (jt *jobTable) list() []JobInfo {
	jt.mu.Lock()
	jobs := append([]*Job(nil), jt.jobs...)
	jt.mu.Unlock()
	out := make([]JobInfo, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.Info())
	}
	return out
}

// closeAll kills every job and waits for all of them; later jobs are
// refused (a Session's Reset reopens the table).
func (jt *jobTable) closeAll() {
	jt.mu.Lock()
	jt.closed = true
	jobs := jt.jobs
	jt.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); j.Kill() }()
	}
	wg.Wait()
}

func (jt *jobTable) reopen() {
	jt.mu.Lock()
	jt.closed = false
	jt.mu.Unlock()
}

// jobOutput receives a job's two streams.
type jobOutput struct {
	mu      sync.Mutex
	buf     *capture.Buffer
	f       *os.File
	name    string
	limit   int64
	n       int64
	skipped int64
	wake    chan struct{}
}

func (o *jobOutput) write(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if o.f != nil {
		q := p
		if room := o.limit - o.n; int64(len(q)) > room {
			o.skipped += int64(len(q)) - max(room, 0)
			q = q[:max(room, 0)]
		}
		if len(q) > 0 {
			if _, err := o.f.Write(q); err != nil {
				o.closeFileLocked()
			}
			o.n += int64(len(q))
		}
	}
	close(o.wake)
	o.wake = make(chan struct{})
}

func (o *jobOutput) waitChan() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.wake
}

func (o *jobOutput) path() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.name
}

func (o *jobOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f != nil && o.skipped > 0 {
		fmt.Fprintf(o.f, "\n[corral: %d more bytes not written: the log is capped at %d bytes]\n", o.skipped, o.limit)
	}
	o.closeFileLocked()
}

func (o *jobOutput) closeFileLocked() {
	if o.f != nil {
		if o.name == "" {
			o.name = o.f.Name()
		}
		o.f.Close()
		o.f = nil
	}
}

type jobWriter struct {
	o    *jobOutput
	name string
	on   func(string, []byte)
}

func (w *jobWriter) Write(p []byte) (int, error) {
	w.o.write(p)
	if w.on != nil {
		w.on(w.name, p)
	}
	return len(p), nil
}

// ForModel returns a copy of the output as a model should read it in JSON,
// terminal escapes and control characters removed (see Result.ForModel).
func (o JobOutput) ForModel() JobOutput {
	o.Output = cleanText(o.Output)
	return o
}

// Text renders the read for a model: the job's status first, then the
// output inside fences tagged with a random id that does not occur in it,
// with terminal escape sequences removed.
func (o JobOutput) Text() string {
	out := cleanText(o.Output)
	id := fenceID(out)
	status := o.Status
	if o.ExitCode != nil {
		status += fmt.Sprintf(" (exit_code %d)", *o.ExitCode)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[corral %s] job %s %s · output %d..%d of %d bytes · read on with since=%d", id, o.ID, status, o.Since, o.Next, o.OutputBytes, o.Next)
	if o.Dropped > 0 {
		fmt.Fprintf(&b, " · %d bytes in between were not kept in memory: read them in the log", o.Dropped)
	}
	if o.LogPath != "" {
		b.WriteString(" · log " + o.LogPath)
	}
	b.WriteByte('\n')
	if out == "" {
		b.WriteString("(no new output)\n")
		return b.String()
	}
	section(&b, "output", id, out)
	return b.String()
}
