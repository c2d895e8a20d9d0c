//go:build mutation_killedtwice

// Mutant: a process killed by the freeze and still dying at the last look
// is killed and counted again: the run's init reports more processes
// killed than the command left.
// Guarantee: 2. exact trees (Result.Killed counts each process once)
// Caught: ./internal/procfs TestFreezeKillCountsEachProcessOnce

package mutant

// KilledTwice, mutated: counted again.
const KilledTwice = true
