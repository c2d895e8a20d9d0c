package shell

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/shell/internal/snapshot"
	"github.com/corralrun/corral/shell/internal/statedir"
)

// Session is a persistent shell session: the working directory, the
// environment, other shell variables, functions, aliases, the umask and
// shell options carry over from one command to the next. Each command runs
// in a fresh bash under the supervision core, which restores the state
// first and saves it when the command ends (see the package documentation).
//
// Commands of one session run one at a time, in the order Run was called;
// Run waits for the previous command to finish, and the wait counts
// against the command's timeout. Background jobs run alongside. A
// session's methods are safe for concurrent use.
//
// Under a sandbox (Tool.Sandbox) the session holds one proc.Enclosure for
// its whole life: its commands and background jobs share one private /tmp
// and one network, so a server a job starts is reachable from the next
// command.
type Session struct {
	tool *Tool
	id   string
	dir  string          // holds the state files
	enc  *proc.Enclosure // the session's sandbox, if any

	run     fifo // one command at a time, in order
	running inflight
	mu      sync.Mutex // guards the fields below
	state   snapshot.State
	seq     int
	jobs    jobTable
	done    bool
}

// NewSession starts a persistent session in the Tool's directory and
// environment. It runs one short command to capture the initial state. Close
// it when done: that ends its background jobs and removes its state. Under
// a sandbox it builds the session's enclosure first; when the sandbox
// cannot be built here the error wraps proc.ErrSandboxUnavailable and
// nothing runs.
func (t *Tool) NewSession(ctx context.Context) (*Session, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	if t.isClosed() {
		return nil, ErrClosed
	}
	if t.family != famBash {
		return nil, fmt.Errorf("%w; %s is a %s shell: use one-shot runs with it, or set Tool.Shell to bash", ErrNoSession, t.shell, t.family)
	}
	base, err := stateDir(), error(nil)
	if t.Sandbox.Enabled() {
		if base, err = sandboxStateDir(); err != nil {
			return nil, err
		}
	}
	dir, err := statedir.Make(base, sessionPrefix)
	if err != nil {
		return nil, fmt.Errorf("shell: creating the session's state directory: %w", err)
	}
	var raw [4]byte
	rand.Read(raw[:])
	s := &Session{tool: t, id: "s" + hex.EncodeToString(raw[:]), dir: dir}
	s.jobs.max = t.MaxJobs
	if t.Sandbox.Enabled() {
		if s.enc, err = t.sessionEnclosure(ctx, dir); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("shell: the session's sandbox: %w", err)
		}
	}
	st, err := s.begin(ctx, "c0")
	if err != nil {
		s.closeEnclosure()
		os.RemoveAll(dir)
		return nil, err
	}
	s.state = st
	t.audit(AuditRecord{Event: "session_open", Session: s.id, Dir: st.Dir}, nil)
	return s, nil
}

// begin runs a shell that captures the initial state, from the Tool's
// directory and environment, under id.
func (s *Session) begin(ctx context.Context, id string) (snapshot.State, error) {
	t := s.tool
	cwd, err := t.workspace()
	if err != nil {
		return snapshot.State{}, err
	}
	args, err := snapshot.Args(s.dir, id, "", snapshot.Init, ":")
	if err != nil {
		return snapshot.State{}, err
	}
	r := &runSpec{args: args, dir: cwd, envMode: t.EnvMode, envAllow: t.EnvAllow,
		env: append(append([]string(nil), t.Env...), "PWD="+cwd), timeout: t.timeout(0), enclosure: s.enc}
	res, err := t.execute(ctx, r)
	if err != nil {
		return snapshot.State{}, err
	}
	st, ok := snapshot.Load(s.dir, id)
	if !ok {
		snapshot.Remove(s.dir, id)
		return snapshot.State{}, fmt.Errorf("shell: the session's first shell did not save its state (%s; stderr: %q): check that %s is bash 4.4 or newer", res.Status(), res.Stderr, t.shell)
	}
	return st, nil
}

// sessionEnclosure builds the sandbox of a session whose state files are
// in dir. The wrapper that runs each command reads and writes them from
// inside, so dir is one of the enclosure's private directories: writable
// at the same path in every mode, and not one of the user's writable
// roots.
func (t *Tool) sessionEnclosure(ctx context.Context, dir string) (*proc.Enclosure, error) {
	ws, err := t.workspace()
	if err != nil {
		return nil, err
	}
	return proc.NewEnclosure(ctx, proc.EnclosureSpec{Sandbox: t.Sandbox, Workdir: ws, Private: []string{dir}})
}

