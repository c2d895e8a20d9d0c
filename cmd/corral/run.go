package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

func init() {
	register("run", "run a command with a deadline that holds, for agents: captured output, a JSON result", runMain)
}

const runUsage = `Usage: corral run [flags] -- COMMAND [ARGS...]

Runs COMMAND inside the strongest containment the machine allows (a cgroup
v2 leaf, a subreaper init, or a process group), enforces the timeout on the
whole process tree and returns when the tree is gone: background jobs,
double forks and setsid escapees included. If corral itself is killed, even
with SIGKILL, the tree dies with it.

Without --json the command's output streams through live. With --json one
JSON object is printed at the end: exit_code, signal, timed_out, cancelled,
duration_ms, stdout, stderr, stdout_bytes, stderr_bytes, stdout_truncated,
stderr_truncated, containment, killed, survivors, binding (what kills the
tree if corral dies), sandbox (mode, network, writable, mechanisms,
landlock_abi, denied_hosts) and a few more.

Exit status: the command's own; 124 on timeout; 125 when corral itself
fails; 126 when COMMAND is not executable; 127 when it is not found; 128+N
when a signal N ended it; 130, 143 or 129 when corral got SIGINT, SIGTERM
or SIGHUP.

The command reads the null device unless --stdin says otherwise. Signals:
SIGINT, SIGTERM and SIGHUP stop the run (the tree gets --signal, then
SIGKILL after --grace); SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and SIGPIPE reach
every process of the tree as themselves; Ctrl-Z (SIGTSTP) stops the tree
and corral, and fg (SIGCONT) resumes both. For GNU timeout's command line
and behaviour (the caller's own terminal and streams), see corral timeout.

Flags:
`

const runUsageTail = sandboxHelp + telemetryHelp

// runFlags are corral run's flags.
type runFlags struct {
	fs                                                        *flag.FlagSet
	timeout, drain                                            *time.Duration
	grace                                                     func() time.Duration
	maxOutput, pidsMax                                        *int
	memoryMax                                                 *int64
	leftovers, envMode, containment, runAs, stopSig, spillDir *string
	stdin                                                     *string
	asJSON                                                    *bool
	allowEnv, setEnv                                          stringList
	sbf                                                       *sandboxFlags
	tf                                                        *telemetryFlags
}

func newRunFlags() *runFlags {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), runUsage); fs.PrintDefaults(); fmt.Fprint(fs.Output(), runUsageTail) }
	f := &runFlags{
		fs:          fs,
		timeout:     nonNegDuration(fs, "timeout", 0, "kill the tree after `DUR` (0: no timeout)"),
		grace:       graceFlag(fs, "on timeout or cancel"),
		drain:       nonNegDuration(fs, "drain", proc.DefaultDrain, "how long (`DUR`) to read output still held open after the command ends"),
		maxOutput:   fs.Int("max-output", proc.DefaultMaxOutput, "`BYTES` kept per stream, head and tail (with --json)"),
		leftovers:   fs.String("leftovers", "kill", "processes alive after the command exits: kill, wait or detach"),
		envMode:     fs.String("env", "inherit", "environment passed on: inherit, allowlist or clean"),
		containment: fs.String("containment", "auto", "containment tier: auto, cgroup, subreaper or pgroup"),
		runAs:       fs.String("user", "", "run as `USER` (name or uid[:gid]); needs privilege"),
		stopSig:     fs.String("signal", "TERM", "first signal sent on timeout: a name in any case (TERM, sigint, RTMIN+1) or a number"),
		spillDir:    fs.String("spill-dir", "", "write the full output of truncated streams to files in `DIR` (with --json)"),
		stdin:       fs.String("stdin", "null", "the command's standard input: null (the null device), inherit (corral's own) or a `FILE` to read"),
		pidsMax:     fs.Int("pids-max", 0, "most processes the tree may hold (cgroup tier with the pids controller)"),
		memoryMax:   fs.Int64("memory-max", 0, "most `BYTES` of memory the tree may use (cgroup tier with the memory controller)"),
		asJSON:      fs.Bool("json", false, "print one JSON object with the result instead of streaming output"),
	}
	fs.Var(&f.allowEnv, "allow-env", "with --env allowlist, a variable `NAME` to keep (repeatable; NAME* keeps a prefix)")
	fs.Var(&f.setEnv, "setenv", "add `KEY=VALUE` to the environment (repeatable)")
	f.sbf = addSandboxFlags(fs, "workdir")
	f.tf = addTelemetryFlags(fs)
	return f
}

