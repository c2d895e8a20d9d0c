package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
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
			exe, argv := execedAs(cmd.Process.Pid, want)
			in.Close() // the end of input ends both commands
			werr := cmd.Wait()
			if exe != want {
				t.Fatalf("pid %d runs %q, want corral-mcp (%s); output:\n%s", cmd.Process.Pid, exe, want, out.String())
			}
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

// TestClientCommandsRunCorralClientInCorralsPlace: the client commands
// execute corral-client, beside corral, in corral's place: the process
// corral started is corral-client (same pid), run as corral-client
// COMMAND ARGS, and it ends as the command does: a service that closes
// the connection unanswered is unreachable, exit 69.
func TestClientCommandsRunCorralClientInCorralsPlace(t *testing.T) {
	want, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(corralBin), "corral-client"))
	if err != nil {
		t.Fatal(err)
	}
	// A service that accepts and never answers, until the test has seen
	// the command's process.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	addr := ln.Addr().String()
	cmd := exec.Command(corralBin, "ps", "--addr", addr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exe, argv := execedAs(cmd.Process.Pid, want)
	ln.Close()
	for c := range conns {
		c.Close()
	}
	werr := cmd.Wait()
	if exe != want {
		t.Fatalf("pid %d runs %q, want corral-client (%s); output:\n%s", cmd.Process.Pid, exe, want, out.String())
	}
	if wantArgv := []string{want, "ps", "--addr", addr}; !slices.Equal(argv, wantArgv) {
		t.Errorf("argv %q, want %q", argv, wantArgv)
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 69 || !strings.HasPrefix(out.String(), "corral ps: ") {
		t.Errorf("corral ps against a service that does not answer: %v, want exit 69 and \"corral ps: ...\"; output:\n%s", werr, out.String())
	}
}

// execedAs waits up to 10 s for the process pid to run the executable
// want, and returns the executable it runs and its arguments.
func execedAs(pid int, want string) (exe string, argv []string) {
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	var cmdline []byte
	testutil.Eventually(10*time.Second, func() bool {
		// The kernel names the new executable before it has set up the
		// new arguments: until then cmdline reads empty.
		exe, _ = os.Readlink(filepath.Join(proc, "exe"))
		cmdline, _ = os.ReadFile(filepath.Join(proc, "cmdline"))
		return exe == want && len(cmdline) > 0
	})
	return exe, strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
}

// TestCommandsWithoutTheirCompanionSayWhatToInstall: a corral installed
// without its companions (neither beside it nor on PATH) refuses the
// commands they serve — corral mcp and corral shell (corral-mcp), the
// client commands (corral-client) — with exit 125, and names the program
// to install and how.
func TestCommandsWithoutTheirCompanionSayWhatToInstall(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(corralBin)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(dir, "corral")
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	type use struct{ name, companion string }
	var uses []use
	for _, c := range cliflag.MCPCommands {
		uses = append(uses, use{c.Name, "corral-mcp"})
	}
	for _, c := range cliflag.ClientCommands {
		uses = append(uses, use{c.Name, "corral-client"})
	}
	for _, u := range uses {
		cmd := exec.Command(alone, u.name, "-h")
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitCorralFailed {
			t.Fatalf("corral %s without %s: %v, want exit %d; output:\n%s", u.name, u.companion, err, exitCorralFailed, out)
		}
		for _, w := range []string{u.companion, "go install ./cmd/..."} {
			if !strings.Contains(string(out), w) {
				t.Errorf("corral %s without %s says %q, want it to name %q", u.name, u.companion, out, w)
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

// TestHelpDescribesTheClientCommands: corral's help lists the client
// commands with their summaries, and corral help COMMAND (or COMMAND -h)
// prints their usage, from corral-client, and exits 0.
func TestHelpDescribesTheClientCommands(t *testing.T) {
	out, err := exec.Command(corralBin, "help").CombinedOutput()
	if err != nil {
		t.Fatalf("corral help: %v\n%s", err, out)
	}
	for _, c := range cliflag.ClientCommands {
		if !strings.Contains(string(out), fmt.Sprintf("  %-10s %s\n", c.Name, c.Summary)) {
			t.Errorf("corral help does not list %s with its summary:\n%s", c.Name, out)
		}
	}
	for _, c := range cliflag.ClientCommands {
		var first string
		for _, args := range [][]string{{"help", c.Name}, {c.Name, "-h"}} {
			cmd := exec.Command(corralBin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("corral %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
			usage := stderr.String()
			for _, w := range []string{"Usage:", "corral " + c.Name + " ", "CORRAL_TOKEN", "-addr HOST:PORT"} {
				if !strings.Contains(usage, w) {
					t.Errorf("corral %s prints no usage of corral %s (%q missing):\n%s", strings.Join(args, " "), c.Name, w, usage)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("corral %s printed its usage on stdout:\n%s", strings.Join(args, " "), stdout.String())
			}
			if first == "" {
				first = usage
			} else if usage != first {
				t.Errorf("corral %s -h and corral help %s differ:\n%s\n---\n%s", c.Name, c.Name, usage, first)
			}
		}
	}
}
