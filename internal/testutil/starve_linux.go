package testutil

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// Starve keeps every CPU of the machine busy until the test ends, with a
// busy loop per CPU at nice 19 (so that the machine's other work keeps
// running): the test's own processes then wait for a CPU whenever the
// loops hold one. The loops carry the test's tag and are killed and
// reaped, by their pids, when the test ends.
func Starve(t testing.TB) {
	t.Helper()
	tag := Tag(t)
	var loops []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range loops {
			c.Process.Kill()
			c.Wait()
		}
	})
	for range runtime.NumCPU() {
		c := exec.Command("sh", "-c", "while :; do :; done")
		c.Env = append(os.Environ(), TagEnvVar(tag))
		if err := c.Start(); err != nil {
			t.Fatalf("starting a busy loop: %v", err)
		}
		loops = append(loops, c)
		if err := unix.Setpriority(unix.PRIO_PROCESS, c.Process.Pid, 19); err != nil {
			t.Fatalf("nice 19 for a busy loop: %v", err)
		}
	}
}
