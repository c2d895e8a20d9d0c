package redact

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestTablesAreMadeOnFirstUseNotAtStart: a program that links this package
// and never redacts (most corral commands) does not make its tables: the
// package's initialisation allocates nothing (GODEBUG=inittrace=1 of
// testdata/linkonly, a program that only links it).
func TestTablesAreMadeOnFirstUseNotAtStart(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("SKIP: go is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "linkonly")
	args := []string{"build", "-o", bin}
	if tags := mutationTags(); len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	if out, err := exec.Command("go", append(args, "./testdata/linkonly")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	found := false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "init github.com/corralrun/corral/internal/redact ") {
			found = true
			if !strings.HasSuffix(line, " 0 bytes, 0 allocs") {
				t.Fatalf("the package's initialisation does work: %s", line)
			}
		}
	}
	if !found && !strings.Contains(string(out), "init ") {
		t.Fatalf("no initialisation traced:\n%s", out)
	}
}

// mutationTags returns the mutation tags this test binary was built with
// (the CI's mutation step), for the program it builds.
func mutationTags() []string {
	var tags []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				for _, t := range strings.Split(s.Value, ",") {
					if strings.HasPrefix(t, "mutation_") {
						tags = append(tags, t)
					}
				}
			}
		}
	}
	return tags
}
