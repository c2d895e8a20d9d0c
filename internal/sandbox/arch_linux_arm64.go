package sandbox

import "golang.org/x/sys/unix"

// auditArch is the AUDIT_ARCH_* value of the native system call ABI, which
// the seccomp filter requires before it looks at a system call number.
// 32-bit ARM tasks (AUDIT_ARCH_ARM) are killed by the filter.
const auditArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is zero: arm64 has no second ABI sharing its AUDIT_ARCH value.
const x32Bit = 0
