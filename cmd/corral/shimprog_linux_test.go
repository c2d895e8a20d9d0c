package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corralrun/corral/internal/testutil"
)

// A run's init is started from corral-shim when it sits beside corral (as
// go install ./cmd/... and these tests put it), and from corral itself
// when corral is alone: a smaller program's start, the same init.
func TestRunStartsItsInitFromCorralShimBesideIt(t *testing.T) {
	parentExe := []string{"--containment", "subreaper", "--", "sh", "-c", `readlink /proc/$PPID/exe`}
	out, errOut, code, _ := corralRun(t, testutil.Tag(t), parentExe...)
	want := filepath.Join(filepath.Dir(corralBin), "corral-shim")
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("the init's program: %q (exit %d, %s), want %s", out, code, errOut, want)
	}

	alone := filepath.Join(t.TempDir(), "corral")
	if err := os.Link(corralBin, alone); err != nil {
		t.Skipf("SKIP: a link to corral in another directory: %v", err)
	}
	cmd := exec.Command(alone, append([]string{"run"}, parentExe...)...)
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(testutil.Tag(t)))
	got, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(got)) != alone {
		t.Fatalf("without corral-shim beside it, the init's program: %q (%v), want corral itself, %s", got, err, alone)
	}
}
