package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
)

// timeoutCmd returns "corral timeout ARGS" with the test's tag in its
// environment, not started.
func timeoutCommand(tag string, args ...string) *exec.Cmd {
	cmd := exec.Command(corralBin, append([]string{"timeout"}, args...)...)
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
	// A leftover that holds the output pipe must fail the test, not hang it.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// runTimeout runs "corral timeout ARGS" and returns stdout, stderr and the
// exit status (128+N when a signal N ended it).
func runTimeout(t *testing.T, tag string, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	cmd := timeoutCommand(tag, args...)
	var out, errb strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errb
	code := exitCode(t, cmd.Run(), &out, &errb)
	return out.String(), errb.String(), code
}

func exitCode(t *testing.T, err error, out, errb fmt.Stringer) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatalf("corral timeout: %v", err)
	return 0
}

func TestTimeoutPassesStdinThrough(t *testing.T) {
	tag := testutil.Tag(t)
	out, stderr, code := runTimeout(t, tag, strings.NewReader("hi\n"), "5", "cat")
	if out != "hi\n" || code != 0 {
		t.Fatalf("stdout %q, exit %d, stderr %q: want hi and 0", out, code, stderr)
	}
}

func TestTimeoutExitStatuses(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"own", []string{"10", "sh", "-c", "exit 3"}, 3},
		{"timeout", []string{"0.2", "sleep", "600"}, 124},
		{"preserve status", []string{"--preserve-status", "0.2", "sleep", "600"}, 128 + 15},
		{"kill signal", []string{"-s", "KILL", "0.3", "sleep", "600"}, 137},
		{"kill after", []string{"-s0", "-k", "0.2", "0.1", "sleep", "600"}, 137},
		{"bad duration", []string{"10x", "true"}, 125},
		{"negative", []string{"--", "-1", "true"}, 125},
		{"bad signal", []string{"-s", "BOGUS", "1", "true"}, 125},
		{"not executable", []string{"10", noexec}, 126},
		{"not found", []string{"10", "corral-no-such-command"}, 127},
		{"usage", []string{"10"}, 125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tag := testutil.Tag(t)
			_, stderr, code := runTimeout(t, tag, nil, c.args...)
			if code != c.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.want, stderr)
			}
			testutil.AssertNoTagged(t, tag, 2*time.Second)
		})
	}
}

// escapeeScript leaves a setsid escapee and a background job, says ready
// and sleeps: with corral, four processes carry the tag.
const escapeeScript = `setsid sleep 600 & sleep 600 & echo ready; sleep 600`

const escapeeProcs = 4

// timeoutTiers returns the tiers corral timeout can run here: the cgroup
// tier when the machine has one (a skipped subtest says why not), and the
// subreaper init.
func timeoutTiers(t *testing.T) []string {
	var tiers []string
	for _, tier := range runTiers(t) {
		if tier != "pgroup" { // the group is timeout's own: refused
			tiers = append(tiers, tier)
		}
	}
	return tiers
}

func TestTimeoutKillsSetsidEscapeeAtTheTimeout(t *testing.T) {
	for _, tier := range timeoutTiers(t) {
		t.Run(tier, func(t *testing.T) {
			// --leftovers detach: only the timeout's signal to the tree may
			// end the escapee, not the killing of leftovers after the command
			// exits.
			tag := testutil.Tag(t)
			start := time.Now()
			out, stderr, code := runTimeout(t, tag, nil, "--containment", tier, "--leftovers", "detach", "0.5", "bash", "-c", escapeeScript)
			if code != 124 || out != "ready\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q: want 124 and ready", code, out, stderr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("took %v", d)
			}
			testutil.AssertNoTagged(t, tag, 2*time.Second)
		})
	}
}

func TestTimeoutKillsLeftoversWhenTheCommandExits(t *testing.T) {
	tag := testutil.Tag(t)
	out, stderr, code := runTimeout(t, tag, nil, "30", "bash", "-c", "setsid sleep 600 & (sleep 600 &); echo ready")
	if code != 0 || out != "ready\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	testutil.AssertNoTagged(t, tag, 2*time.Second)
}

func TestTimeoutDetachLeavesLeftoversRunning(t *testing.T) {
	tag := testutil.Tag(t)
	_, stderr, code := runTimeout(t, tag, nil, "--leftovers", "detach", "30", "bash", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo ready")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if n := len(testutil.Tagged(tag)); n != 1 {
		t.Fatalf("%d tagged processes left running, want the detached sleep", n)
	}
	testutil.KillTagged(tag)
}

// startTimeout starts "corral timeout ARGS" and waits for its command's
// first line, "ready".
func startTimeout(t *testing.T, tag string, args ...string) (*exec.Cmd, *bufio.Reader, *strings.Builder) {
	t.Helper()
	cmd := timeoutCommand(tag, args...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q (%v), stderr %q", line, err, errb.String())
	}
	return cmd, r, &errb
}

// trapScript traps SIG in the command and in a setsid escapee (started
// with setsid -f, not as a background job, which would have SIGINT and
// SIGQUIT ignored): each says it got it, the escapee leaves the file done
// and the command waits for it before it exits.
func trapScript(sig, done string) string {
	return fmt.Sprintf(`setsid -f bash -c 'trap "echo escapee got %[1]s; touch %[2]s; exit 0" %[1]s; while :; do sleep 0.05; done'
trap 'echo command got %[1]s; until [ -e %[2]s ]; do sleep 0.05; done; exit 0' %[1]s
sleep 0.3; echo ready; while :; do sleep 0.05; done`, sig, done)
}

func TestTimeoutForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2} {
		name := strings.TrimPrefix(gnuSignalName(sig), "SIG")
		t.Run(name, func(t *testing.T) {
			tag := testutil.Tag(t)
			cmd, out, errb := startTimeout(t, tag, "30", "bash", "-c", trapScript(name, filepath.Join(t.TempDir(), "done")))
			cmd.Process.Signal(sig)
			rest, _ := io.ReadAll(out)
			code := exitCode(t, cmd.Wait(), new(strings.Builder), errb)
			got := string(rest)
			if !strings.Contains(got, "command got "+name) || !strings.Contains(got, "escapee got "+name) {
				t.Fatalf("after SIG%s: stdout %q, stderr %q, exit %d: want the command and the escapee to get it", name, got, errb, code)
			}
			if strings.Contains(errb.String(), "goroutine") {
				t.Fatalf("stack dump on stderr: %s", errb)
			}
			if code != 0 {
				t.Fatalf("exit %d, want the command's 0 (stderr %q)", code, errb)
			}
			testutil.AssertNoTagged(t, tag, 2*time.Second)
		})
	}
}

func TestTimeoutTreeDiesWithCorral(t *testing.T) {
	for _, tier := range timeoutTiers(t) {
		t.Run(tier, func(t *testing.T) {
			tag := testutil.Tag(t)
			cmd, _, _ := startTimeout(t, tag, "--containment", tier, "60", "bash", "-c", escapeeScript)
			testutil.WaitFor(t, 10*time.Second, "the escapee and the job running", func() bool { return len(testutil.Tagged(tag)) >= escapeeProcs })
			cmd.Process.Kill()
			cmd.Wait()
			testutil.AssertNoTagged(t, tag, 3*time.Second)
		})
	}
}

func TestTimeoutStdioIsTheCallersOwn(t *testing.T) {
	tag := testutil.Tag(t)
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := timeoutCommand(tag, "10", "bash", "-c", `readlink /proc/self/fd/1; for i in $(seq 200); do echo out$i; echo err$i >&2; done`)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != f.Name() {
		t.Fatalf("the command's stdout is %q, not the caller's file %s", lines[0], f.Name())
	}
	for i := 1; i <= 200; i++ {
		if lines[2*i-1] != fmt.Sprint("out", i) || lines[2*i] != fmt.Sprint("err", i) {
			t.Fatalf("line %d: %q, %q: the two streams lost their order", 2*i-1, lines[2*i-1], lines[2*i])
		}
	}
}

func TestTimeoutRunsTheCommandInItsGroup(t *testing.T) {
	for _, fg := range []bool{false, true} {
		t.Run(fmt.Sprint("foreground=", fg), func(t *testing.T) {
			tag := testutil.Tag(t)
			args := []string{"10", "sh", "-c", "ps -o pgid= -p $$"}
			if fg {
				args = append([]string{"--foreground"}, args...)
			}
			cmd := timeoutCommand(tag, args...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			want := cmd.Process.Pid // its own group, which the command shares
			if fg {
				want = syscall.Getpgrp() // the caller's group
			}
			if got := strings.TrimSpace(string(out)); got != fmt.Sprint(want) {
				t.Fatalf("the command's process group is %s, want %d", got, want)
			}
		})
	}
}

func TestTimeoutStopsAndResumesTheTree(t *testing.T) {
	for _, tier := range timeoutTiers(t) {
		t.Run(tier, func(t *testing.T) { testStopsAndResumes(t, tier) })
	}
}

func testStopsAndResumes(t *testing.T, tier string) {
	tag := testutil.Tag(t)
	cmd, _, _ := startTimeout(t, tag, "--containment", tier, "60", "bash", "-c", escapeeScript)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	testutil.WaitFor(t, 10*time.Second, "the tree running", func() bool { return len(testutil.Tagged(tag)) >= escapeeProcs })
	states := func(want byte) func() bool {
		return func() bool {
			for _, st := range testutil.Tagged(tag) {
				if cur, err := procfs.ReadStat(st.Pid); err == nil && (cur.State == 'T') != (want == 'T') {
					return false
				}
			}
			return true
		}
	}
	// Ctrl-Z: the terminal signals the whole group, which corral leads.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTSTP)
	testutil.WaitFor(t, 10*time.Second, "every process of the tree, the escapee included, stopped", states('T'))
	syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	testutil.WaitFor(t, 10*time.Second, "every process of the tree running again", states('R'))
}

func TestTimeoutKeepsAnIgnoredSIGPIPEIgnored(t *testing.T) {
	tag := testutil.Tag(t)
	sh := exec.Command("bash", "-c", `trap '' PIPE; "$0" timeout 10 yes | :`, corralBin)
	sh.Env = append(os.Environ(), testutil.TagEnvVar(tag))
	out, _ := sh.CombinedOutput()
	if !strings.Contains(string(out), "Broken pipe") {
		t.Fatalf("yes did not see SIGPIPE ignored (no write error): %q", out)
	}
}

func TestTimeoutSymlinkIsTimeout(t *testing.T) {
	tag := testutil.Tag(t)
	link := filepath.Join(t.TempDir(), "timeout")
	if err := os.Symlink(corralBin, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "-v", "0.2", "sleep", "600")
	cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag), "LC_ALL=C")
	var errb strings.Builder
	cmd.Stderr = &errb
	code := exitCode(t, cmd.Run(), new(strings.Builder), &errb)
	if want := link + ": sending signal TERM to command 'sleep'\n"; code != 124 || errb.String() != want {
		t.Fatalf("exit %d, stderr %q: want 124 and %q", code, errb.String(), want)
	}
}
