package proc

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeChild is a tree whose processes change state on a script, to test
// the decisions taken after SIGKILL without needing a starved machine or a
// hung file system.
type fakeChild struct {
	mu      sync.Mutex
	exit    chan struct{}
	state   func(since time.Duration) (stuck []stuckProc, others int)
	started time.Time
}

func newFakeChild(state func(time.Duration) ([]stuckProc, int)) *fakeChild {
	return &fakeChild{exit: make(chan struct{}), state: state, started: time.Now()}
}

func (c *fakeChild) handle() Handle                      { return Handle{} }
func (c *fakeChild) note() string                        { return "" }
func (c *fakeChild) limitsNote() string                  { return "" }
func (c *fakeChild) exited() <-chan struct{}             { return c.exit }
func (c *fakeChild) signalMain(syscall.Signal) error     { return nil }
func (c *fakeChild) killTree() []procKey                 { return nil }
func (c *fakeChild) signalTree(syscall.Signal) []procKey { return nil }

func (c *fakeChild) stopTree(syscall.Signal) (map[procKey]sentProc, []procKey) { return nil, nil }

func (c *fakeChild) signalLate(syscall.Signal, map[procKey]sentProc) []procKey { return nil }
func (c *fakeChild) finish(bool) (exitStatus, error)                           { return exitStatus{}, nil }

func (c *fakeChild) dying() ([]stuckProc, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state(time.Since(c.started))
}

func (c *fakeChild) alive() int {
	stuck, others := c.dying()
	return len(stuck) + others
}

// TestKilledButUnscheduledIsNotASurvivor: a process still runnable after
// SIGKILL (a starved machine has not run it yet) is waited for until it
// dies, and the run reports no survivor.
func TestKilledButUnscheduledIsNotASurvivor(t *testing.T) {
	c := newFakeChild(func(since time.Duration) ([]stuckProc, int) {
		if since < 600*time.Millisecond {
			return nil, 1 // runnable, waiting for a CPU
		}
		return nil, 0
	})
	close(c.exit)
	p := &Process{child: c}
	if !p.waitDying() {
		t.Fatalf("waitDying gave up on a runnable process: %q", p.res.SurvivorNote)
	}
}

// TestStuckInTheKernelIsASurvivorWithItsState: a process that stays in
// uninterruptible sleep is reported, with its pid, name and state, soon
// after stuckAfter, not after killWait.
func TestStuckInTheKernelIsASurvivorWithItsState(t *testing.T) {
	c := newFakeChild(func(time.Duration) ([]stuckProc, int) {
		return []stuckProc{{pid: 4242, comm: "cat", state: 'D'}}, 0
	})
	p := &Process{child: c}
	start := time.Now()
	if p.waitDying() {
		t.Fatal("waitDying reported a stuck tree gone")
	}
	if took := time.Since(start); took < stuckAfter || took > killWait/2 {
		t.Errorf("gave up after %v; want about %v", took, stuckAfter)
	}
	if want := "pid 4242 (cat) in state D"; !strings.Contains(p.res.SurvivorNote, want) {
		t.Errorf("note %q lacks %q", p.res.SurvivorNote, want)
	}
}

// TestBrieflyUninterruptibleIsWaitedFor: a process in state D for less than
// stuckAfter (a page fault, a short read) that then dies is not a survivor.
func TestBrieflyUninterruptibleIsWaitedFor(t *testing.T) {
	c := newFakeChild(func(since time.Duration) ([]stuckProc, int) {
		switch {
		case since < stuckAfter/2:
			return []stuckProc{{pid: 7, comm: "dd", state: 'D'}}, 0
		case since < stuckAfter:
			return nil, 1
		}
		return nil, 0
	})
	close(c.exit)
	p := &Process{child: c}
	if !p.waitDying() {
		t.Fatalf("waitDying gave up: %q", p.res.SurvivorNote)
	}
}
