//go:build mutation_nodrain

// Mutant: corral serve's job engine lives as long as the signal that asks for a graceful stop, so SIGTERM interrupts every run at once.
// Guarantee: 9. runs outlive their workers (drain)
// Caught: ./cmd/corral TestServeDrainsOnSIGTERMWithTheDefaultTimeout
// Caught: ./cmd/corral TestFleetRollingRestartLosesAndDuplicatesNothing

package mutant

// NoDrain starts the job engine on the context given to Start.
const NoDrain = true
