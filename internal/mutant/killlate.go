//go:build !mutation_killlate

package mutant

// KillLate, when true, sends SIGKILL 200 ms after the grace has ended.
const KillLate = false
