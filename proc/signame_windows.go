package proc

import (
	"strconv"
	"syscall"
)

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGABRT: "SIGABRT",
}

// SignalName returns the conventional name of sig, such as "SIGKILL".
func SignalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// ParseSignal parses a signal name ("TERM", "SIGTERM") or number.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return syscall.Signal(n), nil
	}
	for sig, name := range signalNames {
		if name == s || name == "SIG"+s {
			return sig, nil
		}
	}
	return 0, errUnknownSignal(s)
}
