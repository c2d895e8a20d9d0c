package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/internal/testutil/gone"
)

// TestRunSweepsWhatADeadSupervisorLeft: a supervisor that is gone (its
// guardian too, so that nothing removed its cgroup directory) leaves the
// directory and an empty leaf in it; the corral commands that start after
// it remove them, each looking at a few directories from a random place,
// after its own command has started. A sweep that no longer happened (it
// left Detect for the run's start) would leave them for good.
func TestRunSweepsWhatADeadSupervisorLeft(t *testing.T) {
	root, err := cgroup.Detect()
	if err != nil {
		t.Skipf("SKIP: the cgroup tier is not available here: %v", err)
	}
	st := gone.Process(t)
	dead := filepath.Join(root.Dir, strconv.Itoa(st.Pid)+"."+strconv.FormatUint(st.Start, 10))
	for _, d := range []string{dead, filepath.Join(dead, "1-run")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		unix.Rmdir(filepath.Join(dead, "1-run"))
		unix.Rmdir(dead)
	})
	// Each sweep looks at 16 directories from a random place: enough
	// commands to have looked at every one many times over.
	ents, _ := os.ReadDir(root.Dir)
	runs := 50 + 20*len(ents)/16
	tag := testutil.Tag(t)
	for i := range runs {
		if _, err := os.Stat(dead); os.IsNotExist(err) {
			t.Logf("gone after %d corral commands (%d directories beside it)", i, len(ents))
			return
		}
		if out, _, code, _ := corralRun(t, tag, "--containment", "cgroup", "--", "true"); code != 0 {
			t.Fatalf("corral run: exit %d: %s", code, out)
		}
	}
	t.Fatalf("%s, left by a dead supervisor, is still there after %d corral commands", dead, runs)
}

// TestSandboxedRunSweepsADeadSupervisorsPrivateTmp: a supervisor killed
// while its sandbox ran leaves the sandbox's private /tmp, a directory of
// the host's temporary directory named for it; a later corral command's
// first sandbox removes it (with what its run wrote there), once its own
// command has started.
func TestSandboxedRunSweepsADeadSupervisorsPrivateTmp(t *testing.T) {
	st := gone.Process(t)
	left := filepath.Join(os.TempDir(), fmt.Sprintf("corral-sandbox-%d.%d.%d-1", procfs.PIDNamespace(), st.Pid, st.Start))
	if err := os.MkdirAll(filepath.Join(left, "written"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(left) })
	tag := testutil.Tag(t)
	out, stderr, code, _ := corralRun(t, tag, "--sandbox", "workspace", "--workdir", t.TempDir(), "--", "true")
	if code != 0 {
		if strings.Contains(stderr, "sandbox") && strings.Contains(stderr, "unavailable") {
			t.Skipf("SKIP: no sandbox on this machine: %s", stderr)
		}
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("%s, left by a dead supervisor's sandbox, is still there after a sandboxed corral command: %v", left, err)
	}
}

// TestSandboxedRunMakesNoCgroupDirectory: a sandboxed run's pid namespace
// holds its tree; with no limits asked for it needs no cgroup, so a
// sandboxed corral command makes no cgroup directory of its own (which,
// with no guardian to remove it, it would leave for a later sweep).
func TestSandboxedRunMakesNoCgroupDirectory(t *testing.T) {
	root, err := cgroup.Detect()
	if err != nil {
		t.Skipf("SKIP: no cgroup tier here: %v", err)
	}
	tag := testutil.Tag(t)
	cmd := exec.Command(corralBin, "run", "--sandbox", "workspace", "--workdir", t.TempDir(), "--", "true")
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "sandbox") && strings.Contains(string(out), "unavailable") {
			t.Skipf("SKIP: no sandbox on this machine: %s", out)
		}
		t.Fatalf("corral run: %v: %s", err, out)
	}
	prefix := strconv.Itoa(cmd.Process.Pid) + "."
	ents, _ := os.ReadDir(root.Dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			unix.Rmdir(filepath.Join(root.Dir, e.Name()))
			t.Fatalf("the sandboxed corral command (pid %d) left the cgroup directory %s", cmd.Process.Pid, e.Name())
		}
	}
}
