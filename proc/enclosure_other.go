//go:build !linux

package proc

import (
	"context"
	"fmt"
	"runtime"

	"github.com/corralrun/corral"
)

type enclosureImpl struct{}

func newEnclosure(ctx context.Context, spec EnclosureSpec) (*enclosureImpl, error) {
	return nil, fmt.Errorf("proc: %w: the sandbox needs Linux (this is %s)", ErrSandboxUnavailable, runtime.GOOS)
}

func (e *enclosureImpl) report() corral.SandboxReport { return corral.SandboxReport{} }

func (e *enclosureImpl) close() error { return nil }
