package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralrun/corral"
)

// ErrUnavailable means the confinement asked for cannot be built on this
// machine. The wrapping error says what is missing.
var ErrUnavailable = errors.New("sandbox unavailable")

// Policy is what one sandbox enforces: the corral.Sandbox of a run with
// every path resolved, plus the host resources corral prepared for it. It
// is plain data, so that it can cross the re-execution of the init
// (corral's init reads it in the binary form of internal/shim; the tests'
// own inits read it as JSON).
type Policy struct {
	// Mode says what the run may write: its writable roots in workspace
	// mode, nothing but its private /tmp and /var/tmp in read-only mode.
	Mode corral.SandboxMode `json:"mode"`

	// Workdir is the run's working directory, absolute with symbolic
	// links resolved. In workspace mode it is the first writable root.
	Workdir string `json:"workdir"`

	// Writable lists further writable roots (workspace mode), resolved.
	Writable []string `json:"writable,omitempty"`

	// DenyRead lists files and directories hidden from the run, resolved:
	// a directory appears empty, a file empty; neither can be written.
	DenyRead []string `json:"deny_read,omitempty"`

	// Network is the network the run is in. Under corral.NetworkNone the
	// init must have been cloned with CLONE_NEWNET.
	Network corral.Network `json:"network,omitempty"`

	// Private lists directories of corral's own, resolved, that the run
	// writes at the same path in every mode: state corral shares with its
	// commands (a shell session's), not the user's. They are writable roots
	// for the sandbox's mechanisms, not for the report. Unlike Writable, a
	// private directory may lie below /dev/shm (the host's, shown over the
	// sandbox's own /dev/shm at its path): state kept in memory.
	Private []string `json:"private,omitempty"`

	// AllowUnixSockets lists pathname Unix sockets outside the writable
	// roots that the run may connect to, resolved.
	AllowUnixSockets []string `json:"allow_unix_sockets,omitempty"`

	// TmpDir is a host directory that becomes the run's /tmp: corral
	// creates it empty with mode 0700 before the init starts and removes it
	// after the init is gone, so that what the run wrote there goes with
	// it. Every command of one sandbox shares it; the host's /tmp is not
	// visible. Prepare creates the mount points it needs inside it.
	TmpDir string `json:"tmp_dir"`

	// ProxyPort, when positive, asks Prepare for a TCP listener on
	// 127.0.0.1:ProxyPort inside the sandbox's network namespace, for
	// corral's egress proxy (network none only).
	ProxyPort int `json:"proxy_port,omitempty"`

	// Loopback lists the ports of the host's loopback the run reaches at
	// the same address (network none only): NewPolicy takes them from the
	// loopback entries of AllowHosts; Prepare listens on each inside.
	Loopback []LoopbackPort `json:"loopback,omitempty"`

	// Guard, when set, makes this the policy of a task guard rather than
	// a sandbox (see Guard and NewGuardPolicy): Workdir is then the only
	// other field set.
	Guard *Guard `json:"guard,omitempty"`
}

// NewPolicy resolves sb for a run whose working directory is workdir
// (empty: the current directory) and returns the policy without TmpDir and
// ProxyPort, which the caller sets. Paths that must exist (the working
// directory, writable roots, allowed sockets) are resolved through their
// symbolic links; a denied path that does not exist is kept as given, since
// there is nothing to hide yet.
func NewPolicy(sb corral.Sandbox, workdir string) (*Policy, error) {
	if err := sb.Validate(); err != nil {
		return nil, err
	}
	if !sb.Enabled() {
		return nil, errors.New("sandbox: no sandbox mode asked for (read-only or workspace)")
	}
	if workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("sandbox: working directory: %w", err)
		}
		workdir = wd
	}
	p := &Policy{Mode: sb.Mode, Network: sb.Network}
	var err error
	if p.Workdir, err = resolveDir(workdir, "working directory"); err != nil {
		return nil, err
	}
	for _, w := range sb.Writable {
		r, err := resolveDir(w, "writable root")
		if err != nil {
			return nil, err
		}
		p.Writable = append(p.Writable, r)
	}
	for _, d := range sb.DenyRead {
		r, err := filepath.EvalSymlinks(d)
		if errors.Is(err, os.ErrNotExist) {
			r, err = filepath.Clean(d), nil
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox: denied path %s: %w", d, err)
		}
		p.DenyRead = append(p.DenyRead, r)
	}
	if p.Network == corral.NetworkNone {
		if p.Loopback, err = loopbackPorts(sb.AllowHosts); err != nil {
			return nil, err
		}
	}
	for _, s := range sb.AllowUnixSockets {
		r, err := filepath.EvalSymlinks(s)
		if err != nil {
			return nil, fmt.Errorf("sandbox: allowed Unix socket %s: %w", s, err)
		}
		p.AllowUnixSockets = append(p.AllowUnixSockets, r)
	}
	return p, nil
}

