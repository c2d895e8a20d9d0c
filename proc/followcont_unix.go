//go:build unix

package proc

import "golang.org/x/sys/unix"

// followWithCont says whether a signal sent to the tree is followed by
// SIGCONT, so that stopped processes act on it: every signal but SIGKILL
// (which needs none), SIGCONT itself and the stop signals, which SIGCONT
// would undo.
func followWithCont(sig unix.Signal) bool {
	switch sig {
	case unix.SIGKILL, unix.SIGCONT, unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return false
	}
	return true
}
