package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// UnprivilegedEnv is set in the environment of a test binary that
// RunAsNobody started: the test runs as nobody, on behalf of the root test.
const UnprivilegedEnv = "CORRAL_TEST_AS_NOBODY"

// AsNobody reports whether this test binary was started by RunAsNobody.
func AsNobody() bool { return os.Getenv(UnprivilegedEnv) == "1" }

// RunAsNobody runs the tests that match pattern in a copy of this test
// binary as the user nobody, and fails t if they fail. The copy lives in a
// directory every user can read; the tests get TMPDIR=/tmp and, in
// UnprivilegedEnv, a way to know. It skips t, saying why, unless this
// process is root and nobody exists.
func RunAsNobody(t *testing.T, pattern string, env ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the unprivileged run needs root to become nobody; run the tests as root (CI does)")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("SKIP: the unprivileged run needs the user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "corral-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", pattern, "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd.Dir = "/"
	cmd.Env = append([]string{UnprivilegedEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=/tmp", "LANG=C.UTF-8"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || !strings.Contains(out.String(), "\nPASS\n") || !strings.Contains(out.String(), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out.String())
	}
	t.Logf("as nobody:\n%s", out.String())
}
