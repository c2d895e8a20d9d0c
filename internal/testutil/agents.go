package testutil

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/corralrun/corral/internal/fakemodel"
)

// RealAgent is a real agent CLI pointed at a fake model (see
// fakemodel.Agent). Run it with a clean environment: Env is all of it.
type RealAgent = fakemodel.Agent

// Claude returns Claude Code (the pinned npm install, or a skip) set up to
// run one prompt against srv, with a HOME and a TMPDIR of its own in the
// test's temporary directory (see fakemodel.Server.Claude).
func Claude(t testing.TB, srv *fakemodel.Server, prompt string, extra ...string) RealAgent {
	t.Helper()
	home, tmp := agentDirs(t)
	return srv.Claude(NPMBin(t, "claude"), home, tmp, prompt, extra...)
}

// Codex returns Codex (the pinned npm install, or a skip) set up to run one
// prompt against srv, with a HOME, a CODEX_HOME and a TMPDIR of its own in
// the test's temporary directory (see fakemodel.Server.Codex).
func Codex(t testing.TB, srv *fakemodel.Server, prompt string, extra ...string) RealAgent {
	t.Helper()
	home, tmp := agentDirs(t)
	return srv.Codex(NPMBin(t, "codex"), home, tmp, prompt, extra...)
}

func agentDirs(t testing.TB) (home, tmp string) {
	t.Helper()
	dir := t.TempDir()
	home, tmp = filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return home, tmp
}

// OutsideTmp returns a fresh directory that is not under /tmp (a sandbox
// hides the host's /tmp), removed when the test ends.
func OutsideTmp(t testing.TB) string {
	t.Helper()
	root, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("SKIP: no directory outside /tmp for a sandboxed run: %v", err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, "corral-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// HostAddr is an IPv4 address of this machine other than loopback, where
// there is one, else 127.0.0.1: inside a sandbox's network namespace,
// loopback is the sandbox's own, so a server the sandboxed run must reach
// through corral's proxy listens on this one.
func HostAddr() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return "127.0.0.1"
}
