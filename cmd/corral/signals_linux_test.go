package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// strays are the signals that end a Go program with a stack dump (QUIT)
// or that corral must not die of (USR1, USR2, ALRM).
var strays = []syscall.Signal{syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM}

// TestStraySignalsEndNoSubcommand sends SIGQUIT, SIGUSR1, SIGUSR2 and
// SIGALRM to the subcommands that drop them, while their tree runs, then
// SIGTERM. Pending signals are delivered lowest number first, so a stray
// that ended corral would have ended it before SIGTERM: corral must end as
// SIGTERM ends it, with no stack dump, and take its tree with it.
func TestStraySignalsEndNoSubcommand(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		stdin func(tag string) string
	}{
		{name: "shell", args: []string{"shell", "-c", escapees}},
		{name: "headless", args: []string{"headless", "--idle-timeout", "10m", "--", "bash", "-c", escapees}},
		{name: "mcp", args: []string{"mcp"}, stdin: mcpRunCommand},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tag := testutil.Tag(t)
			cmd := exec.Command(corralBin, c.args...)
			cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
			cmd.Dir = t.TempDir()
			var in io.WriteCloser
			if c.stdin != nil {
				in, _ = cmd.StdinPipe()
			}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if in != nil {
				io.WriteString(in, c.stdin(tag))
				defer in.Close()
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			if !testutil.Eventually(30*time.Second, func() bool { return len(testutil.Tagged(tag)) >= 5 }) {
				cmd.Process.Kill()
				<-waited
				t.Fatalf("the tree did not come up:\n%s", out.String())
			}
			for _, s := range strays {
				cmd.Process.Signal(s)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			var err error
			select {
			case err = <-waited:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-waited
				t.Fatalf("corral %s did not end on SIGTERM:\n%s", c.name, out.String())
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() && ws.Signal() != syscall.SIGTERM {
					t.Fatalf("corral %s died of %v:\n%s", c.name, ws.Signal(), out.String())
				}
			}
			if strings.Contains(out.String(), "goroutine ") {
				t.Fatalf("stack dump:\n%s", out.String())
			}
			testutil.AssertNoTagged(t, tag, 3*time.Second)
		})
	}
}

// TestRunForwardsSignalsToTheTree: corral run passes SIGQUIT, SIGUSR1,
// SIGUSR2 and SIGALRM to every process of its tree, a setsid escapee
// included, and prints no stack.
func TestRunForwardsSignalsToTheTree(t *testing.T) {
	for _, sig := range strays {
		name := strings.TrimPrefix(gnuSignalName(sig), "SIG")
		t.Run(name, func(t *testing.T) {
			tag := testutil.Tag(t)
			cmd := exec.Command(corralBin, "run", "--", "bash", "-c", trapScript(name, t.TempDir()+"/done"))
			cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
			var out syncBuffer
			var errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 30*time.Second, "the command and its escapee running", func() bool { return len(testutil.Tagged(tag)) >= 4 })
			// "ready" is printed once both traps are set.
			testutil.WaitFor(t, 30*time.Second, "ready", func() bool { return strings.Contains(out.String(), "ready") })
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if err != nil || !strings.Contains(out.String(), "command got "+name) || !strings.Contains(out.String(), "escapee got "+name) {
				t.Fatalf("after SIG%s: %v, stdout %q, stderr %q", name, err, out.String(), errb.String())
			}
			if strings.Contains(errb.String(), "goroutine ") {
				t.Fatalf("stack dump: %s", errb.String())
			}
			testutil.AssertNoTagged(t, tag, 3*time.Second)
		})
	}
}

// syncBuffer is a strings.Builder that a copying goroutine may write while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
