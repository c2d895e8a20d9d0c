package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil/gone"
)

// testTag names the processes a test starts, in their environment
// (internal/testutil's convention; that package imports this one).
func testTag(t *testing.T) string {
	return fmt.Sprintf("cgroup-%s-%d", t.Name(), os.Getpid())
}

func TestSanitizeKeepsLabelsSafeAndShort(t *testing.T) {
	if got := sanitize("exec-01ab/../x y"); got != "exec-01ab____x_y" {
		t.Fatalf("got %q", got)
	}
	long := sanitize(string(make([]byte, 200)))
	if len(long) > 64 {
		t.Fatalf("label of %d bytes", len(long))
	}
}

func TestOpenRefusesCgroupsOutsideCorral(t *testing.T) {
	if _, err := Open("/sys/fs/cgroup/system.slice"); err == nil {
		t.Fatal("opened a cgroup corral does not own")
	}
}

// TestLeafLifecycle creates a leaf, checks it is empty, and removes it; it
// needs a writable cgroup v2 hierarchy (root here).
func TestLeafLifecycle(t *testing.T) {
	root, err := Detect()
	if err != nil {
		t.Skipf("SKIP: no cgroup tier here (run as root, or in a delegated cgroup v2): %v", err)
	}
	leaf, err := root.NewLeaf("unit-test")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(leaf.Path) != root.Owner || filepath.Dir(root.Owner) != root.Dir {
		t.Fatalf("leaf %s not in this process's directory %s under %s", leaf.Path, root.Owner, root.Dir)
	}
	if !IsRunLeaf(leaf.Rel()) {
		t.Fatalf("%s not recognised as a run's leaf", leaf.Rel())
	}
	if pop, err := leaf.Populated(); err != nil || pop {
		t.Fatalf("new leaf populated %v, %v", pop, err)
	}
	if pids, err := leaf.Procs(); err != nil || len(pids) != 0 {
		t.Fatalf("new leaf procs %v, %v", pids, err)
	}
	if err := leaf.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leaf.Path); !os.IsNotExist(err) {
		t.Fatalf("leaf still there: %v", err)
	}
}

func TestLeafNamesAreReadAsTheyAreWritten(t *testing.T) {
	n, ok := parseLeafName("812.4242.7-exec-01ab")
	if !ok || n.pid != 812 || n.start != 4242 || n.label != "exec-01ab" {
		t.Fatalf("got %+v %v", n, ok)
	}
	if n, ok := parseLeafName("812.4242.7"); !ok || n.label != "" {
		t.Fatalf("no label: got %+v %v", n, ok)
	}
	for _, bad := range []string{"probe-12", "812.x.7", "812.4242", "812.4242.x-y"} {
		if _, ok := parseLeafName(bad); ok {
			t.Errorf("%q read as a leaf name", bad)
		}
	}
	for _, in := range []string{"7-exec-01ab", "7"} {
		if _, _, ok := parseInnerName(in); !ok {
			t.Errorf("%q not read as a leaf's name in its owner's directory", in)
		}
	}
	if pid, start, ok := parseOwnerName("812.4242"); !ok || pid != 812 || start != 4242 {
		t.Errorf("owner name: %d %d %v", pid, start, ok)
	}
	for _, leaf := range []string{"/corral/812.4242.7-exec-01ab", "/user.slice/corral/812.4242.7 (deleted)", "/corral/812.4242/7-exec-01ab", "/user.slice/corral/812.4242/7 (deleted)"} {
		if !IsRunLeaf(leaf) {
			t.Errorf("a run's leaf %s not recognised", leaf)
		}
	}
	for _, not := range []string{"/system.slice/812.4242.7", "/corral", "/", "/corral/812.4242", "/system.slice/812.4242/7", "/corral/x.4242/7", "/corral/812.4242/x"} {
		if IsRunLeaf(not) {
			t.Errorf("%s, no run's leaf, recognised as one", not)
		}
	}
}

