package statedir

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

const helperEnv = "CORRAL_STATEDIR_TEST_BASE"

// TestMain lets the test binary be a process that makes a state directory
// in $CORRAL_STATEDIR_TEST_BASE, prints its path and waits for stdin to
// close.
func TestMain(m *testing.M) {
	if base := os.Getenv(helperEnv); base != "" {
		dir, err := Make(base, "corral-session-")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(dir)
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// owned starts a process that makes a state directory in base; the
// returned function ends it and waits for it.
func owned(t *testing.T, base string) (string, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+base)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, base) {
		t.Fatalf("the helper said %q: %v", line, err)
	}
	end := func() { in.Close(); cmd.Wait() }
	t.Cleanup(end)
	return strings.TrimSpace(line), end
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// A killed corral's session state (its variables, exported secrets
// included) stayed in /dev/shm forever. Reap removes a dead owner's, and
// nothing else: not a live owner's, not one whose pid is alive but was
// given to another process (another start time), not one of another pid
// namespace, another user or a name that says no owner.
func TestReapRemovesOnlyTheDeadOwnersState(t *testing.T) {
	base := t.TempDir()
	dead, end := owned(t, base)
	end()
	live, _ := owned(t, base)
	mine, err := Make(base, "corral-session-")
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(mine); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", fi.Mode().Perm())
	}
	mk := func(name string) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	reused := mk(fmt.Sprintf("corral-session-%d.%d.%d-1", self().ns, self().pid, self().start+1))
	otherNS := mk(fmt.Sprintf("corral-session-%d.%d.%d-1", self().ns+1, 999999999, 5))
	old := mk("corral-session-123456789")
	otherPrefix := mk(fmt.Sprintf("corral-other-%d.%d.%d-1", self().ns, 999999999, 5))
	otherUser := mk(fmt.Sprintf("corral-session-%d.%d.%d-2", self().ns, 999999999, 5))
	if os.Geteuid() == 0 {
		os.Chown(otherUser, 65534, 65534)
	} else {
		otherUser = ""
	}
	os.WriteFile(filepath.Join(dead, "c1.env"), []byte("SECRET=1"), 0o600)

	if n := Reap(base, "corral-session-"); n != 2 {
		t.Errorf("reaped %d, want 2", n)
	}
	for _, p := range []string{dead, reused} {
		if exists(p) {
			t.Errorf("%s is left", p)
		}
	}
	for _, p := range []string{live, mine, otherNS, old, otherPrefix, otherUser} {
		if p != "" && !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
}

// A zombie owner is gone: it can no longer use its state.
func TestReapTakesAZombieForGone(t *testing.T) {
	base := t.TempDir()
	cmd := exec.Command("true")
	cmd.Start()
	t.Cleanup(func() { cmd.Wait() })
	testutil.WaitFor(t, 10*time.Second, "the child a zombie", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		return strings.Contains(string(b), ") Z ")
	})
	o := owner{ns: self().ns, pid: cmd.Process.Pid}
	if s, err := readStart(o.pid); err == nil {
		o.start = s
	}
	p := filepath.Join(base, "corral-shell-"+o.tag()+"x")
	os.Mkdir(p, 0o700)
	if Reap(base, "corral-shell-") != 1 || exists(p) {
		t.Error("a zombie's state was kept")
	}
}
