package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// sandboxed returns a Tool confined to its workspace, and a session of it;
// it skips, saying why, where the sandbox cannot be built (yet).
func sandboxed(t *testing.T) (*Tool, *Session) {
	t.Helper()
	tool, _ := newTool(t)
	tool.Sandbox = corral.Sandbox{Mode: corral.SandboxWorkspace}
	s, err := tool.NewSession(context.Background())
	if errors.Is(err, proc.ErrSandboxUnavailable) {
		t.Skipf("SKIP: the sandbox cannot be built here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return tool, s
}

func TestSandboxedSessionWritesOnlyItsWorkspace(t *testing.T) {
	tool, s := sandboxed(t)
	outside := testutil.OutsideTmp(t)
	res := run(t, s, "echo ok > ./inside; echo x > "+outside+"/outside; echo rc=$?")
	if _, err := os.Stat(filepath.Join(tool.Dir, "inside")); err != nil {
		t.Errorf("a write inside the workspace failed: %v (%+v)", err, res)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside")); !os.IsNotExist(err) {
		t.Errorf("a write outside the workspace went through: %v", err)
	}
	if !strings.Contains(res.Stdout, "rc=1") {
		t.Errorf("the write outside did not fail: %+v", res)
	}
	if sb := s.Sandbox(); sb == nil || sb.Mode != corral.SandboxWorkspace {
		t.Errorf("the session reports sandbox %+v", sb)
	}
	e, err := s.Environment(context.Background())
	if err != nil || e.Sandbox == nil {
		t.Errorf("the environment does not report the sandbox: %+v %v", e, err)
	}
}

// A server a background job starts is reachable from the session's next
// command: they share one network.
func TestSandboxedJobListenerIsReachableFromTheNextCommand(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP: needs python3 to listen on a port")
	}
	_, s := sandboxed(t)
	res, err := s.Start(context.Background(), Request{Command: `python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True)
c,_=s.accept(); c.sendall(b"hello from the job"); c.close()'`})
	if err != nil {
		t.Fatal(err)
	}
	j, _ := s.Job(res.JobID)
	var port string
	deadline := time.Now().Add(20 * time.Second)
	for port == "" && time.Now().Before(deadline) {
		port = strings.TrimSpace(j.Output(context.Background(), 0, time.Second, 0).Output)
	}
	if port == "" {
		t.Fatalf("the job printed no port: %+v", j.Info())
	}
	got := run(t, s, "exec 3<>/dev/tcp/127.0.0.1/"+port+"; cat <&3")
	if got.Stdout != "hello from the job" {
		t.Fatalf("the next command could not reach the job's listener: %+v", got)
	}
}

// /tmp is private: shared by one session's commands, invisible to another
// session and to the host.
func TestSandboxedTmpIsSharedWithinASessionOnly(t *testing.T) {
	tool, a := sandboxed(t)
	name := "/tmp/corral-sandbox-" + filepath.Base(tool.Dir)
	run(t, a, "echo mine > "+name)
	if res := run(t, a, "cat "+name); res.Stdout != "mine\n" {
		t.Errorf("the session's next command does not see its /tmp: %+v", res)
	}
	b, err := tool.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if res := run(t, b, "cat "+name); res.ExitCode == 0 {
		t.Errorf("another session sees the first one's /tmp: %+v", res)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("the host's /tmp holds the session's file: %v", err)
	}
}

// A one-shot run in another directory keeps the Tool's workspace: a
// command cannot widen its own sandbox by naming a directory.
func TestSandboxedRunElsewhereKeepsTheWorkspace(t *testing.T) {
	tool, _ := sandboxed(t)
	sub := filepath.Join(tool.Dir, "sub")
	os.Mkdir(sub, 0o755)
	outside := testutil.OutsideTmp(t)
	res, err := tool.Run(context.Background(), Request{Command: "echo ok > ../top; echo x > " + outside + "/x", Dir: sub})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tool.Dir, "top")); err != nil {
		t.Errorf("a write to the workspace from a subdirectory failed: %v (%+v)", err, res)
	}
	res, err = tool.Run(context.Background(), Request{Command: "echo x > " + outside + "/x", Dir: outside})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); !os.IsNotExist(err) {
		t.Errorf("a run in a directory outside the workspace could write there: %+v", res)
	}
}

// A read-only session writes nothing, its workspace included, and still
// keeps its state from one command to the next.
func TestSandboxedReadOnlySessionKeepsStateAndWritesNothing(t *testing.T) {
	tool, _ := newTool(t)
	tool.Sandbox = corral.Sandbox{Mode: corral.SandboxReadOnly}
	// A read-only session's enclosure takes its state directory for its
	// workspace: its working directory is seen as the host's, so not under
	// /tmp, which is the sandbox's own.
	tool.Dir = testutil.OutsideTmp(t)
	s, err := tool.NewSession(context.Background())
	if errors.Is(err, proc.ErrSandboxUnavailable) {
		t.Skipf("SKIP: the sandbox cannot be built here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run(t, s, "export KEPT=yes; f() { echo fn; }; echo x > ./file; echo rc=$?")
	if _, err := os.Stat(filepath.Join(tool.Dir, "file")); !os.IsNotExist(err) {
		t.Errorf("a read-only session wrote its workspace: %v", err)
	}
	if res := run(t, s, "echo $KEPT; f"); res.Stdout != "yes\nfn\n" {
		t.Errorf("state not kept: %+v", res)
	}
	if sb := s.Sandbox(); sb == nil || sb.Mode != corral.SandboxReadOnly || len(sb.Writable) != 0 {
		t.Errorf("the session reports %+v", sb)
	}
}

// A sandboxed session keeps its state in memory, as a plain one does, and
// its commands see no other session's state (exported secrets included):
// the sandbox shows the session's own state directory, and over the
// host's /dev/shm its own. (In the cache directory, which the sandbox shows
// read-only, one sandboxed session could read another's.)
func TestSandboxedSessionStateIsInMemoryAndItsOwn(t *testing.T) {
	if shmStateDir() == "" {
		t.Skip("SKIP: /dev/shm is not a writable memory file system here: sandboxed sessions keep their state in the cache directory")
	}
	_, other := sandboxed(t)
	run(t, other, "export CORRAL_TEST_SECRET=hunter2")
	_, s := sandboxed(t)
	if filepath.Dir(s.dir) != "/dev/shm" {
		t.Errorf("the sandboxed session keeps its state in %s, want it in /dev/shm", s.dir)
	}
	run(t, s, "cd /; export MINE=1")
	res := run(t, s, `echo "$PWD $MINE"; cat `+other.dir+`/* 2>/dev/null | grep -c hunter2`)
	if !strings.HasPrefix(res.Stdout, "/ 1\n") {
		t.Errorf("the session's state did not carry over: %q %q", res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stdout, "\n1") {
		t.Errorf("a sandboxed command read another session's state: %q", res.Stdout)
	}
}
