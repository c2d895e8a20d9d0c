package proc

import (
	"os/signal"
	"syscall"
)

// ignoredSignals lists the signals this process ignores (os/signal's
// Ignored: those it was started with ignored and the runtime kept, SIGHUP
// and SIGINT, and those signal.Ignore set), which a command started through
// an init inherits ignored, as a direct child of this process does. The
// Go runtime's own signals (SIGURG, SIGPROF, 32, 33) are never ignored.
// SIGHUP and SIGINT are read from the kernel too: once ignored, os/signal
// gives them back to the kernel ignored when the last Notify of them stops
// (signal.NotifyContext's stop, under nohup), and Ignored no longer says
// so, while a direct child still starts with them ignored.
func ignoredSignals() []int {
	var out []int
	for s := syscall.Signal(1); s <= sigRTMax; s++ {
		if s == syscall.SIGKILL || s == syscall.SIGSTOP || s == syscall.SIGURG || s == syscall.SIGPROF || s == 32 || s == 33 {
			continue
		}
		if signal.Ignored(s) || (s == syscall.SIGHUP || s == syscall.SIGINT) && kernelIgnores(s) {
			out = append(out, int(s))
		}
	}
	return out
}
