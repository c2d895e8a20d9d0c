package shell

import (
	"os"
	"sync"

	"github.com/corralrun/corral/shell/internal/statedir"
)

// The names of the directories a Tool and its sessions make: a session's
// state files (in stateDir, or sandboxStateDir under a sandbox) and the
// Tool's full outputs and job logs (in the temporary directory, unless
// Tool.SpillDir says otherwise). Each is private to its user, named for
// the process that owns it, removed when its Tool or Session closes, and
// reaped by the first Tool of a later process once its owner is gone (see
// statedir): a killed corral leaves no session snapshot, with its exported
// secrets, nor job log behind for long.
const (
	sessionPrefix = "corral-session-"
	spillPrefix   = "corral-shell-"
)

var reapOnce sync.Once

// ReapStale removes, once per process, the session state and output
// directories that corral processes of this user left when they were
// killed, and never those of a process still running. The first Tool of a
// process to run anything calls it; a server calls it at start, so that
// a restart after a SIGKILL cleans up at once.
func ReapStale() { reapOnce.Do(reapDead) }

// reapDead removes the state directories of processes that are gone.
func reapDead() {
	statedir.Reap(stateDir(), sessionPrefix)
	if shm := shmStateDir(); shm != "" && shm != stateDir() {
		statedir.Reap(shm, sessionPrefix)
	}
	statedir.Reap(os.TempDir(), spillPrefix)
	if base, err := sandboxStateBase(); err == nil {
		statedir.Reap(base, sessionPrefix)
	}
}
