package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

func TestSessionKeepsStateBetweenCommands(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	sub := filepath.Join(tool.Dir, "sub dir")
	os.Mkdir(sub, 0o755)
	res := run(t, s, `cd "sub dir"; export GREETING="hello world"; plain=kept; arr=(a "b c"); declare -A m=([k]=v)
greet() { echo "$GREETING from $1"; }; export -f greet
alias ll='echo aliased'; shopt -s globstar; set -o pipefail; umask 027; unset HOME`)
	if res.ExitCode != 0 || res.Cwd != sub {
		t.Fatalf("got %+v", res)
	}
	res = run(t, s, `pwd; echo "$GREETING|$plain|${arr[1]}|${m[k]}|${HOME-unset}"; greet me; ll; shopt -q globstar && echo globstar; [[ -o pipefail ]] && echo pipefail; umask; bash -c 'greet child'`)
	want := sub + "\nhello world|kept|b c|v|unset\nhello world from me\naliased\nglobstar\npipefail\n0027\nhello world from child\n"
	if res.Stdout != want || res.Stderr != "" {
		t.Fatalf("state not carried over:\n got %q\nwant %q\nstderr %q", res.Stdout, want, res.Stderr)
	}
	if env := strings.Join(s.Env(), "\n"); !strings.Contains(env, "GREETING=hello world") || strings.Contains(env, "\nHOME=") {
		t.Errorf("session environment: %s", env)
	}
}