// Sandbox reports what confines the session's commands, as asked for
// (the session's own state directory, writable inside, is left out); nil
// without a sandbox.
func (s *Session) Sandbox() *corral.SandboxReport {
	if s.enc == nil {
		return nil
	}
	r := s.enc.Report()
	r.Mode = s.tool.Sandbox.Mode
	own, _ := filepath.EvalSymlinks(s.dir)
	r.Writable = slices.DeleteFunc(slices.Clone(r.Writable), func(w string) bool { return w == s.dir || w == own })
	return &r
}

func (s *Session) closeEnclosure() {
	if s.enc != nil {
		s.enc.Close()
	}
}

// ID returns the session's id, as used in audit records.
func (s *Session) ID() string { return s.id }

// Cwd returns the session's working directory.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Dir
}

// Env returns the session's exported environment.
func (s *Session) Env() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.state.Env...)
}

// Run runs req.Command in the session and returns its result. The command
// sees the state the previous commands left; the state it leaves is kept
// when its shell gets to save it, which is always except after SIGKILL (a
// timeout whose SIGTERM was ignored, a kill -9), a crash of the shell, or
// exec of another program: then Result.SessionRestarted is set and the
// session goes on from the state before. A denied command does not run and
// changes nothing. Processes the command left in the background are killed
// when it ends; start long-running ones with Start.
//
// The timeout counts from req.Since (when the caller received the
// command), or else from the call of Run, so the wait for the session's
// previous command counts against it; Result.WaitedMS says how long that
// wait was. A command whose timeout expired, or whose ctx ended, before
// its turn does not run: its result says TimedOut (or Cancelled) with a
// note.
func (s *Session) Run(ctx context.Context, req Request) (*Result, error) {
	ctx, span := traceCommand(ctx, spanCommand, req, s.id)
	res, err := s.runCommand(ctx, req)
	span.end(res, err)
	return res, err
}

