package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"

	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

func TestRunReturnsOutputAndExitCode(t *testing.T) {
	tool, _ := newTool(t)
	res := run(t, tool, "echo out; echo err >&2; exit 3")
	if res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 3 || res.TimedOut || res.Truncated {
		t.Fatalf("got %+v", res)
	}
	if res.Containment == "" || res.Proc == nil {
		t.Errorf("no containment reported: %+v", res)
	}
}

func TestRunKeepsOutputPrintedBeforeTimeout(t *testing.T) {
	tool, _ := newTool(t)
	start := time.Now()
	res, err := tool.Run(context.Background(), Request{Command: "echo before; echo warn >&2; sleep 60", Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Stdout != "before\n" || res.Stderr != "warn\n" {
		t.Fatalf("got %+v", res)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returned after %v for a 500ms timeout", d)
	}
}

// The peer waited 32-35 s on a 1 s timeout when a background job held
// stdout. Here the whole tree is killed at the deadline.
func TestRunTimeoutReturnsPromptlyWhenBackgroundJobHoldsStdout(t *testing.T) {
	tool, _ := newTool(t)
	for _, cmd := range []string{
		"sleep 300 & echo started; sleep 300",
		"(setsid sleep 300 &); nohup sleep 300 & echo started; sleep 300",
	} {
		start := time.Now()
		res, err := tool.Run(context.Background(), Request{Command: cmd, Timeout: time.Second, Grace: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		if !res.TimedOut || !strings.Contains(res.Stdout, "started") {
			t.Errorf("%q: got %+v", cmd, res)
		}
		// Bound: timeout + grace + drain + 50 ms, plus slack for a busy machine.
		if d > 1*time.Second+500*time.Millisecond+250*time.Millisecond+time.Second {
			t.Errorf("%q: returned after %v for a 1s timeout", cmd, d)
		}
	}
}

func TestRunDoesNotWaitForBackgroundJobAfterShellExits(t *testing.T) {
	tool, _ := newTool(t)
	start := time.Now()
	res := run(t, tool, "sleep 300 & echo started")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returned after %v", d)
	}
	if res.ExitCode != 0 || res.Stdout != "started\n" || res.Killed == 0 {
		t.Errorf("got %+v", res)
	}
}

// The peer let the host's stdin leak into cat.
func TestRunGivesCommandsNullStdin(t *testing.T) {
	tool, _ := newTool(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.WriteString("host input that must not leak\n")
	saved := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = saved }()
	res, err := tool.Run(context.Background(), Request{Command: "cat; echo rc=$?", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.Stdout != "rc=0\n" {
		t.Fatalf("cat read something or waited: %+v", res)
	}
}

// Claude Code's Bash tool cuts at 30,000 characters and hides the failing
// part; here the head and the tail are kept and the whole is on disk.
func TestRunKeepsHeadAndTailAndSpillsFullOutput(t *testing.T) {
	tool, _ := newTool(t)
	res := run(t, tool, `seq 1 100000; echo "error: the failing part" >&2; echo "last line"; exit 1`)
	if !res.Truncated || res.ExitCode != 1 {
		t.Fatalf("got truncated=%v exit=%d", res.Truncated, res.ExitCode)
	}
	if !strings.HasPrefix(res.Stdout, "1\n2\n3\n") || !strings.HasSuffix(res.Stdout, "100000\nlast line\n") {
		t.Errorf("head or tail lost: %q ... %q", res.Stdout[:20], res.Stdout[len(res.Stdout)-30:])
	}
	if res.Stderr != "error: the failing part\n" {
		t.Errorf("stderr %q", res.Stderr)
	}
	if n := utf8.RuneCountInString(res.Stdout + res.Stderr); n > DefaultMaxOutputChars+200 {
		t.Errorf("%d characters, budget %d", n, DefaultMaxOutputChars)
	}
	full, err := os.ReadFile(res.FullOutputPath)
	if err != nil {
		t.Fatalf("full output: %v", err)
	}
	if !strings.Contains(string(full), "\n54321\n") || !strings.Contains(string(full), "error: the failing part") || int64(len(full)) != res.StdoutBytes+res.StderrBytes {
		t.Errorf("full output file has %d bytes, want %d", len(full), res.StdoutBytes+res.StderrBytes)
	}
	if !strings.Contains(res.Text(), res.FullOutputPath) {
		t.Error("the text form does not name the full output file")
	}
}

func TestRunLeavesNoSpillFileForShortOutput(t *testing.T) {
	tool, _ := newTool(t)
	res := run(t, tool, "seq 1 1000")
	if res.Truncated || res.FullOutputPath != "" {
		t.Fatalf("got %+v", res)
	}
	if ents, _ := os.ReadDir(tool.SpillDir); len(ents) != 0 {
		t.Errorf("spill directory holds %d files", len(ents))
	}
}

// The peer took 400-800 MB of memory for 200 MB of output.
func TestRun200MBOfOutputKeepsMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: writes 200 MB through a pipe (not in -short mode)")
	}
	tool, _ := newTool(t)
	tool.MaxSpillBytes = 4 << 20 // keep the disk out of it
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("SKIP: cannot reset the peak RSS: %v", err)
	}
	res := run(t, tool, "head -c 200000000 /dev/zero | tr '\\0' x; echo; echo done")
	if res.StdoutBytes < 200000000 || !strings.HasSuffix(res.Stdout, "done\n") {
		t.Fatalf("got %d bytes, tail %q", res.StdoutBytes, res.Stdout[len(res.Stdout)-20:])
	}
	hwm := testutil.PeakRSS(t, 0)
	t.Logf("peak RSS of the test process: %d MiB", hwm>>20)
	if hwm > 64<<20 {
		t.Errorf("peak RSS %d MiB for 200 MB of output, want at most 64 MiB", hwm>>20)
	}
}

func TestRunStreamsOutputAndReportsTheProcess(t *testing.T) {
	tool, _ := newTool(t)
	var mu sync.Mutex
	var got strings.Builder
	started := 0
	res, err := tool.Run(context.Background(), Request{
		Command: "echo one; echo two >&2",
		OnOutput: func(stream string, p []byte) {
			mu.Lock()
			defer mu.Unlock()
			got.WriteString(stream + ":" + string(p))
		},
		OnStart: func(h proc.Handle) {
			if h.Pid > 0 {
				started++
			}
		},
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(err, res)
	}
	if started != 1 || !strings.Contains(got.String(), "stdout:one\n") || !strings.Contains(got.String(), "stderr:two\n") {
		t.Errorf("started=%d streamed %q", started, got.String())
	}
}

func TestRunCapsTheTimeoutAtMaxTimeout(t *testing.T) {
	tool, _ := newTool(t)
	tool.MaxTimeout = 300 * time.Millisecond
	res, err := tool.Run(context.Background(), Request{Command: "sleep 60", Timeout: time.Hour})
	if err != nil || !res.TimedOut {
		t.Fatal(err, res)
	}
}

func TestRunRejectsBadConfigurationClearly(t *testing.T) {
	tool := &Tool{Shell: "no-such-shell-anywhere"}
	if _, err := tool.Run(context.Background(), Request{Command: "true"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("err = %v", err)
	}
	tool = &Tool{Policy: Policy{Deny: []string{"("}}}
	if _, err := tool.Run(context.Background(), Request{Command: "true"}); err == nil || !strings.Contains(err.Error(), "deny pattern") {
		t.Errorf("err = %v", err)
	}
	tool = &Tool{Dir: "/no/such/dir"}
	if _, err := tool.Run(context.Background(), Request{Command: "true"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

func TestRunWithPlainSh(t *testing.T) {
	tool, _ := newTool(t)
	tool.Shell = "sh"
	res := run(t, tool, "echo $((1+2))")
	if res.Stdout != "3\n" {
		t.Fatalf("got %+v", res)
	}
	if _, err := tool.NewSession(context.Background()); !errors.Is(err, ErrNoSession) {
		t.Errorf("session with sh: %v", err)
	}
}

func TestRunWithZsh(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("SKIP: zsh is not installed (Debian package zsh)")
	}
	tool, _ := newTool(t)
	tool.Shell = "zsh"
	res := run(t, tool, `print -r -- ${(U)${:-zsh}}; exit 2`)
	if res.Stdout != "ZSH\n" || res.ExitCode != 2 {
		t.Fatalf("got %+v", res)
	}
	e, err := tool.Environment(context.Background())
	if err != nil || e.ShellFamily != "zsh" || e.ShellVersion == "" {
		t.Errorf("environment %+v %v", e, err)
	}
}
