package main

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dieBySignal ends this process by sig, as a process whose default action
// it takes, so that its parent sees the signal (WIFSIGNALED), as GNU
// timeout does when its command died of a signal it did not send. The Go
// runtime's handler is bypassed (it would print a stack for SIGQUIT, and
// ignore SIGUSR1): the action is reset to the default in the kernel, the
// signal unblocked on this thread and sent to it. Core dumps are turned
// off first. It returns only if sig's default action does not end a
// process.
func dieBySignal(sig syscall.Signal) {
	runtime.LockOSThread()
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	var act [8]uint64 // a zero struct sigaction, whatever its layout: SIG_DFL, no flags
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	set := uint64(1) << (uint(sig) - 1)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_UNBLOCK, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	runtime.UnlockOSThread()
}