// rootOrSkip returns the cgroup tier's root, or skips where there is none.
func rootOrSkip(t *testing.T) *Root {
	t.Helper()
	root, err := Detect()
	if err != nil {
		t.Skipf("SKIP: no cgroup tier here (run as root, or in a delegated cgroup v2): %v", err)
	}
	return root
}

// sleepIn starts a tagged sleep born in leaf, and returns it.
func sleepIn(t *testing.T, leaf *Leaf, tag string) *exec.Cmd {
	t.Helper()
	fd, err := unix.Open(leaf.Path, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	cmd := exec.Command("sleep", "600")
	cmd.Env = append(os.Environ(), "CORRAL_TEST_TAG="+tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// exited waits (bounded) for cmd to end and reports whether SIGKILL ended it.
func killedBy(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("pid %d still runs 30 s after the kill", cmd.Process.Pid)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// TestKillOwnerKillsEveryLeafAtOnce: what a guardian does when its
// supervisor dies reaches every leaf the supervisor made, with one write.
func TestKillOwnerKillsEveryLeafAtOnce(t *testing.T) {
	root := rootOrSkip(t)
	tag := testTag(t)
	var cmds []*exec.Cmd
	var leaves []*Leaf
	for _, label := range []string{"one", "two"} {
		leaf, err := root.NewLeaf(label)
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, leaf)
		cmds = append(cmds, sleepIn(t, leaf, tag))
	}
	if err := KillOwner(root.Owner); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		if !killedBy(t, cmd) {
			t.Errorf("pid %d ended %v, want SIGKILL", cmd.Process.Pid, cmd.ProcessState)
		}
	}
	for _, leaf := range leaves {
		if !leaf.WaitEmpty(time.Now().Add(10*time.Second)) || leaf.Close() != nil {
			t.Errorf("leaf %s not emptied and removed", leaf.Path)
		}
	}
}

// TestMoveOutTakesALeafOutOfItsOwnersReach: a detached run's processes
// live in a leaf of their own outside their supervisor's directory, with
// their limits, found by their label, and the supervisor's death (its
// directory killed) does not reach them.
func TestMoveOutTakesALeafOutOfItsOwnersReach(t *testing.T) {
	root := rootOrSkip(t)
	tag := testTag(t)
	label := fmt.Sprintf("detach-%d", os.Getpid())
	leaf, err := root.NewLeaf(label)
	if err != nil {
		t.Fatal(err)
	}
	hasPids := slices.Contains(root.Controllers, "pids")
	if hasPids {
		if err := leaf.SetLimits(77, 0); err != nil {
			t.Fatal(err)
		}
	}
	cmd := sleepIn(t, leaf, tag)
	before := leaf.Path
	if err := leaf.MoveOut(); err != nil {
		t.Fatal(err)
	}
	if leaf.Path == before || filepath.Dir(leaf.Path) != root.Dir || !IsRunLeaf(leaf.Rel()) {
		t.Fatalf("moved to %s (rel %s), want a detached leaf in %s", leaf.Path, leaf.Rel(), root.Dir)
	}
	if _, err := os.Stat(before); !os.IsNotExist(err) {
		t.Errorf("the leaf it left is still there: %v", err)
	}
	if !leaf.Contains(cmd.Process.Pid) {
		t.Fatalf("pid %d is not in %s", cmd.Process.Pid, leaf.Rel())
	}
	if hasPids && readCgroupFile(filepath.Join(leaf.Path, "pids.max")) != "77\n" {
		t.Errorf("pids.max did not follow: %q", readCgroupFile(filepath.Join(leaf.Path, "pids.max")))
	}
	if p, ok := root.FindLabelled(label); !ok || p != leaf.Path {
		t.Errorf("FindLabelled(%q) = %s %v, want %s", label, p, ok, leaf.Path)
	}
	if err := KillOwner(root.Owner); err != nil {
		t.Fatal(err)
	}
	if st, err := procfs.ReadStat(cmd.Process.Pid); err != nil || st.Zombie() {
		t.Fatalf("the detached process died with its owner's directory: %+v %v", st, err)
	}
	if err := leaf.Kill(); err != nil {
		t.Fatal(err)
	}
	if !killedBy(t, cmd) {
		t.Errorf("ended %v, want SIGKILL", cmd.ProcessState)
	}
	if !leaf.WaitEmpty(time.Now().Add(10*time.Second)) || leaf.Close() != nil {
		t.Errorf("leaf %s not emptied and removed", leaf.Path)
	}
}

// TestSweepRemovesWhatDeadSupervisorsLeft: the directory of a supervisor
// that is gone, its empty leaves and its detached leaves once empty are
// removed by the next process's sweep; a live supervisor's are not.
func TestSweepRemovesWhatDeadSupervisorsLeft(t *testing.T) {
	root := rootOrSkip(t)
	st := gone.Process(t)
	dead := fmt.Sprintf("%d.%d", st.Pid, st.Start)
	made := []string{
		filepath.Join(root.Dir, dead),
		filepath.Join(root.Dir, dead, "3-x"),
		filepath.Join(root.Dir, dead, "4"),
		filepath.Join(root.Dir, dead+".5-y"),
	}
	for _, d := range made {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeOwner(made[0]); unix.Rmdir(made[3]) })
	live, err := root.NewLeaf("live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// A sweep looks at sweepAtMost directories, from a random place; the
	// machine's other supervisors may be more: sweep until they are gone.
	for i := 0; i < sweepsEnough(root) && !allGone(made); i++ {
		root.sweep()
	}
	for _, d := range made {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left by a dead supervisor is still there: %v", d, err)
		}
	}
	if _, err := os.Stat(live.Path); err != nil {
		t.Errorf("a live supervisor's leaf was swept: %v", err)
	}
}

// sweepsEnough is how many sweeps clear what dead supervisors left among
// the directories there are now, with room to spare: each looks at
// sweepAtMost of them from a random place.
func sweepsEnough(root *Root) int {
	ents, _ := os.ReadDir(root.Dir)
	return 50 + 20*len(ents)/sweepAtMost
}

// allGone reports whether none of dirs is there any more.
func allGone(dirs []string) bool {
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			return false
		}
	}
	return true
}

