package servetest

import (
	"syscall"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/shim"
)

// Crash kills the service by its pid as a crash would, and first the
// processes that bind its runs' trees to it (its cgroup guardian, its runs'
// inits), as a crash that took them too would (a kill of the service's
// whole cgroup, the OOM killer): the trees then outlive it, for recovery
// to find.
func (s *Server) Crash() {
	kids, _ := procfs.Children(s.Cmd.Process.Pid)
	for _, k := range kids {
		// A Go shim carries its role in its environment; the native
		// guardian (internal/guardelf) has none, and names itself as every
		// shim does.
		st, err := procfs.ReadStat(k)
		if procfs.HasToken(k, shim.RoleEnv+"=") || err == nil && st.Comm == shim.Comm {
			syscall.Kill(k, syscall.SIGKILL)
		}
	}
	s.Kill9()
}
