//go:build mutation_guardcaps

// Mutant: a guarded root task keeps every capability (CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_MKNOD, ...).
// Guarantee: 8. no task reaches the service's secrets: it cannot undo the guard
// Caught: ./proc TestGuardKeepsTheRunFromItsSupervisorsSecrets
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/env
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/file

package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// guardCapabilityMask, mutated for the CI's mutation step
// (.ci/mutations): every capability the kernel knows. Built only with the
// tag mutation_guardcaps.
func guardCapabilityMask() uint64 {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	return 1<<(last+1) - 1
}
