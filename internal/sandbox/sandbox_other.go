//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
)

func unavailable() error {
	return fmt.Errorf("%w: corral's sandbox needs Linux (user namespaces, Landlock, seccomp), not %s", ErrUnavailable, runtime.GOOS)
}

// Probe reports the sandbox unavailable: it is built for Linux only.
func Probe() (Support, error) { return Support{}, unavailable() }

// Check reports the sandbox unavailable: it is built for Linux only.
func Check() error { return unavailable() }

// Unavailable reports the sandbox unavailable: it is built for Linux only.
func Unavailable() error { return unavailable() }

// Prepare refuses: the sandbox is built for Linux only.
func Prepare(p *Policy) (proxyListener *os.File, mechanisms []string, err error) {
	return nil, nil, unavailable()
}

// Confine refuses: the sandbox is built for Linux only.
func Confine(p *Policy) (notifyFD int, mechanisms []string, landlockABI int, err error) {
	return -1, nil, 0, unavailable()
}

// Gate refuses: the sandbox is built for Linux only.
func Gate(ctx context.Context, notifyFD int, p *Policy, pending *Pending) error { return unavailable() }
