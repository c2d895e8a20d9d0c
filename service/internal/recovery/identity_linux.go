package recovery

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/corralrun/corral/internal/cgroup"
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

// FindLeaf returns the cgroup leaf that proc created for the run labelled
// label ("exec-ID"), or "" when there is none: it closes the window in
// which a worker died after starting a run but before recording its
// handle.
func FindLeaf(label string) string {
	root, err := cgroup.Detect()
	if err != nil {
		return ""
	}
	ents, err := os.ReadDir(root.Dir)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasSuffix(e.Name(), "-"+label) {
			return filepath.Join(root.Dir, e.Name())
		}
	}
	return ""
}
