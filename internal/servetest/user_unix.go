//go:build unix

package servetest

import (
	"os/exec"
	"syscall"
	"testing"
)

// runAs makes cmd start as u, with no supplementary groups.
func runAs(t testing.TB, cmd *exec.Cmd, u *User) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}}
}
