package proc

import (
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
)

// ownClock is corral's own clock for one run's teardown (see Timeline):
// the supervising goroutine locks its OS thread, waits on it in the
// kernel, and counts that thread's run-queue wait as the machine's.
type ownClock struct {
	locked  bool
	tid     int
	samples [8]clockSample // the latest, in a ring
	n       int
}

// clockSample is the thread's run-queue wait read at a moment.
type clockSample struct {
	at   time.Time
	tid  int
	wait time.Duration
}

// lock keeps the calling goroutine on its thread until unlock, and takes a
// first sample.
func (c *ownClock) lock() {
	if c.locked {
		return
	}
	runtime.LockOSThread()
	c.locked, c.tid = true, unix.Gettid()
	c.sample()
}

func (c *ownClock) unlock() {
	if c.locked {
		runtime.UnlockOSThread()
		c.locked = false
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
// spent since due waiting for other processes to end.
func (c *ownClock) event(due time.Time, credit time.Duration) Event {
	tid, w := c.read()
	now := time.Now()
	ev := Event{At: now}
	if due.IsZero() || !now.After(due) {
		return ev
	}
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
	ev.Starved = min(max(ev.Starved, 0)+credit, wall)
	ev.Late = wall - ev.Starved
	return ev
}

// nap waits on the locked thread, in the kernel, until d has passed or the
// process of exit (a pidfd) has exited. It reports false, having waited
// for nothing, when it cannot: the thread is not locked, there is no
// pidfd, or the process has exited already (the caller then waits for
// what follows that exit).
func (c *ownClock) nap(d time.Duration, exit *os.File) bool {
	if !c.locked || exit == nil {
		return false
	}
	rc, err := exit.SyscallConn()
	if err != nil {
		return false
	}
	c.sample()
	end := time.Now().Add(d)
	waited := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err != nil || n > 0 {
			return // exited already
		}
		waited = true
		for {
			left := time.Until(end)
			if left <= 0 {
				return
			}
			ts := unix.NsecToTimespec(int64(left))
			// EINTR: a signal for the runtime; wait out the rest.
			if _, err := unix.Ppoll(fds, &ts, nil); err != unix.EINTR {
				return
			}
		}
	})
	return waited
}
