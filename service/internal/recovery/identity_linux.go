package recovery

import (
	"os"
	"strings"

	"github.com/corralrun/corral/internal/procfs"
)

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidStart returns the start time of pid in clock ticks, or 0 when it is
// gone or a zombie.
func pidStart(pid int) uint64 {
	st, err := procfs.ReadStat(pid)
	if err != nil || st.Zombie() {
		return 0
	}
	return st.Start
}
