//go:build unix

package proc_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

func bash(tag, script string) *proc.Spec {
	return &proc.Spec{
		Args: []string{"bash", "-c", strings.ReplaceAll(script, "TAG", tag)},
		Env:  []string{testutil.TagEnvVar(tag)},
	}
}

func run(t *testing.T, spec *proc.Spec) *proc.Result {
	t.Helper()
	res, err := proc.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestRunReportsExitCode(t *testing.T) {
	tag := testutil.Tag(t)
	res := run(t, bash(tag, `echo out; echo err >&2; exit 3`))
	if res.ExitCode != 3 || res.Signal != 0 || res.TimedOut || res.Cancelled || res.Success() {
		t.Fatalf("got %+v", res)
	}
	if res.Stdout.Text() != "out\n" || res.Stderr.Text() != "err\n" {
		t.Fatalf("stdout %q stderr %q", res.Stdout.Text(), res.Stderr.Text())
	}
	if res.Status() != "exit 3" {
		t.Fatalf("status %q", res.Status())
	}
}

func TestRunReportsTheSignalThatEndedTheCommand(t *testing.T) {
	tag := testutil.Tag(t)
	res := run(t, bash(tag, `kill -KILL $$`))
	if res.ExitCode != -1 || res.Signal != syscall.SIGKILL || res.Status() != "signal SIGKILL" {
		t.Fatalf("got exit %d signal %v status %q", res.ExitCode, res.Signal, res.Status())
	}
}

func TestRunKeepsOutputPrintedBeforeTheTimeout(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `for i in 1 2 3; do echo line $i; done; sleep 600`)
	spec.Timeout = 300 * time.Millisecond
	res := run(t, spec)
	if !res.TimedOut || res.Stdout.Text() != "line 1\nline 2\nline 3\n" {
		t.Fatalf("timed out %v, stdout %q", res.TimedOut, res.Stdout.Text())
	}
	if res.Signal != syscall.SIGTERM || res.Killed < 1 {
		t.Fatalf("signal %v killed %d", res.Signal, res.Killed)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

func TestRunGivesCommandsTheNullDeviceAsStdin(t *testing.T) {
	// The supervisor's own stdin holds something a command must not see.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("the supervisor's input\n")
	w.Close()
	saved, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Dup2(int(r.Fd()), 0)
	r.Close()
	defer func() { unix.Dup2(saved, 0); unix.Close(saved) }()
	tag := testutil.Tag(t)
	spec := bash(tag, `cat; echo "done $?"`)
	spec.Timeout = 5 * time.Second
	res := run(t, spec)
	if res.TimedOut || res.Stdout.Text() != "done 0\n" {
		t.Fatalf("timed out %v, stdout %q", res.TimedOut, res.Stdout.Text())
	}
}

func TestRunFeedsAGivenReaderToStdin(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `tr a-z A-Z`)
	spec.Stdin = strings.NewReader("hello\n")
	res := run(t, spec)
	if res.Stdout.Text() != "HELLO\n" {
		t.Fatalf("stdout %q", res.Stdout.Text())
	}
}

func TestRunCapturesAFloodWithinTheCap(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `head -c 50000000 /dev/zero | tr '\0' x; echo; echo END`)
	spec.MaxOutput = 1 << 16
	spec.SpillDir = t.TempDir()
	res := run(t, spec)
	o := res.Stdout
	if o.Bytes != 50000000+1+4 || !o.Truncated || len(o.Head)+len(o.Tail) != 1<<16 {
		t.Fatalf("bytes %d truncated %v kept %d", o.Bytes, o.Truncated, len(o.Head)+len(o.Tail))
	}
	if !bytes.HasSuffix(o.Tail, []byte("xx\nEND\n")) || !bytes.HasPrefix(o.Head, []byte("xxxx")) {
		t.Fatalf("head %q… tail …%q", o.Head[:8], o.Tail[len(o.Tail)-8:])
	}
	fi, err := os.Stat(o.SpillPath)
	if err != nil || fi.Size() != o.Bytes {
		t.Fatalf("spill %q: %v size %d", o.SpillPath, err, fi.Size())
	}
	if res.Stderr.SpillPath != "" {
		t.Fatalf("untruncated stderr kept a spill file: %s", res.Stderr.SpillPath)
	}
	if ents, _ := os.ReadDir(spec.SpillDir); len(ents) != 1 {
		t.Fatalf("spill dir holds %d files, want 1", len(ents))
	}
}

func TestRunCapturesAHugeLineWithoutNewline(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `head -c 20000000 /dev/zero | tr '\0' y`)
	spec.MaxOutput = 1000
	res := run(t, spec)
	if res.Stdout.Bytes != 20000000 || len(res.Stdout.Head) != 500 || len(res.Stdout.Tail) != 500 {
		t.Fatalf("bytes %d head %d tail %d", res.Stdout.Bytes, len(res.Stdout.Head), len(res.Stdout.Tail))
	}
}

