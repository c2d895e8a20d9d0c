//go:build unix && !linux

package proc

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// reclaimGroup sends SIGKILL to process group pgid, the one the run's main
// process led, if it still exists. Without a start time recorded for the
// group's leader nothing proves the group is still the run's (see the
// package documentation). It returns 1 when the group existed and was
// signalled (how many processes it held cannot be told here), 0 when
// there was none.
func reclaimGroup(pgid int) (int, error) {
	switch err := unix.Kill(-pgid, unix.SIGKILL); {
	case err == nil:
		return 1, nil
	case errors.Is(err, unix.ESRCH):
		return 0, nil
	default:
		return 0, fmt.Errorf("proc: reclaim: process group %d: %w (it exists but may not be signalled by this user: reclaim as the user the run had)", pgid, err)
	}
}
