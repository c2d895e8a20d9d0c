package testutil

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corralrun/corral/internal/fakemodel"
)

// RealAgent is a real agent CLI pointed at a fake model: its command line
// (the prompt last) and its whole environment, with a home of its own in
// the test's temporary directory. Run it with a clean environment.
type RealAgent struct {
	// Name is "claude" or "codex".
	Name string
	Args []string
	Env  []string
	// Home is the agent's HOME; Claude Code keeps its state in Home/.claude,
	// Codex in Home/.codex (its CODEX_HOME).
	Home string
}

// Claude returns Claude Code (the pinned npm install, or a skip) set up to
// run one prompt against srv in stream-json with bypassPermissions, extra
// flags before the prompt. As root, Claude Code refuses bypassPermissions
// unless IS_SANDBOX=1, which the environment then has.
func Claude(t testing.TB, srv *fakemodel.Server, prompt string, extra ...string) RealAgent {
	t.Helper()
	a := newRealAgent(t, "claude", NPMBin(t, "claude"))
	a.Args = append(a.Args, "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	a.Args = append(append(a.Args, extra...), "--", prompt)
	a.Env = append(a.Env, srv.ClaudeEnv()...)
	if os.Geteuid() == 0 {
		a.Env = append(a.Env, "IS_SANDBOX=1")
	}
	return a
}

// Codex returns Codex (the pinned npm install, or a skip) set up to run one
// prompt against srv with `codex exec --json`, outside a git repository,
// extra flags before the prompt.
func Codex(t testing.TB, srv *fakemodel.Server, prompt string, extra ...string) RealAgent {
	t.Helper()
	a := newRealAgent(t, "codex", NPMBin(t, "codex"))
	codexHome := filepath.Join(a.Home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	a.Args = append(a.Args, "exec", "--json", "--skip-git-repo-check")
	a.Args = append(append(append(a.Args, srv.CodexArgs()...), extra...), prompt)
	a.Env = append(append(a.Env, "CODEX_HOME="+codexHome), srv.CodexEnv()...)
	return a
}

func newRealAgent(t testing.TB, name, bin string) RealAgent {
	t.Helper()
	dir := t.TempDir()
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		path = filepath.Dir(node) + ":" + path // codex is a node script
	}
	return RealAgent{
		Name: name,
		Args: []string{bin},
		Env:  []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8"},
		Home: home,
	}
}

// ForSandbox readies the agent to run under a corral sandbox, whose /tmp is
// private: its home moves to home (which must not be under /tmp), TMPDIR
// goes (the private /tmp serves), and Claude Code keeps all its state,
// .claude.json included, in home/.claude (CLAUDE_CONFIG_DIR). It returns
// the directory the agent writes its state to, created, for the sandbox's
// writable roots.
func (a *RealAgent) ForSandbox(home string) (state string) {
	state = filepath.Join(home, ".claude")
	if a.Name == "codex" {
		state = filepath.Join(home, ".codex")
	}
	os.MkdirAll(state, 0o700)
	var env []string
	for _, kv := range a.Env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="):
		case strings.HasPrefix(kv, "HOME="):
			env = append(env, "HOME="+home)
		case strings.HasPrefix(kv, "CODEX_HOME="):
			env = append(env, "CODEX_HOME="+state)
		default:
			env = append(env, kv)
		}
	}
	if a.Name == "claude" {
		env = append(env, "CLAUDE_CONFIG_DIR="+state)
	}
	a.Env, a.Home = env, home
	return state
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
