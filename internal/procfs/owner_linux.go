package procfs

import (
	"errors"
	"syscall"
)

// PIDNamespace returns the inode of this process's pid namespace, which
// tells whether a pid recorded by another process names the same process
// here; 0 when it cannot be read.
func PIDNamespace() uint64 {
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
}

// Ended reports whether the process pid that started at start (Stat.Start)
// has ended: no process has the pid, or one that started at another time
// (the pid was reused), or it is a zombie. A process that cannot be told
// about has not ended.
func Ended(pid int, start uint64) bool {
	st, err := ReadStat(pid)
	switch {
	case errors.Is(err, ErrGone):
		return true
	case err != nil:
		return false
	}
	return st.Start != start || st.Zombie()
}
