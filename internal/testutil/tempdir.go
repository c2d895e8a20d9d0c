package testutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// IsolateTemp points TMPDIR and XDG_RUNTIME_DIR, for the test binary and
// every process it starts, at fresh directories: corral keeps full outputs
// and job logs in the first, and its sessions' state in the second when it
// is on a memory file system (made on /dev/shm where there is one).
// TestMain calls it first, and the returned function after m.Run: it
// reports the state directories (corral-session-*, corral-shell-*) that
// the suite left behind, which a session, a Tool or a server that ended,
// or a later start after a kill, must have removed, and removes both
// directories.
func IsolateTemp() (leftovers func() error) {
	var dirs []string
	set := func(name, base string, mode os.FileMode) {
		dir, err := os.MkdirTemp(base, "corral-suite-")
		if err != nil {
			return
		}
		dirs = append(dirs, dir)
		os.Chmod(dir, mode)
		os.Setenv(name, dir)
	}
	// Like /tmp, open to the other users that tests run commands as.
	set("TMPDIR", "", os.ModeSticky|0o777)
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		set("XDG_RUNTIME_DIR", "/dev/shm", 0o700)
	}
	return func() error {
		var left []string
		for _, dir := range dirs {
			for _, p := range []string{"corral-session-*", "corral-shell-*"} {
				m, _ := filepath.Glob(filepath.Join(dir, p))
				left = append(left, m...)
			}
			os.RemoveAll(dir)
		}
		if len(left) > 0 {
			return fmt.Errorf("the tests left %d state directories behind: %v", len(left), left)
		}
		return nil
	}
}
