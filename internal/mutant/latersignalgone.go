//go:build !mutation_latersignalgone

package mutant

// LaterSignalGone, when true: a process that died of the first of a run of signals (SIGTERM, then SIGCONT) and was reaped before the next is reported as never signalled.
const LaterSignalGone = false