// TestSweepLooksAtABoundedNumberOfDirectories: a sweep looks at
// sweepAtMost directories of the corral-owned directory at most (each is
// a read of /proc), however many supervisors are alive on the machine or
// left theirs behind; what dead supervisors left still goes within a few
// sweeps.
func TestSweepLooksAtABoundedNumberOfDirectories(t *testing.T) {
	root := rootOrSkip(t)
	st := gone.Process(t)
	var made []string
	for i := range 3 * sweepAtMost {
		d := filepath.Join(root.Dir, fmt.Sprintf("%d.%d", st.Pid, st.Start+uint64(i)))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		made = append(made, d)
	}
	t.Cleanup(func() {
		for _, d := range made {
			unix.Rmdir(d)
		}
	})
	left := func() int {
		n := 0
		for _, d := range made {
			if _, err := os.Stat(d); err == nil {
				n++
			}
		}
		return n
	}
	root.sweep()
	if removed := len(made) - left(); removed > sweepAtMost {
		t.Fatalf("one sweep removed %d directories of dead supervisors: it looked at more than %d", removed, sweepAtMost)
	}
	sweeps, enough := 1, sweepsEnough(root)
	for ; sweeps < enough && left() > 0; sweeps++ {
		root.sweep()
	}
	if n := left(); n > 0 {
		t.Fatalf("%d of %d directories of dead supervisors left after %d sweeps", n, len(made), sweeps)
	}
	t.Logf("%d directories of dead supervisors gone after %d sweeps", len(made), sweeps)
}

// TestFindMountAgreesWithMountinfo: the statfs shortcut finds the mount
// that /proc/self/mountinfo names, where there is one.
func TestFindMountAgreesWithMountinfo(t *testing.T) {
	want, err := mountFromMountinfo()
	if err != nil {
		t.Skipf("SKIP: no cgroup v2 hierarchy mounted here: %v", err)
	}
	if got, err := findMount(); err != nil || got != want {
		t.Fatalf("findMount() = %q, %v; mountinfo says %q", got, err, want)
	}
}
