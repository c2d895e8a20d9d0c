package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
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
// binary as the user nobody, and reports each of them, and each of their
// subtests, as a subtest of t: it fails if any of them fails, or was
// skipped without a "SKIP:" reason, or if the binary failed. The copy lives in a
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
	cmd := exec.Command(ExecutableCopy(t), "-test.run", pattern, "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd.Dir = "/"
	cmd.Env = append([]string{UnprivilegedEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=/tmp", "LANG=C.UTF-8"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	results := parseResults(out.String())
	t.Logf("as nobody (%v):\n%s", err, out.String())
	if len(results) == 0 {
		t.Fatalf("as nobody: no test ran (%v)", err)
	}
	mirror(t, results, "")
	if err != nil && !t.Failed() {
		t.Errorf("as nobody: the test binary failed (%v) with no test failing: see the log", err)
	}
}

// testResult is what a verbose test binary said of one test.
type testResult struct {
	name   string // full name, Test/sub/...
	status string // PASS, FAIL or SKIP
	reason string // for SKIP, the line that said why
}

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(`)

// parseResults reads the result of every test and subtest from the output
// of a test binary run with -test.v, in order, with each skip's reason:
// the line saying "SKIP:" between the test's start and its result.
func parseResults(out string) []testResult {
	lines := strings.Split(out, "\n")
	var res []testResult
	for i, l := range lines {
		m := resultLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		r := testResult{name: m[2], status: m[1]}
		if r.status == "SKIP" {
			// The reason: streamed before the result (or printed right
			// after it), on a line of this test's.
			for j := i - 1; j >= 0 && !strings.HasPrefix(strings.TrimSpace(lines[j]), "=== RUN   "+r.name); j-- {
				if strings.Contains(lines[j], "SKIP:") {
					r.reason = strings.TrimSpace(lines[j])
					break
				}
			}
			if r.reason == "" && i+1 < len(lines) && strings.Contains(lines[i+1], "SKIP:") {
				r.reason = strings.TrimSpace(lines[i+1])
			}
		}
		res = append(res, r)
	}
	return res
}

// mirror reports each test below parent as a subtest of t: passed, failed,
// or skipped with its reason. A test skipped without a "SKIP:" reason
// fails: a silent skip hides a guarantee no one checked.
func mirror(t *testing.T, results []testResult, parent string) {
	t.Helper()
	for _, r := range results {
		rest, ok := strings.CutPrefix(r.name, parent)
		if !ok || rest == "" || strings.Contains(rest, "/") {
			continue // not a child of parent
		}
		t.Run(rest, func(t *testing.T) {
			mirror(t, results, r.name+"/")
			switch {
			case r.status == "FAIL":
				t.Errorf("failed as nobody (see the parent's log)")
			case r.status == "SKIP" && r.reason == "":
				t.Errorf("skipped as nobody without a SKIP: reason")
			case r.status == "SKIP":
				t.Skip(r.reason)
			}
		})
	}
}

// ExecutableCopy returns a copy of the running test binary in a new
// directory that any user may enter and execute from (a test binary's own
// directory is its builder's alone), removed when t ends: for a test that
// runs it again as another user, or that drops root in it.
func ExecutableCopy(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "corral-exe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
