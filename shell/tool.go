package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/proc"
)

// Defaults applied to the zero values of a Tool.
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxOutputChars = 30000
	DefaultMaxSpillBytes  = 1 << 30
	DefaultMaxJobs        = 16
	DefaultJobOutput      = 1 << 20
)

// Tool runs shell commands for an agent. Configure it with its exported
// fields before first use and do not change or copy it afterwards; its
// methods are then safe for concurrent use. The zero value runs bash (pwsh
// on Windows) in the supervisor's working directory and environment, with a
// two-minute timeout and 30,000 characters of output for the model.
//
// Close ends every background job started through the Tool and removes the
// files it created in its own temporary directory.
type Tool struct {
	// Shell is the shell to run: "bash", "sh", "zsh", "pwsh", or a path to
	// one of them. Empty means bash (pwsh on Windows). Persistent sessions
	// need bash; one-shot runs and jobs work with all of them.
	Shell string

	// Dir is the working directory of one-shot runs and where sessions
	// start; empty means the supervisor's.
	Dir string

	// Reanchor makes every command of a session start in Dir: a cd is then
	// not carried to the next command. Other state still is.
	Reanchor bool

	// EnvMode, EnvAllow and Env select the environment, as in proc.Spec:
	// inherit (the default), an allowlist, or clean, with Env added on top.
	// A session starts from it; its commands then change it with export
	// and unset.
	EnvMode  corral.EnvMode
	EnvAllow []string
	Env      []string

	// Timeout is the timeout of a command whose Request has none; zero
	// means DefaultTimeout (2 minutes). MaxTimeout caps what a Request may
	// ask for; zero means DefaultMaxTimeout (10 minutes).
	Timeout    time.Duration
	MaxTimeout time.Duration

	// Grace is how long a timed-out command has between SIGTERM and
	// SIGKILL, unless its Request says otherwise; zero means
	// proc.DefaultGrace.
	Grace time.Duration

	// MaxOutputChars bounds the stdout and stderr text of a Result, in
	// characters, together: the head and the tail are kept, and the whole
	// output goes to a file named in Result.FullOutputPath. Zero means
	// DefaultMaxOutputChars.
	MaxOutputChars int

	// SpillDir receives the full-output files of truncated results and
	// the logs of jobs; the caller owns those files. Empty means a
	// directory the Tool creates in the system's temporary directory and
	// removes, with everything in it, on Close.
	SpillDir string

	// MaxSpillBytes caps each full-output file; what comes after is
	// counted but not written. Zero means DefaultMaxSpillBytes (1 GiB);
	// negative means no files at all.
	MaxSpillBytes int64

	// Policy is checked before every command; the zero value allows all.
	Policy Policy

	// Approve, if set, is asked about every command the policy allowed,
	// before it runs. A command it does not approve is denied with its
	// reason. It must honour ctx: the command waits for it.
	Approve func(ctx context.Context, c Check) (approved bool, reason string)

	// Audit, if set, receives a record of every command: what was asked,
	// the decision, and how it ended. Secrets are redacted first.
	Audit AuditSink

	// Containment overrides the containment tier of every process; the
	// default is the strongest the machine allows.
	Containment corral.Containment

	// MaxJobs caps the background jobs running at once per session (and
	// for the Tool itself); zero means DefaultMaxJobs.
	MaxJobs int

	// JobOutput is how many bytes of a job's output are kept in memory
	// for reading back (head and tail); zero means DefaultJobOutput. The
	// whole output also goes to the job's log file.
	JobOutput int

	// ProbeTools lists the programs whose versions Environment reports;
	// nil means DefaultProbeTools.
	ProbeTools []string

	once     sync.Once
	initErr  error
	shell    string // resolved path
	family   family
	policy   *compiledPolicy
	spillMu  sync.Mutex
	ownSpill string // the directory we created, if any
	jobs     jobTable
	running  inflight
	closed   bool
}

// Request is one command to run.
type Request struct {
	// Command is the shell command line. It may hold several lines.
	Command string

	// Timeout bounds the command; zero means the Tool's. It is capped at
	// the Tool's MaxTimeout. For a background job, zero means none.
	Timeout time.Duration

	// Dir runs the command in another directory. In a session the
	// session's own directory does not change: a cd in this command is
	// not carried to the next one.
	Dir string

	// MaxOutputChars overrides the Tool's limit for this command.
	MaxOutputChars int

	// Grace overrides the Tool's grace period for this command.
	Grace time.Duration

	// OnOutput, if set, receives the output as it arrives, stream being
	// "stdout" or "stderr". It is called from the two reading goroutines,
	// concurrently, and must not block for long.
	OnOutput func(stream string, p []byte)

	// OnStart, if set, is called once the command's process has started,
	// with what identifies its tree for proc.Reclaim after a crash.
	OnStart func(proc.Handle)
}

// ErrClosed is returned by the methods of a closed Tool or Session.
var ErrClosed = errors.New("shell: closed")

// ErrNoSession means the Tool's shell cannot hold a persistent session.
var ErrNoSession = errors.New("shell: persistent sessions need bash")

