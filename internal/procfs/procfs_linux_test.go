package procfs

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil/sleeper"
)

func TestParseStatReadsNamesWithSpacesAndParentheses(t *testing.T) {
	line := "4242 (my (odd) name) S 1 4242 4240 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 10 18446744073709551615\n"
	st, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Pid: 4242, PPid: 1, Pgid: 4242, Sid: 4240, State: 'S', Threads: 1, Start: 123456, Comm: "my (odd) name", Flags: 4194560}
	if st != want {
		t.Fatalf("got %+v, want %+v", st, want)
	}
}

func TestParseStatRefusesGarbage(t *testing.T) {
	for _, bad := range []string{"", "12 (x", "x (y) S 1 2 3", "12 (y) S a b c 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) did not fail", bad)
		}
	}
}

func TestReadStatOfThisProcess(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil || st.Pid != os.Getpid() || st.PPid != os.Getppid() || st.Start == 0 {
		t.Fatalf("got %+v, %v", st, err)
	}
	if st.Kernel() {
		t.Fatal("this process reads as a kernel thread")
	}
	if k, err := ReadStat(2); err == nil && k.PPid == 0 && k.Comm == "kthreadd" && !k.Kernel() {
		t.Fatalf("kthreadd does not read as a kernel thread: %+v", k)
	}
	if _, err := ReadStat(1 << 30); err == nil {
		t.Fatal("a pid that cannot exist was read")
	}
}

func TestScanSinceSharesAScanThatBeganLateEnough(t *testing.T) {
	a, err := ScanSince(time.Now())
	if err != nil || len(a) == 0 {
		t.Fatalf("scan: %d %v", len(a), err)
	}
	found := false
	for _, st := range a {
		found = found || st.Pid == os.Getpid()
	}
	if !found {
		t.Fatal("this process is not in the scan")
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseStat(b) // must not panic
	})
}

func TestMemory(t *testing.T) {
	rss, err := Memory(0, "VmRSS")
	if err != nil || rss < 1<<20 {
		t.Fatalf("VmRSS of the test process: %d, %v", rss, err)
	}
	peak, err := Memory(os.Getpid(), "VmHWM")
	if err != nil || peak < rss {
		t.Fatalf("VmHWM %d below VmRSS %d (%v)", peak, rss, err)
	}
	if _, err := Memory(0, "NoSuchField"); err == nil {
		t.Fatal("a missing field was read")
	}
}

