//go:build !linux

package proc

import (
	"context"
	"errors"
)

// On Windows a Job Object with kill-on-close dies with its supervisor, so
// nothing is left to reclaim; on other systems the process group is all
// there is, and it is killed if it still exists.
func reclaim(ctx context.Context, h Handle) (int, error) {
	if h.Pid <= 0 {
		return 0, errors.New("proc: reclaim: handle has no pid")
	}
	return reclaimGroup(h.Pid)
}
