//go:build mutation_guardproc

// Mutant: a guarded root run's /proc/sys is writable (core_pattern, modprobe: what the kernel runs as root outside every namespace).
// Guarantee: 8. no task reaches the service's secrets: nothing runs outside the guard on its behalf
// Caught: ./proc TestGuardKeepsTheRunFromItsSupervisorsSecrets
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/env
// Caught: ./cmd/corral TestDefaultTaskCannotObtainTheServiceToken/file

package sandbox

// procReadOnly, mutated for the CI's mutation step (.ci/mutations):
// nothing of /proc is read-only. Built only with the tag
// mutation_guardproc.
var procReadOnly []string
