package proc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

func probeGuard() error {
	if err := sandbox.ProbeGuard(); err != nil {
		return fmt.Errorf("%w: %v", ErrGuardUnavailable, err)
	}
	return nil
}

// guardSupported says whether this platform has a task guard at all.
func guardSupported() error { return nil }

// newRunBox returns the box of a sandboxed or guarded run: the sandbox
// (with the guard's paths denied) when one is asked for, else the guard.
func newRunBox(a *spawnAttr, uid int) (*box, error) {
	if a.sandbox.Enabled() {
		b, err := newBox(withHidden(a.sandbox, a.guard), a.dir, nil, uid)
		if err == nil {
			b.guard = a.guard
		}
		return b, err
	}
	if err := probeGuard(); err != nil {
		return nil, err
	}
	p, err := sandbox.NewGuardPolicy(a.guard.Hide, a.dir)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	root := os.Geteuid() == 0 && (a.cred == nil || a.cred.UID == 0)
	return &box{policy: p, guard: a.guard, root: root}, nil
}

// startError says that the sandbox or the guard could not be built, when
// that is what failed.
func (b *box) startError(err error) error {
	if b.policy.Guard == nil {
		return sandboxStartError(err)
	}
	if f := (*initFailure)(nil); errors.As(err, &f) && f.stage != "start" {
		return fmt.Errorf("%w: %s: %w", ErrGuardUnavailable, f.stage, f.err)
	}
	return err
}

// guardAttr sets the namespaces of a guarded run's init: new mount, pid
// and IPC namespaces, and death with this process; and, unless the init
// runs as root, a user namespace with its ids mapped to themselves and the
// capabilities it needs there to build the view (CAP_SYS_ADMIN) and drop
// the command's (CAP_SETPCAP) kept across its exec.
func guardAttr(sys *syscall.SysProcAttr) {
	sys.Cloneflags = unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC
	sys.Pdeathsig = syscall.SIGKILL
	if os.Geteuid() == 0 && (sys.Credential == nil || sys.Credential.Uid == 0) {
		return
	}
	sys.Cloneflags |= unix.CLONE_NEWUSER
	sys.UidMappings, sys.GidMappings = sandbox.IdentityMaps()
	sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
}

// guardResult says what guarded the run: the guard's namespaces and
// confinement, or the sandbox that did its work.
func (c *initChild) guardResult() *corral.GuardReport {
	b := c.box
	if b == nil || b.guard == nil {
		return nil
	}
	if b.policy.Guard == nil {
		return sandboxGuardReport(b.guard)
	}
	r := &corral.GuardReport{Mechanisms: slices.Clone(c.mechs), Hidden: slices.Clone(b.policy.Guard.Hide)}
	if b.root {
		r.Capabilities = slices.Clone(GuardCapabilities)
	}
	return r
}
