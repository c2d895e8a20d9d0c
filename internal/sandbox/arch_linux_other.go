//go:build linux && !amd64 && !arm64

package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// auditArch is zero: corral has no seccomp filter for this architecture,
// and Probe reports the sandbox unavailable.
const auditArch = 0

func buildFilter(gate bool) ([]unix.SockFilter, error) {
	return nil, fmt.Errorf("%w: no seccomp filter for %s", ErrUnavailable, runtime.GOARCH)
}
