//go:build mutation_exitingsignalled

// Mutant: a process already in the kernel's exit (it closed its pipes as
// it exited) reads as alive, and a run's end signals it and counts it
// among those killed, though it was going by itself.
// Guarantee: 2. exact trees (Result.Killed counts what corral ended)
// Caught: ./internal/procfs TestFreezeKillLeavesWhatIsExiting

package mutant

// ExitingSignalled, mutated: read as alive.
const ExitingSignalled = true
