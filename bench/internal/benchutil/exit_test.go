package benchutil

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCheckRemovesTheTempDirs: a bench program that stops on an error
// leaves none of the directories TempDir made (os.Exit runs no deferred
// removal).
func TestCheckRemovesTheTempDirs(t *testing.T) {
	if os.Getenv("BENCHUTIL_FAIL") == "1" {
		dir := TempDir("", "benchutil-exit-")
		os.Stdout.WriteString(dir + "\n")
		Check(errors.New("a failed check"))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckRemovesTheTempDirs$")
	cmd.Env = append(os.Environ(), "BENCHUTIL_FAIL=1")
	out, err := cmd.Output()
	if err == nil {
		t.Fatal("the failed check did not end the program")
	}
	dir := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if !strings.Contains(dir, "benchutil-exit-") {
		t.Fatalf("no directory reported: %q", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		os.RemoveAll(dir)
		t.Fatalf("%s left after the program ended: %v", dir, err)
	}
}
