package proc

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
)

// ownClock is corral's own clock for one run's teardown (see Timeline):
// the supervising goroutine locks its OS thread, waits on it in the
// kernel, and counts that thread's run-queue wait as the machine's. Other
// goroutines wake such a wait with poke (a Stop, the context's end, an
// output stream's end).
type ownClock struct {
	locked  bool
	took    bool // locked at some time in this run
	tid     int
	samples [8]clockSample // the latest, in a ring
	n       int

	mu   sync.Mutex // guards wake, which poke may use from any goroutine
	wake int        // an eventfd the waits also poll, while locked; else -1

	// What the process's other threads waited for a CPU from shortly
	// before a nap ended at an action's due time to the goroutine's first
	// instruction after it (see nap).
	near   time.Duration
	nearAt time.Time

	// How long the thread slept past the end it gave the kernel, in a nap
	// that ended at an action's due time (see nap).
	overslept time.Duration

	// When, since the last event, the thread was blocked in the kernel in
	// calls that do not wait by design (see kernel).
	blocked []blockedSpell
}

// blockedSpell is a call that was blocked in the kernel for d, and ended at
// end.
type blockedSpell struct {
	end time.Time
	d   time.Duration
}

// nearDue is how long before a nap's end at an action's due time the
// process's threads are looked at.
const nearDue = 5 * time.Millisecond

// clockSample is the thread's run-queue wait read at a moment.
type clockSample struct {
	at   time.Time
	tid  int
	wait time.Duration
}

// maxLockedClocks bounds how many runs keep a thread of their own at once.
// A thread is a task the kernel counts against pids.max and RLIMIT_NPROC,
// and the Go runtime stops the whole program past 10,000 of them: ten
// thousand runs ending together would otherwise hold a thread each. A run
// past the bound waits on the runtime's timers instead, as outside Linux:
// its Timeline subtracts nothing of the machine's waits. Two cores serve
// far fewer teardowns at once than this.
const maxLockedClocks = 64

// lockedClocks holds a token for each locked clock.
var lockedClocks = make(chan struct{}, maxLockedClocks)

// lockedNow counts the clocks locked now, and lockedPeak the most there
// were at once: what the bound holds, read by its test.
var lockedNow, lockedPeak atomic.Int64

// lock keeps the calling goroutine on its thread until unlock, and takes a
// first sample; past maxLockedClocks locked at once, it does nothing and
// the clock stays the runtime's.
func (c *ownClock) lock() {
	if c.locked {
		return
	}
	select {
	case lockedClocks <- struct{}{}:
	default:
		if !mutant.ClocksUnbounded {
			return
		}
	}
	runtime.LockOSThread()
	c.locked, c.took, c.tid = true, true, unix.Gettid()
	for n := lockedNow.Add(1); ; {
		peak := lockedPeak.Load()
		if n <= peak || lockedPeak.CompareAndSwap(peak, n) {
			break
		}
	}
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		fd = -1
	}
	c.mu.Lock()
	c.wake = fd
	c.mu.Unlock()
	c.sample()
}

// running reports whether the clock is locked.
func (c *ownClock) running() bool { return c.locked }

func (c *ownClock) unlock() {
	if !c.locked {
		return
	}
	c.mu.Lock()
	if c.wake > 0 {
		unix.Close(c.wake)
	}
	c.wake = -1
	c.mu.Unlock()
	runtime.UnlockOSThread()
	c.locked = false
	lockedNow.Add(-1)
	select {
	case <-lockedClocks:
	default: // a mutant's clock past the bound
	}
}

// poke ends the current wait of the locked goroutine, if it is in one;
// safe from any goroutine.
func (c *ownClock) poke() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wake > 0 {
		var one = [8]byte{1}
		unix.Write(c.wake, one[:])
	}
}

// read returns the calling thread's id and run-queue wait so far.
func (c *ownClock) read() (int, time.Duration) {
	tid := c.tid
	if !c.locked {
		tid = unix.Gettid()
	}
	return tid, procfs.RunWait(tid)
}

// sample records the thread's run-queue wait now: taken before every wait,
// so that an action due during the wait finds a sample from before it.
func (c *ownClock) sample() {
	tid, w := c.read()
	c.samples[c.n%len(c.samples)] = clockSample{at: time.Now(), tid: tid, wait: w}
	c.n++
}

// event measures an action taken now that was due at due; credit is time
// since due that was not corral's own either (waits for other processes to
// end, other threads' waits for a CPU while they did corral's work).
func (c *ownClock) event(due time.Time, credit time.Duration) Event {
	now := time.Now()
	ev := Event{At: now}
	if due.IsZero() || !now.After(due) {
		return ev
	}
	tid, w := c.read()
	// The latest sample taken no later than due, on this thread: the
	// thread's run-queue wait since then is at least its wait since due
	// (it was asleep in between, or working before due).
	var ref *clockSample
	for i := range c.samples[:min(c.n, len(c.samples))] {
		s := &c.samples[i]
		if s.tid == tid && !s.at.After(due) && (ref == nil || s.at.After(ref.at)) {
			ref = s
		}
	}
	wall := now.Sub(due)
	if ref != nil {
		ev.Starved = w - ref.wait
	}
	for _, b := range c.blocked {
		if b.end.After(due) {
			credit += min(b.d, b.end.Sub(due))
		}
	}
	c.blocked = c.blocked[:0]
	if !c.nearAt.IsZero() && !c.nearAt.After(due) {
		// The goroutine woke on its thread but may have waited for the
		// runtime's processor, held by a thread the machine kept from a
		// CPU: the other threads' waits around the wake-up; or it slept
		// past its wake-up, parked until the runtime gave it a processor
		// (the larger of the two: they may be one delay seen twice).
		credit += max(c.near, c.overslept)
	}
	c.near, c.nearAt, c.overslept = 0, time.Time{}, 0
	ev.Starved = min(max(ev.Starved, 0)+credit, wall)
	ev.Late = wall - ev.Starved
	return ev
}

