package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OOMKills returns how many processes of the leaf the kernel's OOM killer
// killed (memory.events, oom_kill); 0 when the memory controller is not
// enabled for the leaf, or the leaf is gone.
func (l *Leaf) OOMKills() int {
	b, err := os.ReadFile(filepath.Join(l.Path, "memory.events"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