func runMain(args []string) int {
	sigs := watchTreeSignals() // beside the flags and the run's set-up
	f := newRunFlags()
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitCorralFailed
	}
	if f.fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "corral run: no command given (corral run [flags] -- COMMAND [ARGS...])")
		return exitCorralFailed
	}
	spec, err := f.spec()
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral run:", err)
		return exitCorralFailed
	}
	if f, ok := spec.Stdin.(*os.File); ok && f != os.Stdin {
		defer f.Close()
	}
	ctx := f.tf.Start("run", version())
	spec.Env = append(spec.Env, f.tf.Env()...)
	return runSpec(ctx, sigs, spec, *f.asJSON)
}

// spec builds the run's Spec from the flags.
func (f *runFlags) spec() (*proc.Spec, error) {
	spec := &proc.Spec{
		Args:      f.fs.Args(),
		Timeout:   *f.timeout,
		Grace:     f.grace(),
		Drain:     negIfZero(*f.drain),
		MaxOutput: *f.maxOutput,
		EnvAllow:  f.allowEnv,
		Env:       f.setEnv,
		Limits:    proc.Limits{Pids: *f.pidsMax, Memory: *f.memoryMax},
		Label:     "run",
	}
	var err error
	if spec.Leftovers, err = corral.ParseLeftovers(*f.leftovers); err != nil {
		return nil, err
	}
	if spec.EnvMode, err = corral.ParseEnvMode(*f.envMode); err != nil {
		return nil, err
	}
	if spec.Containment, err = corral.ParseContainment(*f.containment); err != nil {
		return nil, err
	}
	if spec.StopSignal, err = proc.ParseSignal(*f.stopSig); err != nil {
		return nil, fmt.Errorf("--signal: %w", err)
	}
	if spec.Dir, err = f.sbf.Dir(); err != nil {
		return nil, err
	}
	if spec.Sandbox, err = f.sbf.Settings(); err != nil {
		return nil, err
	}
	if *f.runAs != "" {
		if spec.Credential, err = lookupUser(*f.runAs); err != nil {
			return nil, err
		}
	}
	f.output(spec)
	if spec.Stdin, err = runStdin(*f.stdin); err != nil {
		return nil, err
	}
	return spec, nil
}

// output sets where the output goes: captured for --json, streamed through
// otherwise.
func (f *runFlags) output(spec *proc.Spec) {
	if *f.asJSON {
		spec.SpillDir = *f.spillDir
	} else {
		spec.Stdout, spec.Stderr = os.Stdout, os.Stderr
		spec.MaxOutput = -1
	}
	if *f.maxOutput <= 0 {
		spec.MaxOutput = -1
	}
}

// runStdin opens --stdin: nil for the null device, corral's own stdin, or
// a file (the caller closes it).
func runStdin(s string) (io.Reader, error) {
	switch s {
	case "null", "":
		return nil, nil
	case "inherit":
		return os.Stdin, nil
	}
	f, err := os.Open(s)
	if err != nil {
		return nil, fmt.Errorf("--stdin: %w (want null, inherit or a file to read)", err)
	}
	return f, nil
}

// runSpec runs spec, says the result and returns the exit status.
func runSpec(ctx context.Context, sigs *treeSignals, spec *proc.Spec, asJSON bool) int {
	sigs.hold(spec)
	p, err := proc.Start(ctx, spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral run:", err)
		return startFailure(err)
	}
	got := sigs.follow(p)
	if got != nil {
		p.Stop()
	}
	res, werr := p.Wait()
	if werr != nil {
		fmt.Fprintln(os.Stderr, "corral run:", werr)
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(jsonResult(res)); err != nil {
			fmt.Fprintln(os.Stderr, "corral run:", err)
			return exitCorralFailed
		}
	}
	if res.Survivors > 0 {
		fmt.Fprintf(os.Stderr, "corral run: %d processes of the tree survived SIGKILL: %s\n", res.Survivors, res.SurvivorNote)
	}
	return exitStatus(res, got)
}

