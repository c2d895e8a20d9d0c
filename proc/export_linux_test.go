package proc

import (
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// SweepBoxTmps is sweepBoxTmps, for the tests of proc_test.
var SweepBoxTmps = sweepBoxTmps

// MaxLockedClocks is how many runs may hold a thread for corral's own
// clock at once.
const MaxLockedClocks = maxLockedClocks

// LockedClocksPeak returns the most clocks that were locked at once since
// the last call, and starts the count again from those locked now.
func LockedClocksPeak() int64 {
	return lockedPeak.Swap(lockedNow.Load())
}

// TookThread reports whether p's run locked corral's own clock, a thread
// of its own, at some time.
func TookThread(p *Process) bool { return p.clock.took }

// SetDrainSettle sets how long a drain shorter than a second waits for
// the pipes on the runtime before it locks corral's own clock, and returns
// what puts it back.
func SetDrainSettle(d time.Duration) (restore func()) {
	old := drainSettle.Swap(int64(d))
	return func() { drainSettle.Store(old) }
}

// WatchInitsExiting has each release of an init whose tree is gone wait,
// up to d, for the init to have exited by itself before it asks it to,
// and report through went whether it had; restore undoes it.
func WatchInitsExiting(d time.Duration, went func(bool)) (restore func()) {
	beforeExitSent = func(c *initChild) {
		// The init is this process's child, not reaped yet: its pid is
		// its own.
		fd, err := unix.PidfdOpen(c.init, 0)
		if err != nil {
			went(false)
			return
		}
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, _ := unix.Poll(fds, int(d/time.Millisecond))
		went(n > 0)
	}
	return func() { beforeExitSent = nil }
}

// LeanStarts counts the starts made from the lean thread.
func LeanStarts() int64 { return lean.starts.Load() }

// LeanRunning reports whether the lean thread exists.
func LeanRunning() bool {
	lean.mu.Lock()
	defer lean.mu.Unlock()
	return lean.reqs != nil
}

// LeanIdle is how long the lean thread outlives its last start.
const LeanIdle = leanIdle

// LeanKeep is how many children the lean thread may hand to the main thread.
const LeanKeep = leanKeep

// LeanTids returns the lean threads' tids, none while there are none.
func LeanTids() []int {
	lean.mu.Lock()
	defer lean.mu.Unlock()
	return append([]int(nil), lean.tids...)
}

// StartedAhead counts the inits started ahead of runs.
func StartedAhead() int64 { return warm.started.Load() }

// TakenAhead counts the runs that took an init started ahead.
func TakenAhead() int64 { return warm.taken.Load() }

// StartingAhead reports whether inits are being started ahead.
func StartingAhead() bool {
	warm.mu.Lock()
	defer warm.mu.Unlock()
	return len(warm.running) > 0
}

// ForgetStarts forgets the starts that found no idle init and lets go of
// the idle inits of plain runs: the next plain start of an init's tier is
// a lone one.
func ForgetStarts() {
	// The starters at work stop after the start they are making, which
	// lands in the pool before it is emptied below.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		warm.mu.Lock()
		warm.lastCold = nil
		clear(warm.want)
		busy := len(warm.running) > 0
		warm.mu.Unlock()
		if !busy || time.Now().After(deadline) {
			break
		}
	}
	var out []*idleInit
	pool.mu.Lock()
	for key, list := range pool.idle {
		if !strings.HasPrefix(key, "enclosure:") {
			out = append(out, list...)
			delete(pool.idle, key)
		}
	}
	pool.mu.Unlock()
	letGoAll(out)
}

// NativeInitOff reports whether a start refused the native init's
// program, so that this process's plain runs use the Go init.
func NativeInitOff() bool { return nativeOff.Load() }

// NativeInitState says whether the native init is on, and if not, which
// refused start turned it off: for the messages of tests that need it.
func NativeInitState() string {
	state := "the native init is on"
	if nativeOff.Load() {
		why := "(no cause recorded)"
		if w := nativeOffWhy.Load(); w != nil {
			why = *w
		}
		state = "the native init was turned off by a refused start: " + why
	}
	if w := nativePlanWhy.Load(); w != nil {
		state += "; the last sandbox it was not given: " + *w
	}
	return state
}

// RefuseInitStarts has the starts of inits fail with what refuse returns
// for their kind (nil: start), and returns what undoes it, turning the
// native init on again.
func RefuseInitStarts(refuse func(native bool) error) (restore func()) {
	startRefused.Store(&refuse)
	return func() {
		startRefused.Store(nil)
		// The pool's starters at work end their starts first: a start
		// refused before this turns the native init off before it is
		// turned on again here.
		ForgetStarts()
		nativeOff.Store(false)
		nativeOffWhy.Store(nil)
	}
}

// Guardian returns the pid of this process's guardian, 0 while it has
// none, and whether it is the native one.
func Guardian() (pid int, native bool) {
	if g := guardian.g; g != nil {
		return g.Pid(), g.Native()
	}
	return 0, false
}

// EarlyForks counts the sandboxes' inits forked while their box was made.
func EarlyForks() int64 { return earlyForks.Load() }

// HoldChores holds the chores of the sandboxed runs started from now on
// (their sweep made due) until release is called.
func HoldChores() (release func()) {
	ch := make(chan struct{})
	choresHeld.Store(&ch)
	boxTmpSweep.mu.Lock()
	boxTmpSweep.last = time.Time{}
	boxTmpSweep.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			choresHeld.Store(nil)
			close(ch)
		})
	}
}

// DelayGuardian delays the start of this process's guardian by d.
func DelayGuardian(d time.Duration) { guardianDelay.Store(int64(d)) }