func TestRunCapturesBinaryOutputExactly(t *testing.T) {
	tag := testutil.Tag(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "blob")
	spec := bash(tag, `head -c 100000 /dev/urandom | tee `+file)
	res := run(t, spec)
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := append(append([]byte{}, res.Stdout.Head...), res.Stdout.Tail...); !bytes.Equal(got, want) {
		t.Fatalf("binary output differs: got %d bytes, want %d", len(got), len(want))
	}
}

func TestRunStreamsOutputLive(t *testing.T) {
	tag := testutil.Tag(t)
	seen := make(chan string, 1)
	spec := bash(tag, `echo first; sleep 600`)
	spec.Stdout = writerFunc(func(p []byte) { seen <- string(p) })
	p, err := proc.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-seen:
		if s != "first\n" {
			t.Errorf("live output %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Error("no live output")
	}
	p.Stop()
	res, _ := p.Wait()
	if !res.Cancelled || res.TimedOut {
		t.Fatalf("cancelled %v timed out %v", res.Cancelled, res.TimedOut)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func TestRunStopsWhenTheContextIsCancelled(t *testing.T) {
	tag := testutil.Tag(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := proc.Start(ctx, bash(tag, `trap '' TERM; sleep 600 & echo up; wait`))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "output", func() bool {
		o, _ := p.Output()
		return o.Text() == "up\n"
	})
	cancel()
	start := time.Now()
	res, _ := p.Wait()
	if !res.Cancelled || res.TimedOut {
		t.Fatalf("cancelled %v timed out %v", res.Cancelled, res.TimedOut)
	}
	if d := time.Since(start); d > proc.DefaultGrace+proc.DefaultDrain+10*time.Second {
		t.Fatalf("took %v after cancel", d)
	}
	assertOwnBounds(t, res, proc.DefaultGrace)
	testutil.AssertNoTagged(t, tag, time.Second)
}

// TestRunReadsWhatLeftoversPrintDuringTheDrain: after the main process
// exits, output a background job prints within the drain is kept.
func TestRunReadsWhatLeftoversPrintDuringTheDrain(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `(sleep 0.2; echo late) & echo early`)
	spec.Drain = 10 * time.Second
	res := run(t, spec)
	if res.Stdout.Text() != "early\nlate\n" || res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("stdout %q (%s)", res.Stdout.Text(), res.Status())
	}
}

func TestRunWaitsForLeftoversWhenAsked(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `(sleep 0.3; echo late) & echo early`)
	spec.Leftovers = corral.LeftoversWait
	spec.Timeout = 10 * time.Second
	res := run(t, spec)
	if res.Stdout.Text() != "early\nlate\n" || res.TimedOut || res.Killed != 0 {
		t.Fatalf("stdout %q timed out %v killed %d", res.Stdout.Text(), res.TimedOut, res.Killed)
	}
}

func TestRunWaitForLeftoversStillHoldsTheTimeout(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `sleep 600 & echo early`)
	spec.Leftovers = corral.LeftoversWait
	spec.Timeout = 300 * time.Millisecond
	res := run(t, spec)
	if !res.TimedOut || res.Killed != 1 || res.ExitCode != 0 {
		t.Fatalf("timed out %v killed %d exit %d", res.TimedOut, res.Killed, res.ExitCode)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

func TestRunDetachesLeftoversWhenAsked(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `sleep 600 >/dev/null 2>&1 & echo ok`)
	spec.Leftovers = corral.LeftoversDetach
	res := run(t, spec)
	if res.Detached != 1 || res.Killed != 0 {
		t.Fatalf("detached %d killed %d", res.Detached, res.Killed)
	}
	// The job may still be between fork and exec when bash is gone (its
	// command line and environment read empty for that moment): it is
	// looked for until it is seen.
	if !testutil.Eventually(2*time.Second, func() bool { return len(testutil.Tagged(tag)) == 1 }) {
		t.Fatalf("%d detached processes alive, want 1", len(testutil.Tagged(tag)))
	}
	testutil.KillTagged(tag)
	testutil.AssertNoZombies(t, 2*time.Second)
}