// nap waits on the locked thread, in the kernel, until d has passed, the
// process of exit (a pidfd; may be nil) has exited, or poke is called. It
// reports false, having waited for nothing, when it cannot: the thread is
// not locked, or the process has exited already (the caller then waits for
// what follows that exit). With due, the nap ends when an action is due:
// nearDue before its end, the process's threads are looked at, for event.
func (c *ownClock) nap(d time.Duration, exit *os.File, due bool) bool {
	c.mu.Lock()
	wake := c.wake
	c.mu.Unlock()
	if !c.locked || wake <= 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(wake), Events: unix.POLLIN}}
	c.sample()
	c.near, c.nearAt, c.overslept = 0, time.Time{}, 0
	end := time.Now().Add(d)
	if mutant.NapLate && due {
		end = end.Add(200 * time.Millisecond)
	}
	wait := func() bool {
		if len(fds) > 1 {
			if n, err := unix.Poll(fds[1:], 0); err != nil || n > 0 {
				return false // exited already
			}
		}
		look := due
		var near threadsWait
		r0, w0 := procfs.SchedTimes(c.tid)
		defer func() {
			if near != nil {
				// Back in Go code: the runtime gave a processor back.
				c.near = c.since(near)
				c.overslept = c.oversleptSince(end, r0, w0)
			}
		}()
		for {
			left := time.Until(end)
			if look && left <= nearDue {
				near, c.nearAt, look = c.threads(), time.Now(), false
			}
			if left <= 0 {
				break
			}
			if look {
				left -= nearDue
			}
			ts := unix.NsecToTimespec(int64(left))
			// EINTR: a signal for the runtime; wait out the rest.
			n, err := unix.Ppoll(fds, &ts, nil)
			if err == unix.EINTR || err == nil && n == 0 {
				continue // the end, or a look at the threads, is next
			}
			break
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			var b [8]byte
			unix.Read(wake, b[:])
		}
		return true
	}
	if exit == nil {
		return wait()
	}
	rc, err := exit.SyscallConn()
	if err != nil {
		return false
	}
	waited := false
	rc.Control(func(fd uintptr) {
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		waited = wait()
	})
	return waited
}

// oversleptSince returns how long the locked thread slept past end, the
// end of the nap it asked the kernel for, given its run and run-queue
// times r0 and w0 from before the nap: of the wall time since end, what it
// neither ran nor waited for a CPU, it slept. That is the kernel waking it
// late, or the runtime keeping it parked after the system call until a
// processor was free (the process's other goroutines held them all): not
// corral's own choice, which was end. The time it ran and waited since
// before the nap is all taken off, so the figure is at most the true one.
// Zero where the kernel does not report the times.
func (c *ownClock) oversleptSince(end time.Time, r0, w0 time.Duration) time.Duration {
	now := time.Now()
	r1, w1 := procfs.SchedTimes(c.tid)
	if r1 == 0 && w1 == 0 {
		return 0
	}
	return max(now.Sub(end)-(r1-r0)-(w1-w0), 0)
}

// threadsWait is the run-queue wait of each thread of this process at a
// moment.
type threadsWait map[int]time.Duration

// threads reads the run-queue wait of every thread of this process: for a
// hand-off to another goroutine, which runs on a thread of its own.
func (c *ownClock) threads() threadsWait {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	m := make(threadsWait, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			m[tid] = procfs.RunWait(tid)
		}
	}
	return m
}

// since returns the run-queue wait of all threads since before, other
// than the locked one (its own wait is counted by event).
func (c *ownClock) since(before threadsWait) time.Duration {
	if before == nil {
		return 0
	}
	var sum time.Duration
	for tid, w := range c.threads() {
		if was, ok := before[tid]; ok && tid != c.tid && w > was {
			sum += w - was
		}
	}
	return sum
}

// kernel runs fn, a sequence of system calls that do not wait by design
// (reading /proc, signalling through pidfds, writing cgroup.kill), and
// counts as the machine's the time the thread spent neither running nor
// waiting for a CPU in it: blocked on a kernel lock that another process
// held (cgroup.kill takes the hierarchy's one lock, which every cgroup's
// creation and removal takes too; a /proc read waits for an exiting
// process's locks). fn must not wait itself: a wait it made would be
// counted as the machine's too.
func (c *ownClock) kernel(fn func()) {
	if !c.locked {
		fn()
		return
	}
	r0, w0 := procfs.SchedTimes(c.tid)
	t0 := time.Now()
	fn()
	end := time.Now()
	r1, w1 := procfs.SchedTimes(c.tid)
	if b := end.Sub(t0) - (r1 - r0) - (w1 - w0); b > 0 {
		c.blocked = append(c.blocked, blockedSpell{end: end, d: b})
	}
}
