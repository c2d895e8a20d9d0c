package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/internal/testutil"
)

// TestMCPAndShellRunCorralMCPInCorralsPlace: corral mcp and corral shell
// execute corral-mcp, beside corral, in corral's place: the process corral
// started is corral-mcp (same pid), run as corral-mcp COMMAND ARGS, and
// it ends as the command does.
func TestMCPAndShellRunCorralMCPInCorralsPlace(t *testing.T) {
	want, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(corralBin), "corral-mcp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, dirFlag string }{{"mcp", "--workdir"}, {"shell", "--dir"}} {
		t.Run(c.name, func(t *testing.T) {
			tag := testutil.Tag(t)
			dir := t.TempDir()
			cmd := exec.Command(corralBin, c.name, c.dirFlag, dir)
			cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			proc := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid))
			var exe string
			var cmdline []byte
			testutil.Eventually(10*time.Second, func() bool {
				// The kernel names the new executable before it has set up
				// the new arguments: until then cmdline reads empty.
				exe, _ = os.Readlink(filepath.Join(proc, "exe"))
				cmdline, _ = os.ReadFile(filepath.Join(proc, "cmdline"))
				return exe == want && len(cmdline) > 0
			})
			in.Close() // the end of input ends both commands
			werr := cmd.Wait()
			if exe != want {
				t.Fatalf("pid %d runs %q, want corral-mcp (%s); output:\n%s", cmd.Process.Pid, exe, want, out.String())
			}
			argv := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
			if wantArgv := []string{want, c.name, c.dirFlag, dir}; !slices.Equal(argv, wantArgv) {
				t.Errorf("argv %q, want %q", argv, wantArgv)
			}
			if werr != nil {
				t.Errorf("corral %s at the end of its input: %v; output:\n%s", c.name, werr, out.String())
			}
			testutil.AssertNoTagged(t, tag, 3*time.Second)
		})
	}
}

// TestMCPWithoutCorralMCPSaysWhatToInstall: a corral installed without
// corral-mcp (neither beside it nor on PATH) refuses corral mcp and corral
// shell with exit 125 and names the program to install and how.
func TestMCPWithoutCorralMCPSaysWhatToInstall(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(corralBin)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(dir, "corral")
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mcp", "shell"} {
		cmd := exec.Command(alone, name, "-h")
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitCorralFailed {
			t.Fatalf("corral %s without corral-mcp: %v, want exit %d; output:\n%s", name, err, exitCorralFailed, out)
		}
		for _, w := range []string{"corral-mcp", "go install ./cmd/..."} {
			if !strings.Contains(string(out), w) {
				t.Errorf("corral %s without corral-mcp says %q, want it to name %q", name, out, w)
			}
		}
	}
}

// TestHelpDescribesMCPAndShell: corral's help lists mcp and shell, and
// corral help COMMAND (or COMMAND -h) prints their usage, from corral-mcp.
func TestHelpDescribesMCPAndShell(t *testing.T) {
	out, err := exec.Command(corralBin, "help").CombinedOutput()
	if err != nil {
		t.Fatalf("corral help: %v\n%s", err, out)
	}
	for _, c := range cliflag.MCPCommands {
		if !strings.Contains(string(out), c.Summary) {
			t.Errorf("corral help does not list %s with its summary:\n%s", c.Name, out)
		}
	}
	for _, args := range [][]string{{"help", "mcp"}, {"mcp", "-h"}, {"help", "shell"}, {"shell", "-h"}} {
		cmd := exec.Command(corralBin, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("corral %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		name := args[0]
		if name == "help" {
			name = args[1]
		}
		if !strings.Contains(stderr.String(), "Usage: corral "+name+" [flags]") || !strings.Contains(stderr.String(), "-sandbox") {
			t.Errorf("corral %s prints no usage of corral %s with its flags:\n%s", strings.Join(args, " "), name, stderr.String())
		}
	}
}
