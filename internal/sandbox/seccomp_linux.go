package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The user-notification structures of <linux/seccomp.h>; Probe checks
// their sizes against the kernel's (SECCOMP_GET_NOTIF_SIZES).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// seccompIoctlNotifIDValid is SECCOMP_IOCTL_NOTIF_ID_VALID as Linux 5.17
// defines it (_IOW); older kernels know only the _IOR number below, which
// newer ones still accept.
const (
	seccompIoctlNotifIDValid    = 0x40082102
	seccompIoctlNotifIDValidOld = 0x80082102
)

// installFilter applies prog to the calling thread. With listener it asks
// for a notification descriptor (returned) and, where the kernel has it
// (5.19), for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: once the gate has
// received a notification, only a fatal signal interrupts the command's
// call, so a connection the gate made on its behalf is never lost to a
// restarted system call.
func installFilter(prog []unix.SockFilter, listener bool) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := uintptr(0)
	if listener {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
	}
	for {
		fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		if errno == unix.EINVAL && flags&unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0 {
			flags &^= unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
			continue
		}
		if errno != 0 {
			return -1, fmt.Errorf("seccomp filter: %w", errno)
		}
		if !listener {
			return -1, nil
		}
		return int(fd), nil
	}
}
