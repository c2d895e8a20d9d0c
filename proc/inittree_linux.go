package proc

import (
	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/shim"
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

func (t *initTree) signal(sig unix.Signal) []procKey {
	var out []procKey
	for _, k := range t.members() {
		if procfs.Signal(k.pid, k.start, sig) == nil {
			out = append(out, k)
		}
	}
	return out
}

func (t *initTree) signalMember(k procKey, sig unix.Signal) error {
	return procfs.Signal(k.pid, k.start, sig)
}

func (t *initTree) kill() []procKey {
	var out []procKey
	if t.pgid != 0 {
		// Only the group: freeze it with SIGSTOP until no new member
		// appears, then kill the members.
		stopped := map[procKey]bool{}
		for round := 0; round < 64; round++ {
			fresh := 0
			for _, k := range t.members() {
				if !stopped[k] && procfs.Signal(k.pid, k.start, unix.SIGSTOP) == nil {
					stopped[k] = true
					fresh++
				}
			}
			if fresh == 0 {
				break
			}
		}
		for k := range stopped {
			if procfs.Signal(k.pid, k.start, unix.SIGKILL) == nil {
				out = append(out, k)
			}
		}
		return out
	}
	for _, st := range shim.KillDescendants(t.root) {
		out = append(out, procKey{pid: st.Pid, start: st.Start})
	}
	return out
}

func (t *initTree) claim(*reaper.Zombie) bool { return false }
func (t *initTree) release(bool) func() bool  { return nil }
func (t *initTree) cgroupPath() string        { return "" }