// exitStatus maps a result to corral run's exit status.
func exitStatus(res *proc.Result, got os.Signal) int {
	switch {
	case got != nil:
		if s, ok := got.(syscall.Signal); ok {
			return 128 + int(s)
		}
		return 130
	case res.TimedOut:
		return exitTimedOut
	case res.Signal != 0:
		return 128 + int(res.Signal)
	}
	return res.ExitCode
}

// runJSON is corral run's --json output.
type runJSON struct {
	ExitCode        int     `json:"exit_code"`
	Signal          string  `json:"signal"`
	TimedOut        bool    `json:"timed_out"`
	Cancelled       bool    `json:"cancelled"`
	DurationMS      float64 `json:"duration_ms"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutBytes     int64   `json:"stdout_bytes"`
	StderrBytes     int64   `json:"stderr_bytes"`
	StdoutTruncated bool    `json:"stdout_truncated"`
	StderrTruncated bool    `json:"stderr_truncated"`
	StdoutSpill     string  `json:"stdout_spill,omitempty"`
	StderrSpill     string  `json:"stderr_spill,omitempty"`
	Containment     string  `json:"containment"`
	ContainmentNote string  `json:"containment_note,omitempty"`
	LimitsNote      string  `json:"limits_note,omitempty"`
	Killed          int     `json:"killed"`
	Detached        int     `json:"detached"`
	Survivors       int     `json:"survivors"`
	SurvivorNote    string  `json:"survivor_note,omitempty"`
	Pid             int     `json:"pid"`

	Binding     string `json:"binding"`
	BindingNote string `json:"binding_note,omitempty"`

	Sandbox *corral.SandboxReport `json:"sandbox,omitempty"`
}

func jsonResult(r *proc.Result) runJSON {
	j := runJSON{
		ExitCode:        r.ExitCode,
		TimedOut:        r.TimedOut,
		Cancelled:       r.Cancelled,
		DurationMS:      float64(r.Duration.Microseconds()) / 1000,
		Stdout:          r.Stdout.Text(),
		Stderr:          r.Stderr.Text(),
		StdoutBytes:     r.Stdout.Bytes,
		StderrBytes:     r.Stderr.Bytes,
		StdoutTruncated: r.Stdout.Truncated,
		StderrTruncated: r.Stderr.Truncated,
		StdoutSpill:     r.Stdout.SpillPath,
		StderrSpill:     r.Stderr.SpillPath,
		Containment:     string(r.Containment),
		ContainmentNote: r.ContainmentNote,
		LimitsNote:      r.LimitsNote,
		Killed:          r.Killed,
		Detached:        r.Detached,
		Survivors:       r.Survivors,
		SurvivorNote:    r.SurvivorNote,
		Pid:             r.Pid,
		Binding:         r.Binding,
		BindingNote:     r.BindingNote,
		Sandbox:         r.Sandbox,
	}
	if r.Signal != 0 {
		j.Signal = proc.SignalName(r.Signal)
	}
	return j
}

// lookupUser resolves "name", "uid" or "uid:gid".
func lookupUser(s string) (*proc.Credential, error) {
	name, group, hasGroup := strings.Cut(s, ":")
	var u *user.User
	var err error
	if _, nerr := strconv.Atoi(name); nerr == nil {
		u, err = user.LookupId(name)
		if err != nil {
			u = &user.User{Uid: name, Gid: name}
		}
	} else if u, err = user.Lookup(name); err != nil {
		return nil, fmt.Errorf("--user %s: %w", s, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("--user %s: uid %q is not numeric (not supported on this system)", s, u.Uid)
	}
	gidStr := u.Gid
	if hasGroup {
		gidStr = group
		if _, err := strconv.Atoi(group); err != nil {
			g, err := user.LookupGroup(group)
			if err != nil {
				return nil, fmt.Errorf("--user %s: %w", s, err)
			}
			gidStr = g.Gid
		}
	}
	gid, err := strconv.ParseUint(gidStr, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("--user %s: gid %q is not numeric", s, gidStr)
	}
	return &proc.Credential{UID: uint32(uid), GID: uint32(gid)}, nil
}
