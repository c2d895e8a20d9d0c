//go:build unix && !linux

package statedir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// current names this process; its start time is not known here.
func current() owner { return owner{pid: os.Getpid()} }

// gone reports whether no process has o's pid. A reused pid passes for
// the owner, so its state stays: never removed while its owner lives.
func gone(o owner) bool {
	return errors.Is(syscall.Kill(o.pid, 0), syscall.ESRCH)
}

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
