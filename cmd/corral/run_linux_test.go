package main

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/testutil"
)

// corralRun runs "corral run ARGS" with the test's tag in its environment
// and returns stdout, stderr, the exit status and how long it took.
func corralRun(t *testing.T, tag string, args ...string) (string, string, int, time.Duration) {
	t.Helper()
	cmd := exec.Command(corralBin, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("corral run: %v", err)
	}
	return out.String(), errb.String(), code, d
}

// runTiers returns the tiers this machine can run; a tier it cannot run
// shows as a skipped subtest, with the reason.
func runTiers(t *testing.T) []string {
	tiers := []string{"subreaper", "pgroup"}
	if _, err := cgroup.Detect(); err == nil {
		tiers = append([]string{"cgroup"}, tiers...)
	} else {
		t.Run("cgroup", func(t *testing.T) {
			t.Skipf("SKIP: the cgroup tier is not available here: %v", err)
		})
	}
	return tiers
}

// The README's first command: a background job holding stdout must not
// delay the return, and must not survive it, under every tier.
func TestRunReturnsPromptlyAndLeavesNothing(t *testing.T) {
	for _, tier := range runTiers(t) {
		t.Run(tier, func(t *testing.T) {
			tag := testutil.Tag(t)
			out, _, code, d := corralRun(t, tag, "--containment", tier, "--timeout", "1s", "--", "bash", "-c", "sleep 600 & echo started")
			if out != "started\n" || code != 0 {
				t.Fatalf("stdout %q, exit %d", out, code)
			}
			if d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
			testutil.AssertNoTagged(t, tag, time.Second)
		})
	}
}

func TestRunExitStatuses(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"own", []string{"--", "sh", "-c", "exit 3"}, 3},
		{"timeout", []string{"--timeout", "200ms", "--", "sleep", "600"}, 124},
		{"usage", []string{"--leftovers", "sideways", "--", "true"}, 125},
		{"no command", nil, 125},
		{"not executable", []string{"--", noexec}, 126},
		{"not found", []string{"--", "corral-no-such-command"}, 127},
		{"signal", []string{"--", "sh", "-c", "kill -KILL $$"}, 128 + 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tag := testutil.Tag(t)
			_, stderr, code, _ := corralRun(t, tag, c.args...)
			if code != c.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.want, stderr)
			}
		})
	}
}

func TestRunJSONReportsTheResult(t *testing.T) {
	tag := testutil.Tag(t)
	out, _, code, _ := corralRun(t, tag, "--json", "--timeout", "300ms", "--max-output", "8", "--",
		"bash", "-c", "echo 0123456789abcdef; echo oops >&2; sleep 600 & sleep 600")
	if code != 124 {
		t.Fatalf("exit %d", code)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"exit_code", "signal", "timed_out", "cancelled", "duration_ms", "stdout", "stderr",
		"stdout_bytes", "stderr_bytes", "stdout_truncated", "stderr_truncated", "containment", "killed", "survivors"} {
		if _, ok := r[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	if r["timed_out"] != true || r["signal"] != "SIGTERM" || r["stdout_bytes"] != float64(17) ||
		r["stdout_truncated"] != true || r["stderr"] != "oops\n" || r["survivors"] != float64(0) || r["killed"].(float64) < 2 {
		t.Fatalf("unexpected result: %s", out)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

// SIGINT and SIGTERM to corral itself tear the tree down and exit 130/143.
func TestRunTearsDownOnItsOwnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tag := testutil.Tag(t)
			cmd := exec.Command(corralBin, "run", "--", "bash", "-c", "sleep 600 & setsid sleep 600 & echo up; sleep 600")
			cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 3)
			if _, err := stdout.Read(buf); err != nil || string(buf) != "up\n" {
				t.Fatalf("read %q %v", buf, err)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Fatalf("exit %v, want %d", err, 128+int(sig))
			}
			testutil.AssertNoTagged(t, tag, time.Second)
		})
	}
}

