//go:build unix && !linux

package proc

import "golang.org/x/sys/unix"

// reclaimGroup kills the process group the run's main process led. Without
// start times the group id is all there is to go on.
func reclaimGroup(pgid int) (int, error) {
	if err := unix.Kill(-pgid, unix.SIGKILL); err != nil {
		return 0, nil
	}
	return 1, nil
}
