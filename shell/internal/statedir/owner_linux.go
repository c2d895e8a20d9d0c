package statedir

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/corralrun/corral/internal/procfs"
)

// current names this process.
func current() owner {
	o := owner{ns: procfs.PIDNamespace(), pid: os.Getpid()}
	if st, err := procfs.ReadStat(o.pid); err == nil {
		o.start = st.Start
	}
	return o
}

// gone reports whether o's process has ended (procfs.Ended).
func gone(o owner) bool { return procfs.Ended(o.pid, o.start) }

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// readStart returns the start time of process pid.
func readStart(pid int) (uint64, error) {
	st, err := procfs.ReadStat(pid)
	return st.Start, err
}
