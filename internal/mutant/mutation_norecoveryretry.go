//go:build mutation_norecoveryretry

// Mutant: a run that crash recovery records interrupted is not retried.
// Guarantee: 9. runs outlive their workers (recovery retries)
// Caught: ./cmd/corral TestKill9OfTheWorkerRetriesTheRunOnce/sqlite
// Caught: ./cmd/corral TestKill9OfTheWorkerRetriesTheRunOnce/postgres-fleet

package mutant

// NoRecoveryRetry records recovered runs without their agent's policy.
const NoRecoveryRetry = true
