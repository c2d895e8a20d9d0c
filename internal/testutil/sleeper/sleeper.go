// Package sleeper starts, for tests, a process that waits a minute and is
// killed and reaped when the test ends: a live process of the test's own
// to read, signal or leave alone. It imports nothing of corral, so that
// the tests of any package, internal/procfs's included, can use it.
package sleeper

import (
	"os/exec"
	"testing"
)

// Start starts `sleep 60` as a child of the test process; the test's
// cleanup kills it by its pid, which the test holds until it reaps it.
func Start(t testing.TB) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
	})
	return c
}
