package proc

import "time"

// Timeline is corral's own record of how it ended a run: when it acted,
// and how late each action came by corral's own clock. Its figures are
// what the bounded-return guarantee is stated on (see Late).
//
// Corral's own clock is the wall clock less the time the machine withheld
// a CPU from corral: from the moment it starts to end a run (a second
// before a timeout, at Stop or the context's end; for a main process that
// exited, a second before the drain's deadline, or, for a shorter drain,
// once its pipes had half of it, up to 2 ms, to end on their own; or
// when leftovers are found), the supervising goroutine keeps one OS
// thread, waits on it in the kernel (the deadline, the grace, the drain:
// no timer of the Go runtime in between), and reads that thread's
// run-queue wait from /proc/self/task/TID/schedstat. An action due at D and taken at A is
// Late by (A - D) less the run-queue wait of that thread between D and A:
// what corral's code spent (computing, waiting on a lock, sleeping)
// counts, what the scheduler kept it waiting for a CPU does not. The
// process's other threads' waits count too where the work passes through
// them: at the wake-up for a due time (until the goroutine runs again)
// and at the drain's end (the output readers' last reads); and a system
// call that does not wait by design but was blocked in the kernel (see
// Event.Starved) counts as the machine's. Outside Linux nothing is
// subtracted, nor for a run that began to end while 64 others were ending
// (each holds a thread, and threads are a limited resource: see
// CheckCapacity).
//
// An Event whose At is zero did not happen in this run (no timeout, a tree
// gone within the grace, ...).
type Timeline struct {
	// Begin is when corral began to end the run: the timeout seen (Late
	// counts from the deadline), Stop or the context's end seen (Late is
	// zero: the request reached corral's goroutine through the Go
	// scheduler, which this clock does not cover), or the main process's
	// exit seen.
	Begin Event

	// Stop is when the stop signal (and SIGCONT) had been sent to every
	// process of the tree; due at Begin.
	Stop Event

	// Kill is when SIGKILL had been sent to the whole tree; due when the
	// grace ended (Stop.At + Grace), or at Begin when the grace is negative.
	Kill Event

	// Gone is when corral saw the tree gone after the stop signal or
	// SIGKILL. How long that takes is the kernel's and the scheduler's
	// time (a killed process dies once it runs), not corral's: Late is
	// always zero, and Starved is zero.
	Gone Event

	// Drained is when the output had been read to its end, or to the
	// drain's deadline (Late counts from that deadline, or from Gone when
	// the tree took longer to die).
	Drained Event

	// Returned is when the result was complete; due when the tree was gone
	// and the output drained. Its Late is the own time corral took to reap
	// and release what held the run (waits for processes to finish their
	// exit, such as a tree's last orphans, are not counted).
	Returned Event
}

// Event is one action of corral's in a Timeline.
type Event struct {
	// At is the wall time of the action.
	At time.Time
	// Late is how long after it was due the action came, by corral's own
	// clock; never negative.
	Late time.Duration
	// Starved is what was subtracted from the wall-clock lateness: the
	// time corral's threads waited for a CPU, corral waited for other
	// processes to end, or a system call that does not wait by design
	// (a /proc read, a signal, cgroup.kill) was blocked in the kernel on a
	// lock another process held.
	Starved time.Duration
}

// Late returns the sum of the lateness of corral's actions in the run:
// the bounded-return guarantee is that it stays under 50 ms, so that Wait
// returns no later than Timeout + Grace + Drain + 50 ms after Start (after
// Stop or the context's end for those) by corral's own clock; in wall
// time, plus the time the machine withheld a CPU and the time the kernel
// took to end the killed processes.
func (t *Timeline) Late() time.Duration {
	return t.Begin.Late + t.Stop.Late + t.Kill.Late + t.Drained.Late + t.Returned.Late
}
