package secret

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const helperEnv = "CORRAL_SECRET_TEST_HELPER"

// inChild runs the calling test again in a child process with env and
// args added, and returns its output; in the child, it returns "" and
// true, and the test does the child's part.
func inChild(t *testing.T, env []string, args ...string) (string, bool) {
	t.Helper()
	if os.Getenv(helperEnv) == "1" {
		return "", true
	}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + t.Name() + "$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), append(env, helperEnv+"=1")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	return string(out), false
}

// seenByCommand returns what a command the process starts finds of its
// parent: its own environment and the parent's environment block and
// command line.
func seenByCommand(t *testing.T) string {
	out, err := exec.Command("sh", "-c", `env; cat /proc/$PPID/environ /proc/$PPID/cmdline`).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// os.Unsetenv leaves a variable in /proc/PID/environ, where a command of
// the same user finds it through $PPID.
func TestFromEnvLeavesNoTrace(t *testing.T) {
	const secret = "s3cret-value-of-the-test"
	if _, child := inChild(t, []string{"CORRAL_TEST_SECRET=" + secret}); !child {
		return
	}
	v, err := FromEnv("CORRAL_TEST_SECRET")
	if err != nil || v != secret {
		t.Fatalf("FromEnv: %q %v", v, err)
	}
	if _, ok := os.LookupEnv("CORRAL_TEST_SECRET"); ok {
		t.Error("the variable is still in the environment")
	}
	if b, _ := os.ReadFile("/proc/self/environ"); strings.Contains(string(b), secret) {
		t.Error("the environment block still holds the secret")
	}
	if strings.Contains(seenByCommand(t), secret) {
		t.Error("a command found the secret")
	}
}

// --token on the command line was there for every local user to read.
func TestScrubArgOverwritesTheArgument(t *testing.T) {
	const secret = "arg-s3cret-of-the-test"
	if _, child := inChild(t, nil, secret, "--token="+secret, "keep"); !child {
		return
	}
	v := strings.Clone(secret)
	if err := ScrubArg(v); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("/proc/self/cmdline")
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "--token=\x00") || !strings.Contains(string(b), "keep") {
		t.Errorf("the command line after the scrub: %q", b)
	}
	if strings.Contains(seenByCommand(t), secret) {
		t.Error("a command found the secret")
	}
}

func TestFromFileRefusesAFileOthersCanRead(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("x\n"), 0o644)
	if _, err := FromFile(open); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a file others can read: %v", err)
	}
	private := filepath.Join(dir, "private")
	os.WriteFile(private, []byte("  tok\n"), 0o600)
	if v, err := FromFile(private); err != nil || v != "tok" {
		t.Errorf("a private file: %q %v", v, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, err := FromFile(empty); err == nil {
		t.Error("an empty file was taken")
	}
}