func (t *Tool) init() error {
	t.once.Do(func() { t.initErr = t.setup() })
	return t.initErr
}

func (t *Tool) setup() error {
	name := t.Shell
	if name == "" {
		name = "bash"
		if runtime.GOOS == "windows" {
			name = "pwsh"
		}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("shell: %s not found (install it or set Tool.Shell to bash, sh, zsh or pwsh): %w", name, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	t.shell = path
	t.family = familyOf(name)
	if t.policy, err = compilePolicy(t.Policy); err != nil {
		return err
	}
	if t.Dir != "" {
		if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("shell: working directory %s: not a directory (set Tool.Dir to an existing directory): %w", t.Dir, errOr(err, os.ErrNotExist))
		}
	}
	if t.MaxOutputChars < 0 {
		return fmt.Errorf("shell: MaxOutputChars %d is negative: use 0 for the default", t.MaxOutputChars)
	}
	return nil
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// spillDir returns the directory for full-output files, creating the Tool's
// own on first use.
func (t *Tool) spillDir() (string, error) {
	if t.SpillDir != "" {
		return t.SpillDir, nil
	}
	t.spillMu.Lock()
	defer t.spillMu.Unlock()
	if t.ownSpill == "" {
		d, err := os.MkdirTemp("", "corral-shell-")
		if err != nil {
			return "", fmt.Errorf("shell: creating a directory for full output: %w", err)
		}
		t.ownSpill = d
	}
	return t.ownSpill, nil
}

func (t *Tool) timeout(req time.Duration) time.Duration {
	max := t.MaxTimeout
	if max <= 0 {
		max = DefaultMaxTimeout
	}
	d := req
	if d <= 0 {
		d = t.Timeout
		if d <= 0 {
			d = DefaultTimeout
		}
	}
	return min(d, max)
}

func (t *Tool) maxChars(req int) int {
	switch {
	case req > 0:
		return req
	case t.MaxOutputChars > 0:
		return t.MaxOutputChars
	}
	return DefaultMaxOutputChars
}

func (t *Tool) maxSpill() int64 { return setting.Or(t.MaxSpillBytes, DefaultMaxSpillBytes) }

// Run runs req.Command in a fresh shell and returns its result. A command
// the policy or the approval hook refuses does not run: the result says
// Denied, with the reason, and the error is nil. The error reports a
// configuration problem or a command that could not start at all.
func (t *Tool) Run(ctx context.Context, req Request) (*Result, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	ctx, done, ok := t.running.begin(ctx)
	if !ok {
		return nil, ErrClosed
	}
	defer done()
	dir := req.Dir
	if dir == "" {
		dir = t.Dir
	}
	if res := t.check(ctx, req.Command, dir, "", "run"); res != nil {
		return res, nil
	}
	r := &runSpec{
		args:    oneShotArgs(t.family, req.Command),
		dir:     dir,
		envMode: t.EnvMode, envAllow: t.EnvAllow, env: t.Env,
		req:     req,
		timeout: t.timeout(req.Timeout),
	}
	res, err := t.execute(ctx, r)
	if err != nil {
		t.audit(AuditRecord{Event: "error", Command: req.Command, Dir: dir, Error: err.Error()}, t.Env)
		return nil, err
	}
	t.auditEnd("run", "", req.Command, dir, res, t.Env)
	return res, nil
}

// Close stops the one-shot runs in flight (as a cancelled context would)
// and the Tool's background jobs, waits for their process trees to be
// gone, and removes the Tool's own temporary directory. Sessions are
// closed by their own Close. Later calls return ErrClosed.
func (t *Tool) Close() error {
	t.spillMu.Lock()
	t.closed = true
	own := t.ownSpill
	t.spillMu.Unlock()
	t.running.close()
	t.jobs.closeAll()
	if own != "" {
		return os.RemoveAll(own)
	}
	return nil
}

func (t *Tool) isClosed() bool {
	t.spillMu.Lock()
	defer t.spillMu.Unlock()
	return t.closed
}

// family is the kind of shell, which decides how commands are passed.
type family string

const (
	famBash family = "bash"
	famSh   family = "sh"
	famZsh  family = "zsh"
	famPwsh family = "pwsh"
)

func familyOf(name string) family {
	base := strings.ToLower(filepath.Base(name))
	base = strings.TrimSuffix(base, ".exe")
	switch base {
	case "bash":
		return famBash
	case "zsh":
		return famZsh
	case "pwsh", "powershell":
		return famPwsh
	}
	return famSh
}

func oneShotArgs(f family, command string) []string {
	if f == famPwsh {
		return []string{"-NoProfile", "-NonInteractive", "-Command", command}
	}
	return []string{"-c", command}
}

// Limits are the effective limits of a Tool, its zero fields resolved.
type Limits struct {
	Timeout        time.Duration
	MaxTimeout     time.Duration
	MaxOutputChars int
}

// Limits returns the timeouts and the output budget commands get.
func (t *Tool) Limits() Limits {
	return Limits{Timeout: t.timeout(0), MaxTimeout: t.timeout(1 << 62), MaxOutputChars: t.maxChars(0)}
}
