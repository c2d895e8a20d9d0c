//go:build !mutation_slotrelease

package sqlstore

import (
	"context"

	"github.com/corralrun/corral/store"
)

// releaseSlot frees the slot e holds, and only that one: never another
// run's of the same agent.
func releaseSlot[TTx any](ctx context.Context, tx Tx[TTx], e *store.Run) error {
	_, err := tx.Exec(ctx, `DELETE FROM corral_slots WHERE execution_id = $1`, e.ID)
	return err
}
