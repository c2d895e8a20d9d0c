//go:build mutation_slotrelease

// Mutant: A finished run frees no capacity slot, so queued work never starts.
// Guarantee: slots: released for the run
// Caught: ./store/sqlite TestStore/FinishReleasesOnlyItsOwnSlot
// Caught: ./store/sqlite TestStore/QueueIsFIFOAndPromotedOnFinish
// Caught: ./store/postgres TestStore/FinishReleasesOnlyItsOwnSlot
// Caught: ./store/postgres TestStore/QueueIsFIFOAndPromotedOnFinish

package sqlstore

import (
	"context"

	"github.com/corralrun/corral/store"
)

// releaseSlot, mutated for the CI's mutation step (.ci/mutations): a
// finished run frees no slot, so queued work never starts. The storage
// suite's engine and release tests must catch it. Built only with the tag
// mutation_slotrelease.
func releaseSlot[TTx any](ctx context.Context, tx Tx[TTx], e *store.Run) error {
	return nil
}
