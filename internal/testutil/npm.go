package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NPMDirEnv names the node_modules directory where .ci/run installs the
// pinned agent CLIs and MCP clients the end-to-end tests drive.
const NPMDirEnv = "CORRAL_NPM_DIR"

// NPMDir returns the node_modules directory holding the pinned npm tools:
// $CORRAL_NPM_DIR, else the cache .ci/run installs into. When neither
// holds a node_modules directory, or node is missing, it skips t, saying
// what is missing and how to install it.
func NPMDir(t testing.TB) string {
	t.Helper()
	dir, err := findNPMDir()
	if err != nil {
		t.Skip(err.Error())
	}
	return dir
}

// NPMBin returns the path of an executable of the pinned npm tools (such
// as "claude", "codex", "mcp-inspector"), or skips t naming it.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	p, err := FindNPMBin(name)
	if err != nil {
		t.Skip(err.Error())
	}
	return p
}

// FindNPMBin is NPMBin for programs without a test, such as the
// benchmarks: the error says what is missing and how to install it.
func FindNPMBin(name string) (string, error) {
	dir, err := findNPMDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, ".bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("SKIP: %s is not installed in %s: run .ci/run to install the pinned npm tools", name, filepath.Dir(dir))
	}
	return p, nil
}

func findNPMDir() (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("SKIP: node is not installed: the tests with real agent CLIs and MCP clients need Node.js and npm (apt-get install nodejs npm)")
	}
	dir := os.Getenv(NPMDirEnv)
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".cache", "corral-ci", "npm", "node_modules")
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("SKIP: no npm tools at %q: run .ci/run, which installs the pinned agent CLIs and MCP clients, or set %s", dir, NPMDirEnv)
	}
	return dir, nil
}
