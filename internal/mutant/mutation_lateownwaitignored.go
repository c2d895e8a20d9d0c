//go:build mutation_lateownwaitignored

// Mutant: the late look judges a process's time since the stop signal by the machine's CPU stall alone, where the machine has one, not by the process's own wait for a CPU.
// Guarantee: a command a shell starts as the stop signal lands is signalled again once it executes, however long it waited for a CPU (docs/proc.md, the late window)
// Caught: ./proc TestLateLookCountsTheProcesssOwnWait

package mutant

// LateOwnWaitIgnored, mutated: the late look judges a process's time since the stop signal by the machine's CPU stall alone, where the machine has one, not by the process's own wait for a CPU.
const LateOwnWaitIgnored = true
