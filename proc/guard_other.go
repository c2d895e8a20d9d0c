//go:build !linux

package proc

import (
	"fmt"
	"runtime"
)

func probeGuard() error { return guardSupported() }

// guardSupported refuses: the task guard is built from Linux namespaces.
func guardSupported() error {
	return fmt.Errorf("%w: the task guard needs Linux (mount and pid namespaces), not %s", ErrGuardUnavailable, runtime.GOOS)
}
