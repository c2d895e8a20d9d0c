//go:build mutation_noreap

// Mutant: the state of a killed corral is never reaped.
// Guarantee: 8. no secrets in state left on disk (session snapshots, job logs)
// Caught: ./shell/internal/statedir TestReapRemovesOnlyTheDeadOwnersState
// Caught: ./cmd/corral TestMCPKilledLeavesNoStateAfterTheNextStart

package statedir

// Reap, mutated for the CI's mutation step (.ci/mutations): it removes
// nothing. Built only with the tag mutation_noreap.
func Reap(base, prefix string) int { return 0 }
