package servetest

import (
	"os/exec"
	"testing"
)

// runAs cannot switch users on Windows: it fails the test.
func runAs(t testing.TB, cmd *exec.Cmd, u *User) {
	t.Fatal("servetest: Options.User is not supported on Windows")
}
