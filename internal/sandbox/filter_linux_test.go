//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runBPF interprets the instructions the filter uses, as the kernel would,
// on one system call.
func runBPF(t *testing.T, prog []unix.SockFilter, d seccompData) uint32 {
	t.Helper()
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&d)), unsafe.Sizeof(d))
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = binary.NativeEndian.Uint32(buf[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			a &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += int(map[bool]uint8{true: in.Jt, false: in.Jf}[a == in.K])
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += int(map[bool]uint8{true: in.Jt, false: in.Jf}[a&in.K != 0])
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

func TestFilterDecisions(t *testing.T) {
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	const allow, notify = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_USER_NOTIF
	call := func(nr uintptr, args ...uint64) seccompData {
		d := seccompData{Nr: int32(nr), Arch: auditArch}
		copy(d.Args[:], args)
		return d
	}
	type filterCase struct {
		name       string
		d          seccompData
		gate, free uint32 // with the gate, and with Landlock gating sockets
	}
	cases := []filterCase{
		{"read", call(unix.SYS_READ), allow, allow},
		{"another architecture", seccompData{Nr: unix.SYS_READ, Arch: unix.AUDIT_ARCH_I386}, unix.SECCOMP_RET_KILL_PROCESS, unix.SECCOMP_RET_KILL_PROCESS},
		{"clone3", call(unix.SYS_CLONE3), errno(unix.ENOSYS), errno(unix.ENOSYS)},
		{"io_uring_setup", call(unix.SYS_IO_URING_SETUP), errno(unix.ENOSYS), errno(unix.ENOSYS)},
		{"clone of a thread", call(unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_THREAD|unix.CLONE_FILES), allow, allow},
		{"clone with a new user namespace", call(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_NEWNS), errno(unix.EPERM), errno(unix.EPERM)},
		{"clone with high bits and a new user namespace", call(unix.SYS_CLONE, 1<<40|unix.CLONE_NEWUSER), errno(unix.EPERM), errno(unix.EPERM)},
		{"unshare of a user namespace", call(unix.SYS_UNSHARE, unix.CLONE_NEWUSER), errno(unix.EPERM), errno(unix.EPERM)},
		{"unshare of the file table", call(unix.SYS_UNSHARE, unix.CLONE_FILES), allow, allow},
		{"Unix stream socket", call(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), allow, allow},
		{"Unix seqpacket socket", call(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_SEQPACKET), allow, allow},
		{"Unix datagram socket", call(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK), errno(unix.EPERM), allow},
		{"Unix raw socket", call(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_RAW), errno(unix.EPERM), allow},
		{"Unix datagram pair", call(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_DGRAM), errno(unix.EPERM), allow},
		{"UDP socket", call(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM), allow, allow},
		{"connect", call(unix.SYS_CONNECT, 3), notify, allow},
		{"ioctl TCGETS", call(unix.SYS_IOCTL, 0, unix.TCGETS), allow, allow},
		{"ioctl TIOCSTI", call(unix.SYS_IOCTL, 0, unix.TIOCSTI), errno(unix.EPERM), errno(unix.EPERM)},
	}
	if x32Bit != 0 {
		cases = append(cases, filterCase{"x32 read", call(unix.SYS_READ | x32Bit), errno(unix.ENOSYS), errno(unix.ENOSYS)})
	}
	for _, nr := range deniedSyscalls {
		cases = append(cases, filterCase{fmt.Sprintf("system call %d", nr), call(uintptr(nr)), errno(unix.EPERM), errno(unix.EPERM)})
	}
	for _, gate := range []bool{true, false} {
		prog, err := buildFilter(gate)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			want := c.free
			if gate {
				want = c.gate
			}
			if got := runBPF(t, prog, c.d); got != want {
				t.Errorf("gate %v, %s: %#x, want %#x", gate, c.name, got, want)
			}
		}
	}
}
