//go:build !mutation_norecoveryretry

package mutant

// NoRecoveryRetry: see mutation_norecoveryretry.go.
const NoRecoveryRetry = false
