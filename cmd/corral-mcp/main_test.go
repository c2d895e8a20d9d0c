package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corralrun/corral/internal/cliflag"
)

// TestWithoutACommandCorralMCPPrintsItsUsage: corral-mcp run with no
// command, or one it does not have, prints a usage naming its commands and
// exits 2, as corral does; help prints it and exits 0.
func TestWithoutACommandCorralMCPPrintsItsUsage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "corral-mcp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		code int
	}{{nil, exitUsage}, {[]string{"serve"}, exitUsage}, {[]string{"--workdir"}, exitUsage}, {[]string{"help"}, 0}, {[]string{"-h"}, 0}} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("corral-mcp %q exited %d, want %d; output:\n%s", c.args, code, c.code, out)
		}
		if !strings.Contains(string(out), "Usage:\n  corral-mcp COMMAND") {
			t.Errorf("corral-mcp %q prints no usage:\n%s", c.args, out)
		}
		for _, cmd := range cliflag.MCPCommands {
			if !strings.Contains(string(out), cmd.Summary) {
				t.Errorf("corral-mcp %q: the usage does not name %s:\n%s", c.args, cmd.Name, out)
			}
		}
	}
}
