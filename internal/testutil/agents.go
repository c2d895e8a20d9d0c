package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/corralrun/corral/internal/fakemodel"
)

// RealAgent is a real agent CLI pointed at a fake model: its command line
// (the prompt last) and its whole environment, with a home of its own in
// the test's temporary directory. Run it with a clean environment.
type RealAgent struct {
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
	a := newRealAgent(t, NPMBin(t, "claude"))
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
	a := newRealAgent(t, NPMBin(t, "codex"))
	codexHome := filepath.Join(a.Home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	a.Args = append(a.Args, "exec", "--json", "--skip-git-repo-check")
	a.Args = append(append(append(a.Args, srv.CodexArgs()...), extra...), prompt)
	a.Env = append(append(a.Env, "CODEX_HOME="+codexHome), srv.CodexEnv()...)
	return a
}

func newRealAgent(t testing.TB, bin string) RealAgent {
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
		Args: []string{bin},
		Env:  []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8"},
		Home: home,
	}
}
