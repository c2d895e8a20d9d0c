package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// corralShell runs "corral shell args..." with input on stdin.
func corralShell(t *testing.T, tag, input string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(corralBin, append([]string{"shell", "--dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestShellKeepsStateAcrossLinesAndExitsWithTheLastStatus(t *testing.T) {
	tag := testutil.Tag(t)
	input := "cd /\nexport X=1\nexit 7\necho $X; \\\npwd\n:bg sleep 300\n:jobs\nfalse\n"
	out, errs, code := corralShell(t, tag, input)
	if !strings.Contains(out, "1\n/\n") || !strings.Contains(out, `"status": "running"`) {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(errs, "[exit 7 ·") || !strings.Contains(errs, "started in the background as job") {
		t.Errorf("stderr %q", errs)
	}
	if code != 1 {
		t.Errorf("exit status %d, want 1 (from false)", code)
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

func TestShellJSONPrintsOneResultPerCommand(t *testing.T) {
	tag := testutil.Tag(t)
	out, _, code := corralShell(t, tag, "", "--json", "--timeout", "500ms", "-c", "cd /tmp; echo hi", "-c", "echo before; sleep 60")
	dec := json.NewDecoder(strings.NewReader(out))
	var a, b struct {
		Stdout   string `json:"stdout"`
		Cwd      string `json:"cwd"`
		TimedOut bool   `json:"timed_out"`
		ExitCode int    `json:"exit_code"`
	}
	if err := dec.Decode(&a); err != nil {
		t.Fatal(err, out)
	}
	if err := dec.Decode(&b); err != nil {
		t.Fatal(err, out)
	}
	if a.Stdout != "hi\n" || a.Cwd != "/tmp" || !b.TimedOut || b.Stdout != "before\n" || code != exitTimedOut {
		t.Errorf("got %+v %+v, exit %d", a, b, code)
	}
}

func TestShellPolicyDenialSaysWhy(t *testing.T) {
	tag := testutil.Tag(t)
	_, errs, code := corralShell(t, tag, "ls\nrm -rf /nonexistent\n", "--allow", "^ls( |$)")
	if !strings.Contains(errs, "denied") || !strings.Contains(errs, "rm -rf /nonexistent") || code != exitCorralFailed {
		t.Errorf("stderr %q exit %d", errs, code)
	}
}

func TestMCPRefusesNonLoopbackWithoutToken(t *testing.T) {
	cmd := exec.Command(corralBin, "mcp", "--http", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "CORRAL_MCP_TOKEN=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitCorralFailed || !strings.Contains(string(out), "token") {
		t.Errorf("err %v, output %q", err, out)
	}
}

// corral shell --sandbox runs its session confined, or refuses to start
// (exit 125, with the reason) where the sandbox cannot be built.
func TestShellSandboxConfinesTheSessionOrRefusesToStart(t *testing.T) {
	tag := testutil.Tag(t)
	outside := testutil.OutsideTmp(t)
	out, errs, code := corralShell(t, tag, "", "--sandbox", "workspace", "-c", "echo x > "+outside+"/x; echo rc=$?")
	if code == exitCorralFailed && strings.Contains(errs, "sandbox unavailable") {
		t.Skipf("SKIP: the sandbox cannot be built here, and corral shell refused to start as it must: %s", strings.TrimSpace(errs))
	}
	if _, err := os.Stat(outside + "/x"); !os.IsNotExist(err) || !strings.Contains(out, "rc=1") {
		t.Errorf("a write outside the workspace: %v; exit %d, stdout %q, stderr %q", err, code, out, errs)
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}
