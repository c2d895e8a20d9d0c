//go:build unix && !linux

package proc

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// signalOutside signals the command's group, which is the tree here,
// unless it is pgid.
func (c *bsdChild) signalOutside(sig syscall.Signal, pgid int) []procKey {
	if c.pid == pgid {
		return nil
	}
	return c.signalTree(unix.Signal(sig))
}
