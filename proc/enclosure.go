package proc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/corralrun/corral"
)

// ErrSandboxUnavailable means the sandbox asked for cannot be built on this
// machine (no user namespaces, no Landlock, not Linux, ...). Nothing ran;
// the wrapping error says what is missing.
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// ErrEnclosureClosed is returned by Start for a spec whose Enclosure was
// closed.
var ErrEnclosureClosed = errors.New("enclosure closed")

// Enclosure is a sandbox that several runs share for its whole life: one
// view of the file system with one private /tmp, one network namespace (a
// server that one run starts is reachable from the next), one pid
// namespace, one egress proxy. Each run inside still has a process tree of
// its own, contained, timed out and torn down on its own. Close ends every
// run inside and removes the private /tmp. An Enclosure dies with the
// supervisor: if the supervisor is killed, the kernel kills every process
// inside.
//
// Its methods are safe for concurrent use.
type Enclosure struct {
	sandbox corral.Sandbox
	workdir string

	mu     sync.Mutex
	closed bool
	impl   *enclosureImpl
}

// EnclosureSpec describes an enclosure.
type EnclosureSpec struct {
	// Sandbox is the confinement; its mode must be read-only or workspace.
	Sandbox corral.Sandbox

	// Workdir is the runs' default working directory, and the workspace in
	// workspace mode; empty means the supervisor's working directory.
	Workdir string

	// Private lists directories of the supervisor's own that the runs may
	// write, at the same path, whatever the mode: state the supervisor
	// shares with its commands (a shell session's), not the user's. They
	// are not reported as writable roots.
	Private []string
}

// NewEnclosure builds the sandbox spec describes. It fails with an error
// wrapping ErrSandboxUnavailable when the confinement cannot be built
// here; ctx bounds the building.
func NewEnclosure(ctx context.Context, spec EnclosureSpec) (*Enclosure, error) {
	sb := spec.Sandbox
	if err := sb.Validate(); err != nil {
		return nil, fmt.Errorf("proc: %w", err)
	}
	if !sb.Enabled() {
		return nil, errors.New("proc: an enclosure needs a sandbox mode (read-only or workspace)")
	}
	e := &Enclosure{sandbox: sb, workdir: spec.Workdir}
	impl, err := newEnclosure(ctx, spec)
	if err != nil {
		return nil, err
	}
	e.impl = impl
	return e, nil
}

// Sandbox returns the settings the enclosure was built for.
func (e *Enclosure) Sandbox() corral.Sandbox { return e.sandbox }

// Report says what holds the enclosure's runs, with the hosts refused so
// far.
func (e *Enclosure) Report() corral.SandboxReport {
	return e.impl.report()
}

// Close ends every run inside the enclosure and releases it. It is safe to
// call more than once.
func (e *Enclosure) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	return e.impl.close()
}

func (e *Enclosure) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// checkSandbox refuses a spec whose sandbox cannot be honoured.
func checkSandbox(spec *Spec) error {
	if spec.Enclosure != nil && spec.Sandbox.Enabled() {
		return errors.New("proc: spec has both Sandbox and Enclosure; set one")
	}
	if err := spec.Sandbox.Validate(); err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	if e := spec.Enclosure; e != nil {
		if e.isClosed() {
			return fmt.Errorf("proc: %w", ErrEnclosureClosed)
		}
		if spec.Credential != nil {
			return errors.New("proc: a run in an enclosure runs as the enclosure's user: Credential is not supported there")
		}
	}
	return nil
}