// TestRunSandboxedDetachOutlivesCorral: a sandboxed run's init dies with
// corral (its parent-death signal), except when what the run left was
// detached on purpose: the job still runs, in its sandbox, once corral
// has exited. Under both inits: the native one, and the Go one it hands
// the run to when a command connects a Unix socket (the gate's); the Go
// init's signal is its main thread's, the thread the detach must clear it
// on.
func TestRunSandboxedDetachOutlivesCorral(t *testing.T) {
	for _, c := range []struct{ name, first, init string }{
		{"native init", "", "native"},
		// A socket in the workspace: the gate connects it (the native
		// init answers only what the gate would refuse).
		{"Go init", `python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect_ex("gate.sock")'; `, "go"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.first != "" {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("SKIP: python3 is not installed: nothing here connects a Unix socket from a sandbox")
				}
			}
			tag := testutil.Tag(t)
			t.Cleanup(func() { testutil.KillTagged(tag) })
			ws := t.TempDir()
			l, err := net.Listen("unix", filepath.Join(ws, "gate.sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			out, stderr, code, _ := corralRun(t, tag, "--sandbox", "workspace", "--workdir", ws, "--leftovers", "detach", "--",
				"bash", "-c", c.first+"exec -a "+tag+"-job sleep 600 </dev/null >/dev/null 2>&1 & "+
					`echo started $(awk '/^Threads/ { print ($2 == 1) ? "native" : "go" }' /proc/1/status)`)
			if code != 0 || out != "started "+c.init+"\n" {
				if strings.Contains(stderr, "sandbox") && strings.Contains(stderr, "unavailable") {
					t.Skipf("SKIP: no sandbox on this machine: %s", stderr)
				}
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
			// corral has exited: the kernel sends the init its signal then, if
			// it still has one. Given time to, the job must still be there.
			time.Sleep(300 * time.Millisecond)
			if !testutil.Eventually(2*time.Second, func() bool { return len(testutil.Tagged(tag)) == 1 }) {
				t.Fatalf("%d detached jobs running after corral exited, want 1", len(testutil.Tagged(tag)))
			}
			time.Sleep(300 * time.Millisecond)
			if n := len(testutil.Tagged(tag)); n != 1 {
				t.Fatalf("the detached job died after corral exited (%d running)", n)
			}
		})
	}
}

// TestRunSandboxedHasANetworkOfItsOwnToItsInit: under network none the
// command is in a network namespace other than corral's, with lo alone,
// and so is every thread of its init (corral-shim, beside corral here):
// none shows the command the host's interfaces through
// /proc/1/task/*/net, which any process that sees pid 1 may read.
func TestRunSandboxedHasANetworkOfItsOwnToItsInit(t *testing.T) {
	tag := testutil.Tag(t)
	out, stderr, code, _ := corralRun(t, tag, "--sandbox", "workspace", "--workdir", t.TempDir(), "--", "bash", "-c", testutil.NetnsProbe)
	if code != 0 {
		if strings.Contains(stderr, "sandbox") && strings.Contains(stderr, "unavailable") {
			t.Skipf("SKIP: no sandbox on this machine: %s", stderr)
		}
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	testutil.AssertOwnNetns(t, out)
}

// TestRunRefusesASandboxItsUserMayNotMake: corral checks the sandbox's
// mechanisms before a sandboxed run and leaves the namespaces to the
// init's own clone, without a probe's clone of its own first; where the
// user may not make them, the run is still refused (exit 125) before its
// command runs, saying why. The user here is root of a user namespace of
// the test's own whose limit of user namespaces is 0, a setting of that
// namespace alone.
func TestRunRefusesASandboxItsUserMayNotMake(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skipf("SKIP: unshare (util-linux) is not installed: %v", err)
	}
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	script := `echo 0 >/proc/sys/user/max_user_namespaces || exit 99
"$0" run --sandbox workspace --workdir "$1" -- touch "$2"
echo "sandboxed=$?"
"$0" run --workdir "$1" -- true
echo "plain=$?"`
	cmd := exec.Command(unshare, "--user", "--map-root-user", "sh", "-c", script, corralBin, ws, marker)
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(testutil.Tag(t)))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 99 {
			t.Fatalf("could not set the namespace's limit: %s", errb.String())
		}
		t.Skipf("SKIP: this machine does not let the test make a user namespace: %v: %s", err, errb.String())
	}
	if got := out.String(); got != "sandboxed=125\nplain=0\n" {
		t.Errorf("exit statuses %q, want the sandboxed run refused (125) and the plain one run (0); stderr %q", got, errb.String())
	}
	for _, want := range []string{"sandbox unavailable", "user.max_user_namespaces is 0"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q does not say %q", errb.String(), want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused run's command ran")
	}
}
