package sandbox

import "golang.org/x/sys/unix"

// auditArch is the AUDIT_ARCH_* value of the native system call ABI, which
// the seccomp filter requires before it looks at a system call number.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the system calls of the x32 ABI, which share
// AUDIT_ARCH_X86_64 with the native ones: the filter refuses them all.
const x32Bit = 0x40000000
