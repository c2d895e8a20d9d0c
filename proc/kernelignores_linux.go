//go:build linux && !(mips || mipsle || mips64 || mips64le) && !mutation_hupignoreunseen

package proc

import (
	"syscall"
	"unsafe"
)

// kernelIgnores reports whether the kernel holds s ignored for this
// process (its action is SIG_IGN), which a child started now inherits,
// whatever os/signal's bookkeeping says.
func kernelIgnores(s syscall.Signal) bool {
	// The kernel's struct sigaction starts with the handler on every
	// Linux architecture but MIPS; the buffer is larger than any of them.
	var act [8]uint64
	const sigsetSize = 8
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), 0, uintptr(unsafe.Pointer(&act)), sigsetSize, 0, 0)
	return errno == 0 && *(*uintptr)(unsafe.Pointer(&act)) == 1 // SIG_IGN
}