func resolveDir(path, what string) (string, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("sandbox: %s %s: %w", what, path, err)
		}
		path = abs
	}
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %s: %w", what, path, err)
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %s: %w", what, path, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("sandbox: %s %s is not a directory", what, path)
	}
	return r, nil
}

// WritableRoots returns the directories the run may write besides its
// private /tmp and /var/tmp: Workdir and Writable in workspace mode, and
// Private in every mode, without duplicates.
func (p *Policy) WritableRoots() []string {
	var roots []string
	add := func(list ...string) {
		for _, r := range list {
			if !slices.Contains(roots, r) {
				roots = append(roots, r)
			}
		}
	}
	if p.Mode == corral.SandboxWorkspace {
		add(p.Workdir)
		add(p.Writable...)
	}
	add(p.Private...)
	return roots
}

// UserWritable returns the writable roots the user asked for, for the
// report: Workdir and Writable in workspace mode, none in read-only mode.
func (p *Policy) UserWritable() []string {
	if p.Mode != corral.SandboxWorkspace {
		return []string{}
	}
	roots := []string{p.Workdir}
	for _, r := range p.Writable {
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// coveredDirs are the directories the sandbox replaces with its own: what
// the host has there is not visible inside.
var coveredDirs = []string{"/tmp", "/var/tmp", "/dev", "/proc"}

// Validate checks the policy for what no sandbox can honour: relative
// paths, a missing TmpDir, a writable root that would expose the host's
// /tmp or the whole file system, a proxy or a loopback port without a
// network of its own, a loopback port that is not one or that another
// listener takes. A guard's policy is checked by its own rules (see
// Guard).
func (p *Policy) Validate() error {
	if p.Guard != nil {
		return p.validateGuard()
	}
	switch p.Mode {
	case corral.SandboxReadOnly, corral.SandboxWorkspace:
	default:
		return fmt.Errorf("sandbox: policy mode %q: want read-only or workspace", p.Mode)
	}
	if _, err := corral.ParseNetwork(string(p.Network)); err != nil {
		return err
	}
	if !filepath.IsAbs(p.Workdir) {
		return fmt.Errorf("sandbox: working directory %q is not absolute", p.Workdir)
	}
	if !filepath.IsAbs(p.TmpDir) {
		return fmt.Errorf("sandbox: the private /tmp needs a host directory (Policy.TmpDir), got %q", p.TmpDir)
	}
	for _, list := range [][]string{p.Writable, p.Private, p.DenyRead, p.AllowUnixSockets} {
		for _, path := range list {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path {
				return fmt.Errorf("sandbox: path %q is not absolute and clean", path)
			}
		}
	}
	if slices.Contains(p.DenyRead, "/") {
		return errors.New("sandbox: denying / would leave nothing to run")
	}
	for _, r := range p.WritableRoots() {
		if r == "/" {
			return errors.New("sandbox: writable root / would leave nothing read-only: name narrower roots, or run without a sandbox")
		}
		for _, c := range coveredDirs {
			if within(r, c) {
				if c == "/dev" && r != "/dev/shm" && within(r, "/dev/shm") && slices.Contains(p.Private, r) && !slices.Contains(p.Writable, r) {
					continue // corral's own state, in memory
				}
				if c == "/tmp" || c == "/var/tmp" {
					if r == c {
						return fmt.Errorf("sandbox: writable root %s: the run's private %s is always writable; name a directory under it to share one of the host's", r, c)
					}
					continue
				}
				return fmt.Errorf("sandbox: writable root %s: the sandbox has its own %s", r, c)
			}
		}
	}
	if p.ProxyPort < 0 || p.ProxyPort > 65535 {
		return fmt.Errorf("sandbox: proxy port %d out of range", p.ProxyPort)
	}
	if p.ProxyPort > 0 && p.Network != corral.NetworkNone {
		return errors.New("sandbox: the egress proxy serves network none; network host reaches everything already")
	}
	return p.validateLoopback()
}

// within reports whether path is dir or lies below it; both are clean and
// absolute.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// Pending is a connect() call taken from a gate's notification
// descriptor and not answered yet (struct seccomp_notif's id, the
// caller's thread and the call's number and first three arguments), for
// Gate to answer.
type Pending struct {
	ID   uint64
	Pid  uint32
	Nr   int32
	Args [3]uint64
}
