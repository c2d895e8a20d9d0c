//go:build !mutation_slotcount

package sqlstore

import "context"

// countSlots is how many slots agent holds, as admission and promotion
// compare it with the agent's max_parallel_tasks.
func countSlots(ctx context.Context, ex Executor, agent string) (int, error) {
	var n int
	err := ex.QueryRow(ctx, `SELECT count(*) FROM corral_slots WHERE agent = $1`, agent).Scan(&n)
	return n, err
}
