//go:build unix

package proc

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalName returns the conventional name of sig, such as "SIGKILL".
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// ParseSignal parses a signal name ("TERM", "SIGTERM") or number.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return syscall.Signal(n), nil
	}
	name := s
	if len(name) < 3 || name[:3] != "SIG" {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, errUnknownSignal(s)
}
