//go:build linux && (amd64 || arm64)

package sandbox

import (
	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data: nr (int), arch (u32), instruction
// pointer (u64), then six u64 arguments. Both supported architectures are
// little-endian, so an argument's low 32 bits come first.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func offArg(i uint32) uint32 { return offArg0 + 8*i }

// deniedSyscalls fail with EPERM: each opens kernel attack surface that an
// unprivileged command has no need of, or an escape from the view.
var deniedSyscalls = []uint32{
	// The kernel's BPF and perf subsystems, and its keyrings, which are not
	// namespaced: a key added inside would be visible to the host's user.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	// The mount family: the view is built; nothing inside changes it.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
	unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOVE_MOUNT,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOUNT_SETATTR,
}

// enosysSyscalls fail with ENOSYS, which programs take for "this kernel
// does not have it" and fall back from: clone3 (its flags are in memory the
// filter cannot read, so it could create a user namespace; libc then uses
// clone) and io_uring (whose requests bypass the filter entirely).
var enosysSyscalls = []uint32{
	unix.SYS_CLONE3,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}

// buildFilter returns the command's seccomp filter. With gate, connect()
// is handed to the supervisor (SECCOMP_RET_USER_NOTIF) and Unix datagram
// sockets are refused: a datagram names its destination in each sendto or
// sendmsg, which the gate does not see. Without gate (Landlock controls
// pathname sockets itself) both are left to Landlock.
func buildFilter(gate bool) ([]unix.SockFilter, error) {
	var b bpfProg
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }

	// Another architecture's system call numbers mean other calls: a task
	// that switches ABI (int 0x80 on amd64, a 32-bit ARM binary) is killed.
	b.load(offArch)
	b.jeq(auditArch, "", "kill")
	b.load(offNr)
	if x32Bit != 0 {
		b.jset(x32Bit, "enosys", "")
	}
	for _, nr := range enosysSyscalls {
		b.jeq(nr, "enosys", "")
	}
	for _, nr := range deniedSyscalls {
		b.jeq(nr, "eperm", "")
	}
	b.jeq(unix.SYS_CLONE, "clone", "")
	b.jeq(unix.SYS_UNSHARE, "clone", "")
	b.jeq(unix.SYS_IOCTL, "ioctl", "")
	if gate {
		b.jeq(unix.SYS_SOCKET, "socket", "")
		b.jeq(unix.SYS_SOCKETPAIR, "socket", "")
		b.jeq(unix.SYS_CONNECT, "notify", "")
	}
	b.jump("allow")

	// clone and unshare: no new user namespace. The flags are the first
	// argument of both, and CLONE_NEWUSER lies in its low word.
	b.label("clone")
	b.load(offArg(0))
	b.jset(unix.CLONE_NEWUSER, "eperm", "allow")

	// ioctl: no TIOCSTI (push input into a terminal the command shares with
	// a shell outside) and no TIOCLINUX (its selection paste does the same).
	b.label("ioctl")
	b.load(offArg(1))
	b.jeq(unix.TIOCSTI, "eperm", "")
	b.jeq(unix.TIOCLINUX, "eperm", "allow")

	if gate {
		// socket and socketpair: AF_UNIX only as SOCK_STREAM or
		// SOCK_SEQPACKET, whose peers are reached through connect. The
		// kernel makes SOCK_RAW a datagram socket, so every other type is
		// refused, not just SOCK_DGRAM.
		b.label("socket")
		b.load(offArg(0))
		b.jeq(unix.AF_UNIX, "", "allow")
		b.load(offArg(1))
		b.and(0xf) // SOCK_TYPE_MASK: drops SOCK_NONBLOCK and SOCK_CLOEXEC
		b.jeq(unix.SOCK_STREAM, "allow", "")
		b.jeq(unix.SOCK_SEQPACKET, "allow", "eperm")

		b.label("notify")
		b.ret(unix.SECCOMP_RET_USER_NOTIF)
	}

	b.label("allow")
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("eperm")
	b.ret(errno(unix.EPERM))
	b.label("enosys")
	b.ret(errno(unix.ENOSYS))
	b.label("kill")
	b.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return b.assemble()
}
