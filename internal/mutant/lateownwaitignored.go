//go:build !mutation_lateownwaitignored

package mutant

// LateOwnWaitIgnored, when true: the late look judges a process's time since the stop signal by the machine's CPU stall alone, where the machine has one, not by the process's own wait for a CPU.
const LateOwnWaitIgnored = false
