package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
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

// holdNotify holds back the catching of signals (notifySignals) until the
// returned channel is closed, and when t ends gives this process back the
// default action of every signal run and timeout catch.
func holdNotify(t *testing.T) chan struct{} {
	release := make(chan struct{})
	notifySignals = func(c chan<- os.Signal, sig ...os.Signal) {
		<-release
		signal.Notify(c, sig...)
	}
	t.Cleanup(func() {
		notifySignals = signal.Notify
		signal.Reset(treeSignalList...)
		for _, s := range append(signalsNamed(commonForwarded), syscall.SIGCONT, syscall.SIGTTIN, syscall.SIGTTOU) {
			signal.Reset(s)
		}
	})
	return release
}

// TestRunCommandStartsOnceItsSignalsAreCaught: corral run catches its
// signals in the background, beside its run's set-up; its command must
// not start before all are caught. The catching is held back here: the
// command, which prints a file the test makes only just before letting
// it go, must not have started until then.
func TestRunCommandStartsOnceItsSignalsAreCaught(t *testing.T) {
	release := holdNotify(t)
	dir := t.TempDir()
	var out strings.Builder
	spec := &proc.Spec{Args: []string{"cat", "ready"}, Dir: dir, Stdout: &out, Stderr: &out}
	code := make(chan int, 1)
	go func() { code <- runSpec(context.Background(), watchTreeSignals(), spec, false) }()
	select {
	case c := <-code:
		t.Fatalf("corral run's command ran (exit %d: %q) while its signals were not yet caught", c, out.String())
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte("caught\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	close(release)
	if c := <-code; c != 0 || out.String() != "caught\n" {
		t.Fatalf("corral run's command started before its signals were caught: exit %d, output %q", c, out.String())
	}
}

// TestTimeoutCommandStartsOnceItsSignalsAreCaught: corral timeout, too,
// catches the signals it acts on in the background (and ignores again
// those its caller ignored, which the command inherits); its command must
// not start before that is done.
func TestTimeoutCommandStartsOnceItsSignalsAreCaught(t *testing.T) {
	release := holdNotify(t)
	dir := t.TempDir()
	script := fmt.Sprintf("cat %s/ready > %s/out", dir, dir)
	tr := &timeoutRun{prog: "timeout", signal: syscall.SIGTERM, command: []string{"sh", "-c", script}}
	tr.sigs = catchTimeoutSignals(tr.signal)
	started := make(chan int, 1)
	go func() {
		code, _ := tr.start()
		started <- code
	}()
	select {
	case code := <-started:
		if tr.p != nil {
			tr.p.Wait()
		}
		t.Fatalf("corral timeout's command started (status %d) while its signals were not yet caught", code)
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte("caught\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	close(release)
	if code := <-started; tr.p == nil {
		t.Fatalf("corral timeout's command did not start: status %d", code)
	}
	res, err := tr.p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "out"))
	if res.ExitCode != 0 || string(out) != "caught\n" {
		t.Fatalf("corral timeout's command started before its signals were caught: exit %d, it read %q", res.ExitCode, out)
	}
}
