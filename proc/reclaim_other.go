//go:build !linux

package proc

import (
	"context"
	"fmt"
)

// On Windows a Job Object with kill-on-close dies with its supervisor, so
// nothing is left to reclaim; on other systems the process group is all
// there is, and it is killed if it still exists. A pid of 1 or less would
// name every process (kill(-1)) or none: it is refused.
func reclaim(ctx context.Context, h Handle) (int, error) {
	if h.Pid <= 1 {
		return 0, fmt.Errorf("proc: reclaim: handle has no usable pid (%d)", h.Pid)
	}
	return reclaimGroup(h.Pid)
}

func findLabelled(string) (Handle, bool) { return Handle{}, false }
