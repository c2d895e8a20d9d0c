//go:build linux

// Package gone makes, for tests, a process that has ended: what the
// directories of a dead supervisor are named for. It is apart from
// internal/testutil, which the tests of internal/cgroup cannot import
// (it imports internal/shim, which imports internal/cgroup).
package gone

import (
	"os/exec"
	"testing"

	"github.com/corralrun/corral/internal/procfs"
)

// Process starts a process, reads its stat, waits for it to end and
// returns that stat: a pid and start time that name no live process.
func Process(t testing.TB) procfs.Stat {
	t.Helper()
	p := exec.Command("true")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := procfs.ReadStat(p.Process.Pid)
	p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return st
}