// The peer restarted bash on every timeout and lost cd, exports and
// functions.
func TestSessionKeepsStateAcrossTimeout(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	run(t, s, "cd /; export KEEP=1; f() { echo fn; }")
	start := time.Now()
	res, err := s.Run(context.Background(), Request{Command: "echo partial; sleep 60", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); !res.TimedOut || res.Stdout != "partial\n" || d > 2*time.Second {
		t.Fatalf("after %v: %+v", d, res)
	}
	if res.SessionRestarted {
		t.Error("a command that died on SIGTERM lost the session's state")
	}
	res = run(t, s, "pwd; echo $KEEP; f")
	if res.Stdout != "/\n1\nfn\n" {
		t.Fatalf("state lost after a timeout: %q %q", res.Stdout, res.Stderr)
	}
}

func TestSessionSavesStateOfCommandStoppedByTimeout(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	res, err := s.Run(context.Background(), Request{Command: "cd /tmp; export DURING=yes; sleep 60", Timeout: 300 * time.Millisecond})
	if err != nil || !res.TimedOut {
		t.Fatal(err, res)
	}
	if res = run(t, s, "pwd; echo $DURING"); res.Stdout != "/tmp\nyes\n" {
		t.Fatalf("got %q", res.Stdout)
	}
}

func TestSessionGoesOnFromPreviousStateWhenTimeoutNeedsSIGKILL(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	run(t, s, "cd /; export KEEP=1")
	res, err := s.Run(context.Background(), Request{Command: "trap '' TERM; cd /tmp; export LOST=1; sleep 60", Timeout: 300 * time.Millisecond, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !res.SessionRestarted || res.Signal != "SIGKILL" {
		t.Fatalf("got %+v", res)
	}
	if !strings.Contains(res.Text(), "continues with the state from before") {
		t.Errorf("text does not explain the restart: %s", res.Text())
	}
	if res = run(t, s, "pwd; echo $KEEP ${LOST-none}"); res.Stdout != "/\n1 none\n" {
		t.Fatalf("got %q", res.Stdout)
	}
}

// The peer raised an unhandled error on exit and set -e.
func TestSessionSurvivesExitSetESyntaxErrorExecAndCrash(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	run(t, s, "cd /; export KEEP=1")
	cases := []struct {
		cmd       string
		exit      int
		restarted bool
		cwd       string
	}{
		{"cd /tmp; exit 7", 7, false, "/tmp"},
		{"cd /; set -e; false; echo not reached", 1, false, "/"},
		{"set +e; if then", 2, false, "/"},
		{"cd /tmp; exec true", 0, true, "/"},
		{"cd /tmp; kill -9 $$", -1, true, "/"},
	}
	for _, c := range cases {
		res := run(t, s, c.cmd)
		if res.ExitCode != c.exit || res.SessionRestarted != c.restarted || res.Cwd != c.cwd {
			t.Errorf("%q: exit %d restarted %v cwd %s; want %d %v %s (stderr %q)", c.cmd, res.ExitCode, res.SessionRestarted, res.Cwd, c.exit, c.restarted, c.cwd, res.Stderr)
		}
		if got := run(t, s, "echo $KEEP; pwd"); got.Stdout != "1\n"+c.cwd+"\n" {
			t.Errorf("after %q: %q %q", c.cmd, got.Stdout, got.Stderr)
		}
	}
	// set -e carried over, as a long-lived shell would keep it.
	if res := run(t, s, "set -e; true"); res.ExitCode != 0 {
		t.Fatal(res)
	}
	if res := run(t, s, "false; echo after"); res.ExitCode != 1 || res.Stdout != "" {
		t.Errorf("set -e not kept: %+v", res)
	}
}

func TestSessionKeepsXtraceWithoutTracingItself(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	run(t, s, "set -x")
	res := run(t, s, "echo hi")
	if res.Stdout != "hi\n" || strings.Contains(res.Stderr, "corral") || !strings.Contains(res.Stderr, "echo hi") {
		t.Fatalf("got %q %q", res.Stdout, res.Stderr)
	}
}

func TestSessionKillsAmpersandJobsWhenCommandEnds(t *testing.T) {
	tool, tag := newTool(t)
	s := newSession(t, tool)
	res := run(t, s, "sleep 300 & echo started")
	if res.Stdout != "started\n" || res.Killed == 0 || len(res.Notes) == 0 {
		t.Fatalf("got %+v", res)
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

func TestSessionRequestDirDoesNotMoveTheSession(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	res, err := s.Run(context.Background(), Request{Command: "pwd; export X=1", Dir: "/"})
	if err != nil || res.Stdout != "/\n" || res.Cwd != tool.Dir {
		t.Fatal(err, res)
	}
	if res = run(t, s, "pwd; echo $X"); res.Stdout != tool.Dir+"\n1\n" {
		t.Errorf("got %q", res.Stdout)
	}
}

func TestSessionReanchorsToTheToolDirectory(t *testing.T) {
	tool, _ := newTool(t)
	tool.Reanchor = true
	s := newSession(t, tool)
	run(t, s, "cd /; export X=1")
	if res := run(t, s, "pwd; echo $X"); res.Stdout != tool.Dir+"\n1\n" {
		t.Errorf("got %q", res.Stdout)
	}
}

func TestSessionFallsBackWhenItsDirectoryIsRemoved(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	gone := filepath.Join(tool.Dir, "gone")
	os.Mkdir(gone, 0o755)
	run(t, s, "cd gone")
	os.Remove(gone)
	res := run(t, s, "pwd")
	if res.Stdout != tool.Dir+"\n" || len(res.Notes) == 0 {
		t.Fatalf("got %+v", res)
	}
}

func TestSessionResetStartsAfresh(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	run(t, s, "cd /; export X=1")
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := run(t, s, "pwd; echo ${X-unset}"); res.Stdout != tool.Dir+"\nunset\n" {
		t.Errorf("got %q", res.Stdout)
	}
}

func TestSessionRunsLongCommandsThroughAFile(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	body := strings.Repeat("x", 200<<10)
	res := run(t, s, "cat > big.txt <<'EOF'\n"+body+"\nEOF\nwc -c < big.txt; export AFTER=1")
	if strings.TrimSpace(res.Stdout) != "204801" {
		t.Fatalf("got %q %q", res.Stdout, res.Stderr)
	}
	if res = run(t, s, "echo $AFTER"); res.Stdout != "1\n" {
		t.Errorf("got %q", res.Stdout)
	}
}

func TestSessionCommandsGetNullStdin(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	res, err := s.Run(context.Background(), Request{Command: "cat; read x; echo rc=$?", Timeout: 10 * time.Second})
	if err != nil || res.TimedOut || res.Stdout != "rc=1\n" {
		t.Fatal(err, res)
	}
}

func TestSessionCloseStopsTheRunningCommand(t *testing.T) {
	tool, tag := newTool(t)
	s, err := tool.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Result, 1)
	go func() {
		res, _ := s.Run(context.Background(), Request{Command: "sleep 300 & sleep 300"})
		got <- res
	}()
	testutil.WaitFor(t, 5*time.Second, "command running", func() bool { return len(testutil.Tagged(tag)) >= 3 })
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %v", d)
	}
	if res := <-got; res == nil || !res.Cancelled {
		t.Errorf("got %+v", res)
	}
	testutil.AssertNoTagged(t, tag, 2*time.Second)
	if _, err := s.Run(context.Background(), Request{Command: "true"}); err != ErrClosed {
		t.Errorf("run after close: %v", err)
	}
}
