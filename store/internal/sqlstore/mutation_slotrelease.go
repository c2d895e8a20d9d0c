//go:build mutation_slotrelease

package sqlstore

import (
	"context"

	"github.com/corralrun/corral/store"
)

// releaseSlot, mutated for the CI's mutation step (.ci/mutations): a
// finished run frees no slot, so queued work never starts. The storage
// suite's engine and release tests must catch it. Built only with the tag
// mutation_slotrelease.
func releaseSlot[TTx any](ctx context.Context, tx Tx[TTx], e *store.Execution) error {
	return nil
}