func TestRunKillsLeftoversByDefault(t *testing.T) {
	tag := testutil.Tag(t)
	res := run(t, bash(tag, `nohup sleep 600 >/dev/null 2>&1 & echo ok`))
	if res.Killed != 1 || res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("killed %d exit %d timed out %v", res.Killed, res.ExitCode, res.TimedOut)
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

func TestStartFailsClearlyForMissingCommands(t *testing.T) {
	_, err := proc.Start(context.Background(), &proc.Spec{Args: []string{"corral-no-such-command"}})
	if !errors.Is(err, proc.ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
	_, err = proc.Start(context.Background(), &proc.Spec{Args: []string{"/no/such/file"}})
	if !errors.Is(err, proc.ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
	f := filepath.Join(t.TempDir(), "noexec")
	os.WriteFile(f, []byte("#!/bin/sh\n"), 0o644)
	_, err = proc.Start(context.Background(), &proc.Spec{Args: []string{f}})
	if !errors.Is(err, proc.ErrNotExecutable) {
		t.Fatalf("err %v, want ErrNotExecutable", err)
	}
	_, err = proc.Start(context.Background(), &proc.Spec{Args: []string{"true"}, Dir: "/no/such/dir"})
	if err == nil || !strings.Contains(err.Error(), "/no/such/dir") {
		t.Fatalf("err %v, want a working directory error", err)
	}
	if _, err := proc.Start(context.Background(), &proc.Spec{}); err == nil {
		t.Fatal("empty spec started")
	}
}

// TestRunPassesTheEnvironmentAsAsked checks each mode against variables
// of the parent that only the mode can pass: an exact name and a NAME*
// prefix on the allowlist, a name that only an exact rule's prefix would
// match, one on no list. Mutations caught: allowed() always false
// (build tag mutation_envallow), always true, a NAME* rule taken as an
// exact name, an exact name taken as a prefix.
func TestRunPassesTheEnvironmentAsAsked(t *testing.T) {
	t.Setenv("CORRAL_TEST_KEEP", "kept")
	t.Setenv("CORRAL_TEST_EXACT", "exact")
	t.Setenv("CORRAL_TEST_EXACTLY", "exactly")
	t.Setenv("CORRAL_TEST_DROP", "dropped")
	cases := []struct {
		name  string
		mode  corral.EnvMode
		allow []string
		want  string
	}{
		{"inherit", corral.EnvInherit, nil, "k=kept e=exact x=exactly d=dropped a=added"},
		{"allowlist", corral.EnvAllowlist, []string{"CORRAL_TEST_K*", "CORRAL_TEST_EXACT"}, "k=kept e=exact x= d= a=added"},
		{"allowlist without star", corral.EnvAllowlist, []string{"CORRAL_TEST_KEE"}, "k= e= x= d= a=added"},
		{"clean", corral.EnvClean, nil, "k= e= x= d= a=added"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, &proc.Spec{
				Path:     "/bin/sh",
				Args:     []string{"sh", "-c", `echo "k=$CORRAL_TEST_KEEP e=$CORRAL_TEST_EXACT x=$CORRAL_TEST_EXACTLY d=$CORRAL_TEST_DROP a=$CORRAL_TEST_ADD"`},
				EnvMode:  c.mode,
				EnvAllow: c.allow,
				Env:      []string{"CORRAL_TEST_ADD=added"},
			})
			if got := strings.TrimSpace(res.Stdout.Text()); got != c.want {
				t.Fatalf("env %q, want %q", got, c.want)
			}
		})
	}
}

func TestRunAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to switch users")
	}
	res := run(t, &proc.Spec{
		Args:       []string{"sh", "-c", "id -u; id -g; id -G"},
		Credential: &proc.Credential{UID: 65534, GID: 65534},
	})
	if got := res.Stdout.Text(); got != "65534\n65534\n65534\n" {
		t.Fatalf("id output %q", got)
	}
}

func TestStopSignalIsSentFirst(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `trap 'echo got INT; exit 7' INT; echo ready; while :; do sleep 0.05; done`)
	spec.StopSignal = syscall.SIGINT
	spec.Timeout = 500 * time.Millisecond
	res := run(t, spec)
	if !strings.Contains(res.Stdout.Text(), "got INT") || res.ExitCode != 7 {
		t.Fatalf("stdout %q exit %d", res.Stdout.Text(), res.ExitCode)
	}
}

func TestSignalReachesTheMainProcessOnly(t *testing.T) {
	tag := testutil.Tag(t)
	p, err := proc.Start(context.Background(), bash(tag, `trap 'echo main got USR1; exit 0' USR1; echo ready; while :; do sleep 0.05; done`))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "ready", func() bool { o, _ := p.Output(); return o.Text() == "ready\n" })
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	res, _ := p.Wait()
	if res.ExitCode != 0 || !strings.Contains(res.Stdout.Text(), "main got USR1") {
		t.Fatalf("exit %d stdout %q", res.ExitCode, res.Stdout.Text())
	}
	if err := p.Signal(syscall.SIGUSR1); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal after exit: %v", err)
	}
}

// slowWriter takes a while over every write, as a stalled consumer of the
// live output (or a starved machine) would.
type slowWriter struct{ d time.Duration }

func (w slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.d)
	return len(p), nil
}

// TestRunKeepsWhatThePipeHeldWhenTheDrainEnds: the drain's deadline bounds
// the wait for more output, not the output already written. A reader kept
// busy past the deadline still takes what the pipe held when the command
// exited.
func TestRunKeepsWhatThePipeHeldWhenTheDrainEnds(t *testing.T) {
	tag := testutil.Tag(t)
	spec := bash(tag, `yes corral | head -c 300000`)
	spec.Stdout = slowWriter{100 * time.Millisecond}
	spec.Drain = 50 * time.Millisecond
	res := run(t, spec)
	if res.Stdout.Bytes != 300000 {
		t.Fatalf("kept %d of 300000 bytes (%s)", res.Stdout.Bytes, res.Status())
	}
}