func (s *Session) runCommand(ctx context.Context, req Request) (*Result, error) {
	called := time.Now()
	ctx, done, ok := s.running.begin(ctx)
	if !ok {
		return nil, ErrClosed
	}
	defer done()
	t := s.tool
	budget := t.timeout(req.Timeout)
	since := called
	if !req.Since.IsZero() && req.Since.Before(called) {
		since = req.Since
	}
	wctx, cancel := context.WithDeadline(ctx, since.Add(budget))
	err := s.run.lock(wctx)
	cancel()
	waited := time.Since(since)
	if err != nil {
		return s.notRun(ctx, req, waited, budget), nil
	}
	defer s.run.unlock()
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.seq++
	id := "c" + strconv.Itoa(s.seq)
	prev := s.state
	s.mu.Unlock()

	dir, note := s.workdir(prev, req.Dir)
	if res := t.check(ctx, req.Command, dir, s.id, "run"); res != nil {
		res.Cwd = prev.Dir
		return res, nil
	}
	args, err := snapshot.Args(s.dir, id, prev.Prefix, snapshot.Step, req.Command)
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	waited = time.Since(since)
	if waited >= budget {
		snapshot.Remove(s.dir, id)
		return s.notRun(ctx, req, waited, budget), nil
	}
	r := &runSpec{args: args, dir: dir, envMode: corral.EnvClean, env: withPWD(prev.Env, dir), req: req, timeout: budget - waited, enclosure: s.enc}
	res, err := t.execute(ctx, r)
	if err != nil {
		snapshot.Remove(s.dir, id)
		t.audit(AuditRecord{Event: "error", Session: s.id, Command: req.Command, Dir: dir, Error: err.Error()}, prev.Env)
		return nil, err
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	res.Notes = append(res.Notes, t.capNotes(req)...)
	res.noteWait(waited)
	next, saved := snapshot.Load(s.dir, id)
	s.mu.Lock()
	switch {
	case !saved:
		res.SessionRestarted = true
		snapshot.Remove(s.dir, id)
	default:
		if req.Dir != "" || t.Reanchor {
			next.Dir = prev.Dir
		}
		s.state = next
		s.removeOld(prev.Prefix)
	}
	res.Cwd = s.state.Dir
	env := s.state.Env
	s.mu.Unlock()
	if res.Killed > 0 && !res.TimedOut && !res.Cancelled {
		res.Notes = append(res.Notes, fmt.Sprintf("%d process(es) the command left running (such as a job started with &) were killed when it ended; start long-running processes as background jobs", res.Killed))
	}
	t.auditEnd("run", s.id, req.Command, dir, res, env)
	return res, nil
}

// notRun is the result of a command whose turn did not come before its
// timeout or the end of ctx.
func (s *Session) notRun(ctx context.Context, req Request, waited, budget time.Duration) *Result {
	res := &Result{ExitCode: -1, Cwd: s.Cwd(), WaitedMS: waited.Milliseconds()}
	if ctx.Err() != nil {
		res.Cancelled = true
		res.Notes = append(res.Notes, fmt.Sprintf("cancelled after waiting %d ms for the session's previous command: the command did not run", res.WaitedMS))
	} else {
		res.TimedOut = true
		res.DurationMS = res.WaitedMS
		res.Notes = append(res.Notes, fmt.Sprintf("the timeout of %d ms expired while the command waited for the session's previous command: it did not run; run it again, or run long commands in the background", budget.Milliseconds()))
	}
	s.tool.auditEnd("run", s.id, req.Command, "", res, nil)
	return res
}

// workdir decides where a command runs: req, the Tool's directory when
// re-anchoring, or the session's; a session directory that was removed
// falls back to the Tool's (or the supervisor's) with a note.
func (s *Session) workdir(st snapshot.State, req string) (string, string) {
	if req != "" {
		return req, ""
	}
	dir := st.Dir
	if s.tool.Reanchor && s.tool.Dir != "" {
		dir = s.tool.Dir
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, ""
	}
	fallback := s.tool.Dir
	if fallback == "" {
		fallback, _ = os.Getwd()
	}
	return fallback, fmt.Sprintf("the session's directory %s no longer exists; the command ran in %s", dir, fallback)
}

func withPWD(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	out = append(out, env...)
	return append(out, "PWD="+dir)
}

// removeOld deletes the files of a state that has been replaced.
func (s *Session) removeOld(prefix string) {
	if prefix == "" {
		return
	}
	for _, ext := range snapshot.Exts {
		os.Remove(prefix + ext)
	}
}

// Reset ends the session's background jobs and starts its state afresh
// from the Tool's directory and environment, as a new session would. It
// waits its turn after the commands called before it. The session keeps
// its sandbox.
func (s *Session) Reset(ctx context.Context) error {
	if err := s.run.lock(ctx); err != nil {
		return err
	}
	defer s.run.unlock()
	s.jobs.closeAll()
	defer s.jobs.reopen()
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return ErrClosed
	}
	s.seq++
	id := "c" + strconv.Itoa(s.seq)
	s.mu.Unlock()
	st, err := s.begin(ctx, id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeOld(s.state.Prefix)
	s.state = st
	s.tool.audit(AuditRecord{Event: "session_reset", Session: s.id, Dir: s.state.Dir}, nil)
	return nil
}

// Close stops the command running in the session, if any (as a cancelled
// context would), and its background jobs, waits for their process trees
// to be gone, and removes the session's state. Close is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil
	}
	s.done = true
	s.mu.Unlock()
	s.running.close()
	s.jobs.closeAll()
	s.closeEnclosure()
	s.tool.audit(AuditRecord{Event: "session_close", Session: s.id}, nil)
	return os.RemoveAll(s.dir)
}

// sandboxStateDir is where sandboxed sessions keep their state: a
// directory the sandbox shows at the same path, writable there. In the
// host's /dev/shm when it is a writable memory file system: the sandbox
// shows the session's own directory there, over the sandbox's own
// /dev/shm, and so no other session's (and a command's state written to a
// disk file system costs it about 0.8 ms). Otherwise in the user's cache
// directory (not under /tmp or /var/tmp, which are the sandbox's own),
// which the sandbox shows read-only like the rest of the host.
func sandboxStateDir() (string, error) {
	if base := shmStateDir(); base != "" && !mutant.SessionStateOnDisk {
		return base, nil
	}
	cache, err := sandboxStateBase()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		return "", fmt.Errorf("shell: a sandboxed session keeps its state in the user's cache directory: %w (set HOME or XDG_CACHE_HOME)", err)
	}
	return cache, nil
}

var (
	stateDirOnce sync.Once
	stateDirPath string
)

// stateDir is where sessions keep their state files.
func stateDir() string {
	stateDirOnce.Do(func() { stateDirPath = snapshot.TempDir() })
	return stateDirPath
}

var shmStateDir = sync.OnceValue(snapshot.ShmDir)

func sandboxStateBase() (string, error) {
	cache, err := os.UserCacheDir()
	return filepath.Join(cache, "corral", "sessions"), err
}
