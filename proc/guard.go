package proc

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

// Guard keeps a run from the secrets of the program that supervises it:
// the task guard of docs/sandbox.md. A guarded run keeps the host's file
// system, network and its user's rights, but runs in pid, mount and IPC
// namespaces of its own with a /proc of its own (no process outside the
// run can be seen, opened through /proc, traced or signalled: not the
// supervisor's environment, memory or descriptors), does not see Hide
// (wherever a mount shows them), has a /dev of the harmless devices and
// no usable device node elsewhere, sees the kernel's interface file
// systems read-only (tracefs, debugfs and other proc mounts not at all),
// holds no_new_privs and, as root, only the capabilities of
// GuardCapabilities (none as another user).
//
// A sandboxed run already has all of that: Hide is added to its denied
// paths. A guard is not taken with an Enclosure (give the enclosure's
// sandbox the paths to deny). When the guard cannot be built here, Start
// fails with an error wrapping ErrGuardUnavailable that says what is
// missing, and nothing runs; ProbeGuard tells beforehand.
type Guard struct {
	// Hide lists absolute paths of files and directories the run may not
	// see: a directory appears empty, a file empty; neither can be
	// written. One that does not exist when the run starts is ignored.
	Hide []string
}

// ErrGuardUnavailable means the task guard cannot be built on this machine
// (not Linux, no namespaces for this user, ...). Nothing ran; the wrapping
// error says what is missing.
var ErrGuardUnavailable = errors.New("task guard unavailable")

// GuardCapabilities are the only capabilities a guarded run as root keeps
// (file ownership and modes, users and groups, signals to its own
// processes, the network's low ports, chroot, audit messages).
var GuardCapabilities = slices.Clone(sandbox.GuardCapabilities)

// ProbeGuard reports whether this machine can guard this process's runs:
// nil, or an error wrapping ErrGuardUnavailable that names what is
// missing. The first call costs a clone or two; later calls are cached.
func ProbeGuard() error { return probeGuard() }

// checkGuard refuses a guard that cannot be honoured as given.
func checkGuard(spec *Spec) error {
	g := spec.Guard
	if g == nil {
		return nil
	}
	if spec.Enclosure != nil {
		return errors.New("proc: spec has both Guard and Enclosure: deny the paths in the enclosure's sandbox instead")
	}
	if err := guardSupported(); err != nil {
		return err
	}
	for _, h := range g.Hide {
		if !filepath.IsAbs(h) {
			return fmt.Errorf("proc: guard: hidden path %q is not absolute", h)
		}
	}
	return nil
}

// withHidden returns sb with the guard's paths added to what it denies.
func withHidden(sb corral.Sandbox, g *Guard) corral.Sandbox {
	if g == nil {
		return sb
	}
	deny := slices.Clone(sb.DenyRead)
	for _, h := range g.Hide {
		if h = filepath.Clean(h); !slices.Contains(deny, h) {
			deny = append(deny, h)
		}
	}
	sb.DenyRead = deny
	return sb
}

// sandboxGuardReport is the guard's report for a sandboxed run: the
// sandbox did the guard's work.
func sandboxGuardReport(g *Guard) *corral.GuardReport {
	return &corral.GuardReport{Mechanisms: []string{"sandbox"}, Hidden: slices.Clone(g.Hide)}
}

// guardReporter is a child that ran guarded (or sandboxed with a guard).
type guardReporter interface {
	guardResult() *corral.GuardReport
}
