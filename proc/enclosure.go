package proc

import (
	"context"
	"errors"
	"fmt"

	"github.com/corralrun/corral"
)

// ErrSandboxUnavailable means the sandbox asked for cannot be built on this
// machine (no user namespaces, no Landlock, not Linux, ...). Nothing ran;
// the wrapping error says what is missing.
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// Enclosure is a sandbox that several runs share for its whole life: one
// view of the file system with one private /tmp, one network namespace (a
// server that one run starts is reachable from the next) and one egress
// proxy. Each run inside still has a process tree of its own, contained,
// timed out and torn down on its own. Close ends every run inside and
// removes the private /tmp.
type Enclosure struct {
	sandbox corral.Sandbox
	workdir string
}

// NewEnclosure builds a sandbox for sb whose workspace is workdir (empty:
// the supervisor's working directory). It fails with an error wrapping
// ErrSandboxUnavailable when the confinement cannot be built here.
func NewEnclosure(ctx context.Context, sb corral.Sandbox, workdir string) (*Enclosure, error) {
	if err := sb.Validate(); err != nil {
		return nil, err
	}
	if !sb.Enabled() {
		return nil, errors.New("proc: an enclosure needs a sandbox mode (read-only or workspace)")
	}
	return nil, fmt.Errorf("proc: %w: not built yet", ErrSandboxUnavailable)
}

// Report says what holds the enclosure's runs, with the hosts refused so
// far.
func (e *Enclosure) Report() corral.SandboxReport {
	return corral.SandboxReport{Mode: e.sandbox.Mode, Network: e.sandbox.Network}
}

// Close ends every run inside the enclosure and releases it. It is safe to
// call more than once.
func (e *Enclosure) Close() error { return nil }

// checkSandbox refuses a spec whose sandbox cannot be honoured.
func checkSandbox(spec *Spec) error {
	if spec.Enclosure != nil && spec.Sandbox.Enabled() {
		return errors.New("proc: spec has both Sandbox and Enclosure; set one")
	}
	if err := spec.Sandbox.Validate(); err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	if spec.Sandbox.Enabled() || spec.Enclosure != nil {
		return fmt.Errorf("proc: %w: not built yet", ErrSandboxUnavailable)
	}
	return nil
}
