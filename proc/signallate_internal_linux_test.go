package proc

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
	"github.com/corralrun/corral/internal/testutil/sleeper"
)

// oneTree is a tree of one process, whose signals it records.
type oneTree struct {
	k    procKey
	sent int
}

func (t *oneTree) members() []procKey { return []procKey{t.k} }
func (t *oneTree) signalMember(k procKey, sigs ...unix.Signal) error {
	t.sent++
	return nil
}
func (t *oneTree) kill() []procKey                 { return nil }
func (t *oneTree) claim(*reaper.Zombie) bool       { return false }
func (t *oneTree) release(bool) (kept func() bool) { return nil }
func (t *oneTree) cgroupPath() string              { return "" }

// TestLateLookStillSignalsAnEarlyExec: a process that ran another program
// when the stop signal went out (a shell's child between its fork and its
// exec, which loses the signal in the shell's handler) is signalled again
// once it has executed its command, within execWindow of the signal. The
// window is judged by when it executed: a supervisor that first looks two
// seconds after the signal (starved, say) still signals it. Once a look has
// found it running the first program past the window, what it executes
// after is its own (a handler that runs a clean-up program) and is not
// signalled.
func TestLateLookStillSignalsAnEarlyExec(t *testing.T) {
	pid := sleeper.Start(t).Process.Pid
	var now string
	for deadline := time.Now().Add(10 * time.Second); ; {
		if now = image(pid); now != "" && now != image(unix.Getpid()) {
			break // executed
		}
		if time.Now().After(deadline) {
			t.Fatal("sleep did not execute in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	st, err := procfs.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	k := procKey{pid: pid, start: st.Start}
	stall := procfs.CPUStall()
	signalled := func(was sentProc) (int, sentProc) {
		t.Helper()
		tr := &oneTree{k: k}
		sent := map[procKey]sentProc{k: was}
		signalLate(tr, unix.SIGTERM, sent)
		return tr.sent, sent[k]
	}
	long := time.Now().Add(-2 * time.Second)
	before := sentProc{image: "/bin/bash", at: long, wait: ownWait(pid, stall), stall: stall}
	if n, _ := signalled(before); n != 1 {
		t.Errorf("a command executed since the signal, first looked at 2 s after it: signalled %d times, want once", n)
	}
	same := sentProc{image: now, at: long, wait: ownWait(pid, stall), stall: stall}
	n, was := signalled(same)
	if n != 0 || !was.past {
		t.Fatalf("the same program 2 s after the signal: signalled %d times, past %v; want none, past", n, was.past)
	}
	was.image = "/bin/bash" // as if it executed after that look
	if n, _ := signalled(was); n != 0 {
		t.Errorf("a program executed after a look past the window: signalled %d times, want none", n)
	}
}

// TestLateLookCountsTheProcesssOwnWait: a shell's child that waited on a
// busy CPU's run queue, between its fork and its exec, longer than the
// window is not past the window: the machine's CPU stall, a mean over its
// CPUs, may be far less than that one process's wait, and the process's
// own wait counts even where the machine's is read.
func TestLateLookCountsTheProcesssOwnWait(t *testing.T) {
	pid := sleeper.Start(t).Process.Pid
	st, err := procfs.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	k := procKey{pid: pid, start: st.Start}
	// Two seconds since the signal, the machine hardly stalled meanwhile,
	// and the process queued for 1.9 s of them.
	real := runWait
	runWait = func(int) time.Duration { return 1900 * time.Millisecond }
	defer func() { runWait = real }()
	tr := &oneTree{k: k}
	was := sentProc{image: image(pid), at: time.Now().Add(-2 * time.Second), stall: procfs.CPUStall()}
	if was.stall == 0 {
		was.stall = time.Hour // the machine's stall as if read, and not grown since
	}
	sent := map[procKey]sentProc{k: was}
	signalLate(tr, unix.SIGTERM, sent)
	if sent[k].past {
		t.Fatal("a process that waited 1.9 s of the 2 s since the signal for a CPU was judged past the 250 ms window")
	}
}
