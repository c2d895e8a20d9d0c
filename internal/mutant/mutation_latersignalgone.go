//go:build mutation_latersignalgone

// Mutant: a process that died of the first of a run of signals (SIGTERM, then SIGCONT) and was reaped before the next is reported as never signalled.
// Guarantee: Result.Killed counts every process corral's stop signal reached, however fast it died of it (docs/proc.md, what Killed counts)
// Caught: ./internal/procfs TestASignalThatKillsBeforeTheNextCounts

package mutant

// LaterSignalGone, mutated: a process that died of the first of a run of signals (SIGTERM, then SIGCONT) and was reaped before the next is reported as never signalled.
const LaterSignalGone = true
