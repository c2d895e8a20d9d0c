//go:build amd64 || arm64

package shim

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelSigaction is the kernel's struct sigaction of rt_sigaction on
// amd64 and arm64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// ignoreInKernel has the kernel ignore sigs, behind the Go runtime's back,
// and reports whether it did. The runtime installed its own handler for
// each at start and still counts it as its own: a fork of this program
// (syscall.ForkExec) sets it back to the default in the child, as for any
// signal the runtime handles, so the command does not inherit the
// ignoring (an ignore through os/signal it would). The signals must be
// ones the runtime installs a handler for at start (not TTIN or TTOU, not
// INT or HUP inherited ignored), and this process must never need the
// runtime to see them: a SIGPIPE of a write to its own stdout or stderr
// would still end it (its stdio is the null device).
func ignoreInKernel(sigs ...syscall.Signal) bool {
	for _, s := range sigs {
		sa := kernelSigaction{handler: 1} // SIG_IGN
		if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0); e != 0 {
			return false
		}
	}
	return true
}