func TestDescendantsFindsGrandchildren(t *testing.T) {
	cmd := exec.Command("bash", "-c", "sleep 30 & sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := Descendants(os.Getpid())
		sleeps := 0
		for _, st := range d {
			if st.Comm == "sleep" && st.PPid == cmd.Process.Pid {
				sleeps++
			}
		}
		if sleeps == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("descendants %+v: want two sleeps under %d", d, cmd.Process.Pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, st := range Descendants(cmd.Process.Pid) {
		if st.Pid == cmd.Process.Pid {
			t.Errorf("Descendants includes its root")
		}
	}
}

// TestFreezeKillCountsEachProcessOnce: a process killed by the freeze and
// still there at the last look (here a zombie this test has not reaped,
// listed from a stale snapshot, as a process still dying is) is not killed
// and counted again: an init's count of what it killed is exact.
func TestFreezeKillCountsEachProcessOnce(t *testing.T) {
	var snapshot []Stat
	var cmds []*exec.Cmd
	for range 3 {
		c := sleeper.Start(t)
		cmds = append(cmds, c)
		st, err := ReadStat(c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		snapshot = append(snapshot, st)
	}
	killed := FreezeKill(func() []Stat { return snapshot })
	if len(killed) != len(snapshot) {
		t.Fatalf("killed %d, want each of the %d once: %+v", len(killed), len(snapshot), killed)
	}
	for _, c := range cmds {
		if err := c.Wait(); err == nil || c.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("pid %d: %v, want killed", c.Process.Pid, err)
		}
	}
}

// TestFreezeKillLeavesWhatIsExiting: a process of one thread that is
// already in the kernel's exit (the kernel's PF_EXITING flag in its stat)
// is on its way out by itself: FreezeKill neither stops, kills nor counts
// it, so that a run whose leftover closed its pipes as it exited does not
// report it killed. A process of more threads with that flag (its main
// thread gone, the others running on) is still killed. The flag is set in
// the snapshot here: nothing holds a real process in its exit for long.
func TestFreezeKillLeavesWhatIsExiting(t *testing.T) {
	c := sleeper.Start(t)
	st, err := ReadStat(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.Exiting() {
		t.Fatalf("a sleeping process reads as exiting: %+v", st)
	}
	exiting := st
	exiting.Flags |= pfExiting
	if killed := FreezeKill(func() []Stat { return []Stat{exiting} }); len(killed) != 0 {
		t.Fatalf("killed %+v, a process already in its exit", killed)
	}
	if now, err := ReadStat(c.Process.Pid); err != nil || now.Stopped() || now.Zombie() {
		t.Fatalf("the process left alone reads %+v (%v), want it neither stopped nor killed", now, err)
	}
	threaded := exiting
	threaded.Threads = 2
	if killed := FreezeKill(func() []Stat { return []Stat{threaded} }); len(killed) != 1 {
		t.Fatalf("killed %+v, want the process of two threads whose main one exits", killed)
	}
	if err := c.Wait(); err == nil || c.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("%v, want killed", err)
	}
}

// TestRunWaitAndCPUStallRead reads the scheduler's counters: a task that
// ran has a schedstat line, a missing one reads 0, and the machine's stall
// time never goes back.
func TestRunWaitAndCPUStallRead(t *testing.T) {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		t.Skip("SKIP: this kernel has no /proc/PID/schedstat")
	}
	if w := RunWait(os.Getpid()); w < 0 {
		t.Errorf("own run-queue wait %v", w)
	}
	if w := RunWait(1 << 30); w != 0 {
		t.Errorf("a missing task waited %v", w)
	}
	a := CPUStall()
	for range 1_000_000 {
	}
	if b := CPUStall(); b < a {
		t.Errorf("CPU stall went back: %v then %v", a, b)
	}
}

func TestUnescapeMountinfoDecodesOctalEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`/sys/fs/cgroup/with\040space`: "/sys/fs/cgroup/with space",
		`/plain`:                       "/plain",
		`/ends\134`:                    `/ends\`,
		`/tab\011and\012line`:          "/tab\tand\nline",
		`/cut\04`:                      `/cut\04`,
		`/notoctal\9x9`:                `/notoctal\9x9`,
		`\`:                            `\`,
	} {
		if got := UnescapeMountinfo(in); got != want {
			t.Errorf("UnescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHasTokenSeesAProcessThroughItsExecs watches a shell that replaces
// itself a thousand times, its token in its environment all along: every
// look while it lives must find the token, including looks that land in
// the middle of an execve, when the process has neither command line nor
// environment for a moment.
func TestHasTokenSeesAProcessThroughItsExecs(t *testing.T) {
	token := fmt.Sprintf("procfstest_%d_%d", os.Getpid(), time.Now().UnixNano())
	const execs = 1000
	script := `N=$((N-1)); if [ "$N" -gt 0 ]; then exec /bin/sh -c "$0" "$0"; fi`
	cmd := exec.Command("/bin/sh", "-c", script, script)
	cmd.Env = append(os.Environ(), "N="+strconv.Itoa(execs), "TOKEN="+token)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill() // by its pid, which this test's Wait holds
		<-done
	})
	pid := cmd.Process.Pid
	looks, misses := 0, 0
	for {
		select {
		case err := <-done:
			done <- err
			if err != nil {
				t.Fatalf("the shell failed: %v", err)
			}
			if looks < execs/10 {
				t.Fatalf("only %d looks at the shell", looks)
			}
			if misses > 0 {
				t.Fatalf("%d of %d looks at a live process did not find its token", misses, looks)
			}
			t.Logf("%d looks, every one found the token", looks)
			return
		default:
		}
		looks++
		if HasToken(pid, token) {
			continue
		}
		// No: right only if the shell is exiting or has exited (its
		// memory, and with it its environment, goes early in the kernel's
		// exit; its stat reads zombie after, until this test's Wait reaps
		// it).
		if st, err := ReadStat(pid); err == nil && !st.Exiting() {
			misses++
		}
	}
}

// TestASignalThatKillsBeforeTheNextCounts: a stop signal is followed by
// SIGCONT; a process that died of the first and was reaped (by its
// parent, an init that reaps at once) before the second was reached by
// corral's signal, and Signal says so. The test reaps it between the two
// signals itself, through the hook a loaded machine would take the place
// of.
func TestASignalThatKillsBeforeTheNextCounts(t *testing.T) {
	c := sleeper.Start(t)
	st, err := ReadStat(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	reaped := false
	betweenSignals = func(pid int) {
		if pid == c.Process.Pid && !reaped {
			reaped = true
			c.Wait()
		}
	}
	defer func() { betweenSignals = nil }()
	if err := Signal(st.Pid, st.Start, syscall.SIGTERM, syscall.SIGCONT); err != nil {
		t.Fatalf("Signal of a process its first signal killed: %v, want nil (it was signalled)", err)
	}
	if !reaped {
		t.Fatal("the hook between the signals did not run")
	}
	if ws := c.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the process ended %v, want by SIGTERM", ws)
	}
	// Gone before the first signal: not signalled.
	if err := Signal(st.Pid, st.Start, syscall.SIGTERM, syscall.SIGCONT); err == nil {
		t.Fatal("Signal of a reaped process: nil, want ErrGone")
	}
}
