//go:build !mutation_sandboxcause

package proc

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/corralrun/corral/internal/sandbox"
)

// initCloneFailed returns the error of a sandbox's init whose start
// failed with err: ErrSandboxUnavailable with what this machine lacks
// when the clone into the sandbox's namespaces is what failed (the probe
// clones into them again to name it, and the setting that forbids them),
// else err as it is. A clone that failed for want of resources (EAGAIN,
// ENOMEM) is not a sandbox this machine cannot build.
func initCloneFailed(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case syscall.EPERM, syscall.EACCES, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS:
		if perr := sandbox.Unavailable(); perr != nil {
			return fmt.Errorf("%w: %v", ErrSandboxUnavailable, perr)
		}
	}
	return err
}
