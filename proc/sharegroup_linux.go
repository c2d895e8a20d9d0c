package proc

import (
	"errors"
	"fmt"

	"github.com/corralrun/corral"
)

// checkShareGroup refuses a shared group where it cannot be held: the
// process-group tier would have to signal the supervisor's own group, and
// a sandbox's init is the first process of namespaces of its own.
func checkShareGroup(a *spawnAttr, tier corral.Containment) error {
	if !a.shareGroup {
		return nil
	}
	if a.sandbox.Enabled() || a.enclosure != nil {
		return errors.New("proc: a sandboxed run cannot share the supervisor's process group (ShareGroup)")
	}
	if tier == corral.ContainmentProcessGroup {
		return fmt.Errorf("%w: the process-group tier cannot hold a run in the supervisor's own group (ShareGroup)", ErrTierUnavailable)
	}
	return nil
}
