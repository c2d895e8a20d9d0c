package testutil

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/shim"
)

// Tagged returns the live processes whose command line or environment
// carries tag. Zombies are reported by Zombies, not here: a zombie has
// neither command line nor environment left.
func Tagged(tag string) []procfs.Stat {
	all, _ := procfs.Scan()
	self := os.Getpid()
	var out []procfs.Stat
	for _, st := range all {
		if st.Pid == self || st.Zombie() {
			continue
		}
		if procfs.HasToken(st.Pid, tag) {
			out = append(out, st)
		}
	}
	return out
}

// KillTagged sends SIGKILL to every live process carrying tag, by pid and
// start time, waits up to two seconds for them to die, reaps those that
// were reparented to this process, and returns how many it found. Only
// processes a test tagged itself carry the tag, so nothing else is touched.
func KillTagged(tag string) int {
	// A victim may fork between the listing and the kill: go round until a
	// round finds nothing.
	n := 0
	for round := 0; round < 20; round++ {
		k := killTaggedOnce(tag)
		if k == 0 {
			break
		}
		n += k
	}
	return n
}

func killTaggedOnce(tag string) int {
	victims := Tagged(tag)
	for _, st := range victims {
		procfs.Signal(st.Pid, st.Start, unix.SIGKILL)
	}
	self := os.Getpid()
	Eventually(2*time.Second, func() bool {
		for _, v := range victims {
			st, err := procfs.ReadStat(v.Pid)
			if err != nil || st.Start != v.Start {
				continue
			}
			if !st.Zombie() {
				return false
			}
			if st.PPid == self {
				var ws unix.WaitStatus
				if got, _ := unix.Wait4(v.Pid, &ws, unix.WNOHANG, nil); got == 0 {
					return false // a multithreaded zombie still exiting
				}
			}
		}
		return true
	})
	return len(victims)
}

// Zombies returns the zombie children of this process: with corral as a
// subreaper, every orphan of a run comes here, so a zombie here is a
// process corral failed to reap.
func Zombies() []procfs.Stat {
	all, _ := procfs.Scan()
	self := os.Getpid()
	var out []procfs.Stat
	for _, st := range all {
		if st.PPid == self && st.Zombie() {
			out = append(out, st)
		}
	}
	return out
}

// AssertNoTagged fails the test if any live process carries tag after
// waiting up to timeout for them to go. It kills them before failing.
func AssertNoTagged(t testing.TB, tag string, timeout time.Duration) {
	t.Helper()
	// One scan of /proc is not a snapshot: a process may exit before it is
	// read, after forking a child the listing came too early to hold. Two
	// clean scans in a row are trusted.
	clean := func() bool { return len(Tagged(tag)) == 0 && len(Tagged(tag)) == 0 }
	if Eventually(timeout, clean) {
		return
	}
	left := Tagged(tag)
	KillTagged(tag)
	t.Fatalf("%d processes tagged %s survived: %v", len(left), tag, left)
}

// AssertNoZombies fails the test if this process has zombie children left
// after waiting up to timeout for them to be reaped.
func AssertNoZombies(t testing.TB, timeout time.Duration) {
	t.Helper()
	if Eventually(timeout, func() bool { return len(Zombies()) == 0 }) {
		return
	}
	t.Fatalf("zombie children left: %v", Zombies())
}

// FDs returns how many file descriptors this process has open.
func FDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// UnkeptFDs returns how many file descriptors this process has open,
// leaving out those corral keeps beyond any run (its guardian's pipe, its
// idle inits' sockets and pidfds, whose number the pool bounds): what its
// runs hold, and the process's own.
func UnkeptFDs() int { return len(fdTargets()) }

// CheckFDs records the descriptor count now and, when the test ends, fails
// it if the count has not come back to that within a few seconds, naming
// what the new descriptors point to.
//
// A test checks once, from its first call: a later call of the same test
// (a second fixture) would take a count that the first fixture's pools,
// still open and growing, make wrong.
func CheckFDs(t testing.TB) {
	t.Helper()
	if _, dup := checkingFDs.LoadOrStore(t, true); dup {
		return
	}
	// The runtime's network poller opens its descriptors on first use and
	// keeps them: start it now, so they are not taken for a leak.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	before := fdTargets()
	t.Cleanup(func() {
		defer checkingFDs.Delete(t)
		if !Eventually(5*time.Second, func() bool { return len(fdTargets()) <= len(before) }) {
			var leaked []string
			for fd, target := range fdTargets() {
				if before[fd] != target {
					leaked = append(leaked, fd+" -> "+target)
				}
			}
			t.Errorf("file descriptors leaked: %d before, %d after: %v", len(before), len(fdTargets()), leaked)
		}
	})
}

// checkingFDs holds the tests whose descriptors CheckFDs checks.
var checkingFDs sync.Map

// fdTargets maps each open descriptor to what it points to, leaving out
// those corral keeps beyond any run (its guardian's, its idle inits').
func fdTargets() map[string]string {
	ents, _ := os.ReadDir("/proc/self/fd")
	out := make(map[string]string, len(ents))
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && shim.Kept(fd) {
			continue
		}
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out[e.Name()] = target
	}
	return out
}

// ReapZombies reaps every zombie child of this process. Call it only when
// nothing else in the test binary waits for a child, e.g. after a process
// group tier test let escapees reparent to this (subreaper) process on
// purpose.
func ReapZombies() {
	for _, st := range Zombies() {
		var ws unix.WaitStatus
		unix.Wait4(st.Pid, &ws, unix.WNOHANG, nil)
	}
}

// PeakRSS returns the peak resident set size of process pid (0: the test
// process) in bytes, failing the test when it cannot be read.
func PeakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	n, err := procfs.Memory(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
