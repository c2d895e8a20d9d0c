package proc

import (
	"strconv"
	"syscall"
)

// signalNames holds the signals the syscall package defines on Windows,
// with their Unix numbers. Windows has no signals: corral sends SIGINT and
// SIGTERM to a tree as CTRL_BREAK_EVENT and ends a process for any other
// by terminating it with exit code 128+number.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
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
