package proc

import (
	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
)

// initTree is the tree below an init: its descendants, exactly, since the
// init is a subreaper or pid 1 of a namespace of its own. With pgid, it is
// only those of the process group pgid (the process-group tier), and the
// group is signalled as a whole.
type initTree struct {
	root int
	pgid int
}

func (t *initTree) members() []procKey {
	// A walk is not a snapshot: an empty answer is trusted only when a
	// second walk agrees.
	for i := 0; i < 2; i++ {
		var out []procKey
		for _, st := range procfs.Descendants(t.root) {
			if !st.Zombie() && (t.pgid == 0 || st.Pgid == t.pgid) {
				out = append(out, procKey{pid: st.Pid, start: st.Start})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func (t *initTree) signalMember(k procKey, sigs ...unix.Signal) error {
	return procfs.Signal(k.pid, k.start, sigs...)
}

func (t *initTree) kill() []procKey {
	// Only the group, with a pgid (the process-group tier); everything
	// below the init otherwise.
	return keysOf(procfs.FreezeKill(func() []procfs.Stat {
		var out []procfs.Stat
		for _, st := range procfs.Descendants(t.root) {
			if t.pgid == 0 || st.Pgid == t.pgid {
				out = append(out, st)
			}
		}
		return out
	}))
}

func (t *initTree) claim(*reaper.Zombie) bool { return false }
func (t *initTree) release(bool) func() bool  { return nil }
func (t *initTree) cgroupPath() string        { return "" }
