package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

// TestLandlockAloneKeepsWritesInTheRoots: Landlock is a wall of its own.
// A command forked from a thread confined by the policy's Landlock rules
// alone (no namespace, no read-only mount, on the host's file system)
// writes its writable root and /dev/null, and neither a sibling directory
// of the root nor the root's parent, which the host's user may write:
// every refusal is Landlock's. The full sandbox tests cannot tell, since
// the read-only mounts refuse the same writes.
func TestLandlockAloneKeepsWritesInTheRoots(t *testing.T) {
	forEachUser(t, func(t *testing.T) {
		needSandbox(t)
		parent := hostDir(t)
		root, outside := filepath.Join(parent, "root"), filepath.Join(parent, "outside")
		for _, d := range []string{root, outside} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// Unconfined, this user writes all three.
		for _, d := range []string{root, outside, parent} {
			probe := filepath.Join(d, ".probe")
			if err := os.WriteFile(probe, nil, 0o644); err != nil {
				t.Fatalf("the host's user cannot write %s: %v", d, err)
			}
			os.Remove(probe)
		}
		p := &sandbox.Policy{Mode: corral.SandboxWorkspace, Workdir: root}
		script := `echo in > "$1/inside" && echo wrote-inside
echo out 2>/dev/null > "$2/outside" && echo WROTE-OUTSIDE
echo up 2>/dev/null > "$3/parent" && echo WROTE-PARENT
mkdir "$2/dir" 2>/dev/null && echo MADE-DIR-OUTSIDE
echo x > /dev/null && echo wrote-devnull`
		out, err := landlockOnly(t, p, "/bin/sh", "-c", script, "sh", root, outside, parent)
		t.Logf("under Landlock alone:\n%s", out)
		if err != nil {
			t.Fatalf("the confined command: %v", err)
		}
		if !strings.Contains(out, "wrote-inside") || !strings.Contains(out, "wrote-devnull") {
			t.Fatalf("the writable root or /dev/null refused a write:\n%s", out)
		}
		for _, leak := range []string{outside + "/outside", parent + "/parent", outside + "/dir"} {
			if _, err := os.Lstat(leak); err == nil {
				t.Errorf("Landlock let the command write %s, outside its writable root", leak)
			}
		}
	})
}

// landlockOnly runs name with args from a new thread confined by p's
// Landlock rules alone, and returns its output. The thread ends with the
// goroutine (it is never unlocked), so the test binary keeps no confined
// thread.
func landlockOnly(t *testing.T, p *sandbox.Policy, name string, args ...string) (string, error) {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if err := sandbox.ConfineLandlockOnly(p); err != nil {
			done <- result{nil, err}
			return
		}
		cmd := exec.Command(name, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
		out, err := cmd.CombinedOutput()
		done <- result{out, err}
	}()
	r := <-done
	return string(r.out), r.err
}
