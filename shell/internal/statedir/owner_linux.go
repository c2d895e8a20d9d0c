package statedir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/corralrun/corral/internal/procfs"
)

// current names this process.
func current() owner {
	o := owner{ns: pidNamespace(), pid: os.Getpid()}
	if st, err := procfs.ReadStat(o.pid); err == nil {
		o.start = st.Start
	}
	return o
}

// pidNamespace returns the inode of this process's pid namespace.
func pidNamespace() uint64 {
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
}

// gone reports whether o's process has ended: no process has its pid, or
// the one that has it started at another time (the pid was reused), or it
// is a zombie. A process that cannot be told about is not gone.
func gone(o owner) bool {
	st, err := procfs.ReadStat(o.pid)
	switch {
	case errors.Is(err, procfs.ErrGone):
		return true
	case err != nil:
		return false
	}
	return st.Start != o.start || st.Zombie()
}

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// readStart returns the start time of process pid.
func readStart(pid int) (uint64, error) {
	st, err := procfs.ReadStat(pid)
	return st.Start, err
}
