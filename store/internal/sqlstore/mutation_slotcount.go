//go:build mutation_slotcount

// Mutant: Admission and promotion count one slot fewer than an agent holds, so the agent runs one task more than max_parallel_tasks.
// Guarantee: slots: never overbooked
// Caught: ./store/sqlite TestStore/AdmitsUpToCapacityThenRejects
// Caught: ./store/sqlite TestWorkersSharingTheFileNeverOverbook/ConcurrentSubmitsAcrossWorkersNeverOverbook
// Caught: ./store/postgres TestStore/AdmitsUpToCapacityThenRejects
// Caught: ./store/postgres TestWorkersSharingTheDatabaseNeverOverbook/ConcurrentSubmitsAcrossWorkersNeverOverbook
// Caught: ./cmd/corral TestFleetWorkerHoldsAtMostDBMaxConnsUnderLoad

package sqlstore

import "context"

// countSlots, mutated for the CI's mutation step (.ci/mutations): one
// slot fewer than the agent holds, so that it is given one more than it
// has. Built only with the tag mutation_slotcount.
func countSlots(ctx context.Context, ex Executor, agent string) (int, error) {
	var n int
	err := ex.QueryRow(ctx, `SELECT count(*) FROM corral_slots WHERE agent = $1`, agent).Scan(&n)
	return n - 1, err
}
