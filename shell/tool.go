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
	"github.com/corralrun/corral/shell/internal/statedir"
)

// Defaults applied to the zero values of a Tool.
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxOutputChars = 30000
	DefaultOutputCharsCap = 500000
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

	// OutputCharsCap caps what a Request may ask for in MaxOutputChars,
	// checked before anything is allocated for the output: a larger ask
	// gets the cap, and a note saying so. Zero means
	// DefaultOutputCharsCap (500,000 characters, whose result stays well
	// under the 10 MiB message MCP clients accept); a MaxOutputChars above
	// it raises it.
	OutputCharsCap int

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

	// Sandbox confines every command (see corral.Sandbox); the zero value
	// confines nothing. The workspace is Dir (or the supervisor's working
	// directory), whatever directory a command runs in. A Session holds
	// one proc.Enclosure for its life, shared by its commands and jobs; a
	// one-shot run or job gets a sandbox of its own. When the sandbox
	// cannot be built here, the command does not run and the error wraps
	// proc.ErrSandboxUnavailable.
	Sandbox corral.Sandbox

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

	// Since, if set, is when the command was asked for (such as when a
	// server received the call): the timeout counts from then rather
	// than from the call of Run, so time spent waiting for a session's
	// previous command counts against it. Jobs ignore it.
	Since time.Time

	// Dir runs the command in another directory. In a session the
	// session's own directory does not change: a cd in this command is
	// not carried to the next one.
	Dir string

	// MaxOutputChars overrides the Tool's limit for this command, up to
	// the Tool's OutputCharsCap.
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
	ReapStale()
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
	if t.MaxOutputChars < 0 || t.OutputCharsCap < 0 {
		return fmt.Errorf("shell: MaxOutputChars %d or OutputCharsCap %d is negative: use 0 for the default", t.MaxOutputChars, t.OutputCharsCap)
	}
	if err := t.Sandbox.Validate(); err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	return nil
}

// workspace returns the directory a sandbox confines writes to, and where
// sessions start: Dir, or the supervisor's working directory.
func (t *Tool) workspace() (string, error) {
	if t.Dir != "" {
		return t.Dir, nil
	}
	d, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("shell: %w", err)
	}
	return d, nil
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
		d, err := statedir.Make(os.TempDir(), spillPrefix)
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
		return min(req, t.charsCap())
	case t.MaxOutputChars > 0:
		return t.MaxOutputChars
	}
	return DefaultMaxOutputChars
}

// charsCap is the largest output budget a Request may ask for.
func (t *Tool) charsCap() int {
	return max(setting.Or(t.OutputCharsCap, DefaultOutputCharsCap), t.MaxOutputChars)
}

// capNotes says which of req's asks were above the Tool's caps.
func (t *Tool) capNotes(req Request) []string {
	var notes []string
	if c := t.charsCap(); req.MaxOutputChars > c {
		notes = append(notes, fmt.Sprintf("max_output_chars %d is above the maximum; %d was used", req.MaxOutputChars, c))
	}
	if m := t.timeout(1 << 62); req.Timeout > m {
		notes = append(notes, fmt.Sprintf("the timeout asked for is above the maximum; %d ms was used", m.Milliseconds()))
	}
	return notes
}

func (t *Tool) maxSpill() int64 { return setting.Or(t.MaxSpillBytes, DefaultMaxSpillBytes) }

// Run runs req.Command in a fresh shell and returns its result. A command
// the policy or the approval hook refuses does not run: the result says
// Denied, with the reason, and the error is nil. The error reports a
// configuration problem or a command that could not start at all.
func (t *Tool) Run(ctx context.Context, req Request) (*Result, error) {
	ctx, span := traceCommand(ctx, spanCommand, req, "")
	res, err := t.runCommand(ctx, req)
	span.end(res, err)
	return res, err
}

func (t *Tool) runCommand(ctx context.Context, req Request) (*Result, error) {
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
	timeout, waited := t.timeout(req.Timeout), time.Duration(0)
	if !req.Since.IsZero() {
		waited = max(time.Since(req.Since), 0)
		timeout = max(timeout-waited, time.Millisecond)
	}
	r := &runSpec{
		args:    oneShotArgs(t.family, req.Command),
		dir:     dir,
		envMode: t.EnvMode, envAllow: t.EnvAllow, env: t.Env,
		req:     req,
		timeout: timeout,
	}
	enc, err := t.enclosure(ctx, dir)
	if enc != nil {
		r.enclosure = enc
		defer enc.Close()
	}
	var res *Result
	if err == nil {
		res, err = t.execute(ctx, r)
	}
	if err != nil {
		t.audit(AuditRecord{Event: "error", Command: req.Command, Dir: dir, Error: err.Error()}, t.Env)
		return nil, err
	}
	res.Notes = append(res.Notes, t.capNotes(req)...)
	res.noteWait(waited)
	t.auditEnd("run", "", req.Command, dir, res, t.Env)
	return res, nil
}

// enclosure returns a sandbox of its own for a one-shot run in dir when
// dir is not the workspace: proc takes a sandboxed run's directory as its
// workspace, and a command must not widen its own. Nil when the run needs
// none (Spec.Sandbox then confines it).
func (t *Tool) enclosure(ctx context.Context, dir string) (*proc.Enclosure, error) {
	if !t.Sandbox.Enabled() {
		return nil, nil
	}
	ws, err := t.workspace()
	if err != nil {
		return nil, err
	}
	if dir == "" || dir == ws {
		return nil, nil
	}
	enc, err := proc.NewEnclosure(ctx, proc.EnclosureSpec{Sandbox: t.Sandbox, Workdir: ws})
	if err != nil {
		return nil, fmt.Errorf("shell: the command's sandbox: %w", err)
	}
	return enc, nil
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

// Limits are the effective limits of a Tool, its zero fields resolved:
// the default timeout and the largest one a Request may ask for, the
// default output budget and the largest one a Request may ask for.
type Limits struct {
	Timeout        time.Duration
	MaxTimeout     time.Duration
	MaxOutputChars int
	OutputCharsCap int
}

// Limits returns the timeouts and the output budget commands get.
func (t *Tool) Limits() Limits {
	return Limits{Timeout: t.timeout(0), MaxTimeout: t.timeout(1 << 62), MaxOutputChars: t.maxChars(0), OutputCharsCap: t.charsCap()}
}
