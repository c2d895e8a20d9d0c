package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/tracing"
)

// Errors returned by Start. They are wrapped with the detail of what
// failed; test them with errors.Is.
var (
	// ErrTierUnavailable means the containment tier asked for in
	// Spec.Containment cannot be provided here.
	ErrTierUnavailable = errors.New("containment tier unavailable")

	// ErrNotFound means the program does not exist or is not in PATH. It
	// wraps exec.ErrNotFound or fs.ErrNotExist as well.
	ErrNotFound = errors.New("command not found")

	// ErrNotExecutable means the program exists but cannot be executed. It
	// wraps fs.ErrPermission or the exec error as well.
	ErrNotExecutable = errors.New("command not executable")
)

// After SIGKILL the kernel needs microseconds to a few milliseconds to end
// a process once it runs, but a starved machine may not run it for a long
// while. So the tree is given killConfirm (or the drain, if longer) to be
// gone; then every process still there is looked at: one the kernel holds
// in uninterruptible sleep (state D) for stuckAfter is stuck, and reported
// as a survivor; any other is merely waiting for a CPU to die on, and is
// waited for, up to killWait. These waits are the scheduler's time, not
// corral's: see Start.
const (
	killConfirm = 40 * time.Millisecond
	stuckAfter  = 200 * time.Millisecond
	killWait    = 10 * time.Second
)

// Process is a command running under supervision. Its methods are safe for
// concurrent use.
//
// Each Process has a supervising goroutine, a goroutine per output stream, a
// goroutine waiting for the main process (parked in the network poller on
// Linux) and, when Spec.Stdin is a reader other than an *os.File, a goroutine
// copying it. All of them have ended when Wait returns, except a stdin copier
// blocked in its reader's Read, which ends when that Read returns.
type Process struct {
	spec    Spec
	ctx     context.Context
	child   child
	start   time.Time
	streams [2]*stream
	stopCh  chan struct{}
	stop    sync.Once
	done    chan struct{}

	// tree is held while the tree is signalled from outside the
	// supervising goroutine (SignalTree, KillTree), and by finish while it
	// releases the tree, so that a released tree is never signalled.
	tree sync.Mutex

	// Owned by the supervising goroutine, but for clock.poke.
	clock   ownClock
	unpoked func() bool // ends the poke at the context's end
	tl      Timeline

	mu     sync.Mutex
	killed map[procKey]struct{}
	res    Result
	err    error

	tr runTrace // the run's spans (trace.go)
}

// Run starts the command described by spec and waits for it. See Start and
// Process.Wait.
func Run(ctx context.Context, spec *Spec) (*Result, error) {
	p, err := Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return p.Wait()
}

// Start starts the command described by spec inside its containment and
// returns at once. The run ends by itself when the main process has exited
// and its leftovers are handled (see Spec.Leftovers), or is torn down when
// Spec.Timeout expires, when ctx is done, or when Stop is called: the tree
// gets Spec.StopSignal and SIGCONT, then SIGKILL after the grace period,
// and the output is drained for at most Spec.Drain. Whatever the command
// does, Wait returns no later than Timeout + Grace + Drain + 50 ms after
// the command started (Result.Start; or, for ctx and Stop, after the
// request), and SIGKILL comes within 50 ms of the grace's end, counted on
// corral's own clock (see Timeline, recorded in Result.Timeline): when the
// machine gives no CPU to corral, or to the processes it has SIGKILLed so
// that they can die, the wait for the scheduler is added in wall time (a
// killed process that is merely not scheduled yet is waited for, up to
// 10 s, never reported as a survivor). From shortly before a timeout, or
// from Stop, the context's end or the main process's exit, until Wait
// returns, the supervising goroutine holds an OS thread of its own (at
// most 64 runs at once do; see Timeline). A process the kernel holds in
// uninterruptible sleep after SIGKILL is reported in Result.Survivors and
// Result.SurvivorNote once it has stayed there 200 ms.
//
// Start returns an error, and nothing runs, when the program cannot be
// found or executed, the directory does not exist, the containment asked
// for is unavailable, the spec is invalid, or a limit is hit: then the
// error wraps ErrLimit and names it (see CheckCapacity). The first Start
// raises this process's soft RLIMIT_NOFILE to its hard limit (see
// RaiseOpenFileLimit).
func Start(ctx context.Context, spec *Spec) (*Process, error) {
	if spec == nil || len(spec.Args) == 0 {
		return nil, errors.New("proc: spec has no command (Args is empty)")
	}
	if err := checkSandbox(spec); err != nil {
		return nil, err
	}
	if err := checkGuard(spec); err != nil {
		return nil, err
	}
	raiseOnce.Do(raiseNoFile)
	p := &Process{
		spec:   *spec,
		ctx:    ctx,
		stopCh: make(chan struct{}),
		done:   make(chan struct{}),
		killed: map[procKey]struct{}{},
	}
	path, err := lookPath(spec)
	if err != nil {
		return nil, err
	}
	env := buildEnv(spec.EnvMode, spec.EnvAllow, spec.Env, os.Environ())

	release, err := enterStart(ctx)
	if err != nil {
		return nil, err
	}
	// Deferred first, so run last: the place is given back once our
	// copies of the child's ends are closed.
	defer release()
	var closeAfter []*os.File // our copies of the child's ends
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
	}()
	stdin, owned, copyStdin, err := openStdin(spec.stdin())
	if err != nil {
		return nil, err
	}
	if owned {
		closeAfter = append(closeAfter, stdin)
	}
	var files [3]*os.File
	files[0] = stdin
	for i, w := range []io.Writer{spec.Stdout, spec.Stderr} {
		s, childEnd, err := newStream(spec, i, w)
		if err != nil {
			p.closeStreams()
			copyStdin.abandon()
			return nil, limitCause(err)
		}
		p.streams[i] = s
		files[i+1] = childEnd
		closeAfter = append(closeAfter, childEnd)
	}
	if err := ctx.Err(); err != nil {
		p.closeStreams()
		copyStdin.abandon()
		return nil, fmt.Errorf("proc: not started: %w", err)
	}
	env = tracing.Env(p.tr.start(ctx, spec, path), env)
	c, err := spawn(&spawnAttr{
		path:  path,
		args:  spec.Args,
		env:   env,
		dir:   spec.Dir,
		files: files,
		cred:  spec.Credential,
		tier:  spec.Containment,
		label: spec.Label,
		limit: spec.Limits,

		sandbox:   spec.Sandbox,
		enclosure: spec.Enclosure,
		guard:     spec.Guard,

		shareGroup: spec.ShareGroup,
		hold:       spec.Hold,
		holdCtx:    ctx,
	})
	if err != nil {
		p.closeStreams()
		copyStdin.abandon()
		err = startError(path, spec, limitCause(err))
		p.tr.startFailed(err)
		return nil, err
	}
	// The run, and its timeout, start when the command runs: starting an
	// init or building a sandbox came before.
	p.start = time.Now()
	p.child = c
	if k, ok := c.(kernelTimer); ok {
		k.timeKernelBy(p.clock.kernel)
	}
	p.res = Result{
		Pid:             c.handle().Pid,
		ExitCode:        -1,
		Start:           p.start,
		Containment:     c.handle().Containment,
		ContainmentNote: c.note(),
		LimitsNote:      c.limitsNote(),
	}
	if b, ok := c.(bindingReporter); ok {
		p.res.Binding, p.res.BindingNote = b.binding()
	}
	p.tr.started(&p.res)
	copyStdin.start()
	for _, s := range p.streams {
		s.poke = p.clock.poke
		go s.run()
	}
	go p.supervise(copyStdin)
	return p, nil
}

// Pid returns the main process's pid.
func (p *Process) Pid() int { return p.res.Pid }

// Handle returns what identifies the run's tree for Reclaim.
func (p *Process) Handle() Handle { return p.child.handle() }

// Done returns a channel closed when the run is over and Wait returns.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the run to be over and returns its result. The result is
// never nil; the error reports a failure of supervision itself (such as a
// failed reap), never the command's own failure, which is in the result.
// Wait may be called any number of times, from any goroutine.
func (p *Process) Wait() (*Result, error) {
	<-p.done
	r := p.res
	return &r, p.err
}

// Stop tears the run down as a timeout would, and marks it cancelled. It
// returns at once; Wait reports the end. Stop after the end does nothing.
func (p *Process) Stop() {
	p.stop.Do(func() { close(p.stopCh) })
	p.clock.poke()
}

// Signal sends sig to the main process only, through its pidfd where the
// system has them, so a recycled pid is never signalled. It returns
// os.ErrProcessDone once the main process has exited. On Windows, SIGINT
// is sent as CTRL_BREAK_EVENT to the command's process group and any other
// signal terminates the main process.
func (p *Process) Signal(sig syscall.Signal) error {
	select {
	case <-p.child.exited():
		return os.ErrProcessDone
	default:
	}
	return p.child.signalMain(sig)
}

// Output returns what has been kept of each stream so far, while the
// command runs.
func (p *Process) Output() (stdout, stderr corral.Output) {
	return p.streams[0].buf.Output(), p.streams[1].buf.Output()
}

// clockLead is how long before a timeout the supervising goroutine takes
// a thread of its own and waits for the deadline there, in the kernel, on
// corral's own clock (see Timeline): a timer of the Go runtime may fire
// late on a starved machine, by a time this clock cannot tell from
// corral's own, and a second is more than any that a machine still
// running corral takes.
const clockLead = time.Second

// lockClock starts corral's own clock, if it is not running yet: the
// supervising goroutine keeps its thread from now on, and Stop or the
// context's end wake its waits.
func (p *Process) lockClock() {
	p.clock.lock()
	if p.unpoked == nil {
		p.unpoked = context.AfterFunc(p.ctx, p.clock.poke)
	}
}

// lockClockFrom starts corral's own clock for an action due at due, and
// returns when it is due by that clock: due, if the clock was running
// then; else now, when the action was found due (the leftovers of a main
// process that exited, seen once its output was drained): the clock
// cannot tell the machine's waits from before it ran.
func (p *Process) lockClockFrom(due time.Time) time.Time {
	if p.clock.running() {
		return due
	}
	p.lockClock()
	return latest(due, time.Now())
}

func (p *Process) supervise(in *stdinCopier) {
	defer close(p.done)
	defer func() {
		if p.unpoked != nil {
			p.unpoked()
		}
		p.clock.unlock()
	}()
	var due time.Time
	var early <-chan time.Time
	if p.spec.Timeout > 0 {
		due = p.start.Add(p.spec.Timeout)
		t := time.NewTimer(time.Until(due) - clockLead)
		defer t.Stop()
		early = t.C
	}
	select {
	case <-p.child.exited():
		// The clock is locked once there is something to wait for or
		// to end (see afterExit): most runs end with their main process
		// and their pipes, and a locked thread costs them a fifth of
		// their spawn's time (handing the runtime's processor between
		// threads).
		p.tl.Begin = p.clock.event(time.Time{}, 0)
		p.afterExit(due)
	case <-early:
		p.lockClock()
		switch p.napUntil(due) {
		case untilExit:
			p.tl.Begin = p.clock.event(time.Time{}, 0)
			p.afterExit(due)
		case untilDue:
			p.res.TimedOut = !mutant.TimedOutHidden
			p.tl.Begin = p.clock.event(due, 0)
			p.drain(p.escalate(p.tl.Begin.At))
		default:
			p.cancelled()
		}
	case <-p.ctx.Done():
		p.lockClock()
		p.cancelled()
	case <-p.stopCh:
		p.lockClock()
		p.cancelled()
	}
	in.abandon()
	p.finish()
}

// cancelled tears the run down on Stop or the context's end.
func (p *Process) cancelled() {
	p.res.Cancelled = true
	p.tl.Begin = p.clock.event(time.Time{}, 0)
	p.drain(p.escalate(p.tl.Begin.At))
}

// What ended a wait for the deadline.
const (
	untilDue = iota
	untilExit
	untilStop
)

// napUntil waits on corral's own thread until due, the main process's
// exit, Stop or the context's end, and says which came first.
func (p *Process) napUntil(due time.Time) int {
	for {
		switch {
		case p.mainExited():
			return untilExit
		case p.stopRequested():
			return untilStop
		}
		left := time.Until(due)
		if left <= 0 {
			return untilDue
		}
		p.napOrStop(left)
	}
}

// napOrStop is nap until an action is due, ended early by Stop or the
// context's end too.
func (p *Process) napOrStop(d time.Duration) {
	if w, ok := p.child.(exitWatcher); ok && p.clock.nap(d, w.exitFile(), true) {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.child.exited():
	case <-p.stopCh:
	case <-p.ctx.Done():
	}
}

func (p *Process) stopRequested() bool {
	select {
	case <-p.stopCh:
		return true
	case <-p.ctx.Done():
		return true
	default:
		return false
	}
}

// nap waits up to d, less if the main process exits: on the locked thread
// in the kernel where it can (see ownClock), on a timer otherwise. due says
// that an action is due at its end.
func (p *Process) nap(d time.Duration, due bool) {
	if w, ok := p.child.(exitWatcher); ok && p.clock.nap(d, w.exitFile(), due) {
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-p.child.exited():
		t.Stop()
	}
}

// exitWatcher is a child whose main process's exit can be waited for in
// the kernel.
type exitWatcher interface {
	exitFile() *os.File // a pidfd, readable once it has exited; or nil
}

// afterExit handles the leftovers of a main process that exited by itself;
// due is the run's deadline, if it has one.
func (p *Process) afterExit(due time.Time) {
	drainEnd := time.Now().Add(p.spec.drain())
	switch p.spec.Leftovers {
	case corral.LeftoversWait:
		if !p.waitLeftovers(due) {
			p.lockClock()
			p.drain(p.escalate(time.Now()))
			return
		}
		p.drain(time.Now().Add(p.spec.drain()))
	case corral.LeftoversDetach:
		p.drain(drainEnd)
		p.res.Detached = p.child.alive()
	default:
		if mutant.DrainDropped {
			drainEnd = time.Now()
		}
		p.drain(drainEnd)
		if !mutant.TreeCheckSkipped && p.child.alive() > 0 && !leftGoing(p.child) {
			// The pipes are closed by now; the kill needs no second drain.
			p.escalate(p.lockClockFrom(p.tl.Drained.At))
		}
	}
}

// leftGoer is a child that can tell leftovers on their way out by
// themselves: processes in the kernel's exit, which closed the pipes as
// they exited, so that the drain saw them end a moment before the
// processes are gone (Linux).
type leftGoer interface {
	// leftGoing reports whether every process the tree has besides its
	// main process is on its way out by itself.
	leftGoing() bool
}

// leftGoing reports whether what c's tree has left is on its way out by
// itself: it is not signalled, the run's end waits for it (finish reaps
// it), and the run reports none killed.
func leftGoing(c child) bool {
	g, ok := c.(leftGoer)
	return ok && g.leftGoing() && !mutant.ExitingSignalled
}

// waitLeftovers waits for the tree to empty; it reports false, with the
// reason recorded, when the deadline (if not zero), the context or Stop
// came first.
func (p *Process) waitLeftovers(due time.Time) bool {
	var timeout <-chan time.Time
	if !due.IsZero() {
		t := time.NewTimer(time.Until(due))
		defer t.Stop()
		timeout = t.C
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for p.child.alive() > 0 {
		select {
		case <-tick.C:
		case <-timeout:
			p.res.TimedOut = true
			return false
		case <-p.ctx.Done():
			p.res.Cancelled = true
			return false
		case <-p.stopCh:
			p.res.Cancelled = true
			return false
		}
	}
	return true
}

// execWindow is how long after the stop signal escalate watches for
// processes that lost it in a fork and then executed their program; such a
// process executes within microseconds of its fork once it runs, so the
// window counts only the time each process was not waiting for a CPU.
const execWindow = 250 * time.Millisecond

// escalate ends the tree: the stop signal (with SIGCONT), up to the grace
// period for everything to exit, then SIGKILL. During the grace, a process
// that joined the tree after the signal went out, or that runs another
// program than it did then, gets the signal too: a shell that catches the
// signal or blocks it across fork (bash does both) may start a command
// after the signal reached it, and the command must not sit the grace out
// unaware. It returns the deadline for
// the output drain that follows: Drain from when the tree was gone, or,
// after SIGKILL, Drain from the kill, during which the tree's death is
// confirmed too (a loaded machine takes a while to run the exits).
func (p *Process) escalate(due time.Time) time.Time {
	p.tr.beginTeardown(p)
	if g := p.spec.grace(); g > 0 {
		sig := p.spec.StopSignal
		if sig == 0 {
			sig = syscall.SIGTERM
		}
		var sent map[procKey]sentProc
		var signalled []procKey
		p.clock.kernel(func() { sent, signalled = p.child.stopTree(sig) })
		p.addKilled(signalled)
		p.tr.sentSignal(sig)
		p.tl.Stop = p.clock.event(due, 0)
		late := func() { p.clock.kernel(func() { p.addKilled(p.child.signalLate(sig, sent)) }) }
		due = p.tl.Stop.At.Add(g)
		if p.waitGone(due, late) {
			p.tr.treeGone()
			p.tl.Gone = Event{At: time.Now()}
			return p.tl.Gone.At.Add(p.spec.drain())
		}
	}
	if mutant.KillLate {
		time.Sleep(200 * time.Millisecond)
	}
	p.tr.sentKill()
	p.clock.kernel(func() { p.addKilled(p.child.killTree()) })
	p.tl.Kill = p.clock.event(due, 0)
	deadline := p.tl.Kill.At.Add(max(p.spec.drain(), killConfirm))
	if p.waitGone(deadline, nil) || p.waitDying() {
		p.tl.Gone = Event{At: time.Now()}
	} else {
		p.res.Survivors = p.child.alive() // the main process included
	}
	return deadline
}

// dyingTree is a tree that can tell, after SIGKILL, a process still on its
// way out from one stuck in the kernel.
type dyingTree interface {
	// dying returns the live processes of the tree (the main process
	// included while it lives) that are in uninterruptible sleep, and how
	// many others are alive: runnable, about to die once scheduled.
	dying() (stuck []stuckProc, others int)
}

// stuckProc is a process the kernel holds in uninterruptible sleep.
type stuckProc struct {
	pid   int
	comm  string
	state byte
}

// waitDying waits, after SIGKILL and its confirmation window, for the
// processes still there to die: it reports true when the tree is gone, and
// false, with Result.SurvivorNote set, when what is left has been stuck in
// uninterruptible sleep for stuckAfter, or killWait has passed.
func (p *Process) waitDying() bool {
	d, ok := p.child.(dyingTree)
	if !ok {
		return false
	}
	end := time.Now().Add(killWait)
	stuckSince := map[int]time.Time{}
	for {
		if p.mainExited() && p.child.alive() == 0 {
			return true
		}
		stuck, others := d.dying()
		now := time.Now()
		long := 0
		seen := make(map[int]bool, len(stuck))
		for _, s := range stuck {
			seen[s.pid] = true
			if _, ok := stuckSince[s.pid]; !ok {
				stuckSince[s.pid] = now
			}
			if now.Sub(stuckSince[s.pid]) >= stuckAfter {
				long++
			}
		}
		for pid := range stuckSince {
			if !seen[pid] {
				delete(stuckSince, pid) // it moved: not stuck
			}
		}
		if (others == 0 && len(stuck) > 0 && long == len(stuck)) || now.After(end) {
			p.res.SurvivorNote = survivorNote(stuck, others)
			return false
		}
		p.nap(5*time.Millisecond, false)
	}
}

func survivorNote(stuck []stuckProc, others int) string {
	var b strings.Builder
	for i, s := range stuck {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "pid %d (%s) in state %c", s.pid, s.comm, s.state)
	}
	if len(stuck) > 0 {
		b.WriteString(": uninterruptible sleep, stuck in the kernel")
	}
	if others > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d more still alive %v after SIGKILL", others, killWait)
	}
	return b.String()
}

// waitGone polls until the main process has exited and no other process of
// the tree is alive, or the deadline passes; it reports which came first.
// each, if set, runs at every poll.
func (p *Process) waitGone(deadline time.Time, each func()) bool {
	d := 500 * time.Microsecond
	for {
		if p.mainExited() && p.treeGone() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		if each != nil {
			each()
		}
		p.nap(min(d, left), left <= d)
		d = min(d*2, 10*time.Millisecond)
	}
}

// treeGone reports whether nothing of the tree is alive. Reading the tree
// (a cgroup's process list, /proc) does not wait by design, but may be
// blocked on the kernel's locks: that is the machine's time (see
// ownClock.kernel).
func (p *Process) treeGone() bool {
	n := 0
	p.clock.kernel(func() { n = p.child.alive() })
	return n == 0
}

func (p *Process) mainExited() bool {
	select {
	case <-p.child.exited():
		return true
	default:
		return false
	}
}

func (p *Process) addKilled(keys []procKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		p.killed[k] = struct{}{}
	}
}

// drainSettle is how long (in nanoseconds; 2 ms, a test sets it longer) a
// drain shorter than clockLead waits for the pipes on the runtime's timer
// before it locks corral's own clock, half of the drain at most. The
// pipes of a main process that exited with nothing else holding them reach
// EOF within microseconds of the exit (the kernel closes its descriptors
// before it reports it), but their readers run a little after the exit is
// seen: locking the clock for them, an eventfd and the thread handed back
// and forth, cost such a run's end 0.1 ms, a fortieth of a `corral run --
// /bin/true`.
var drainSettle atomic.Int64

func init() { drainSettle.Store(int64(2 * time.Millisecond)) }

// drain lets the readers take what is left in the pipes until deadline,
// then stops them. Pipes whose writers are all gone end sooner, at EOF.
// On corral's own clock, the wait for the deadline is the supervising
// thread's, and the readers' last reads, on threads of their own, count
// without those threads' waits for a CPU.
func (p *Process) drain(deadline time.Time) {
	due := deadline
	left := time.Until(deadline) - clockLead
	if left <= 0 {
		// The whole drain is the last stretch (the default drain is a
		// quarter of a second): still settle on the runtime first.
		left = min(time.Duration(drainSettle.Load()), time.Until(deadline)/2)
		if mutant.DrainUnsettled {
			left = 0
		}
	}
	if left > 0 && !p.clock.running() {
		// Most pipes end with the main process: wait for them on the
		// runtime's timer, and lock the clock only for the deadline's
		// last stretch, as for a run's timeout.
		t := time.NewTimer(left)
		p.waitStreams(t.C)
		t.Stop()
	}
	for !p.streamsDone() {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		if !p.clock.running() {
			p.lockClock()
			if p.streamsDone() {
				break // a reader that ended before the clock ran could not wake it
			}
		}
		if !p.clock.nap(left, nil, true) {
			break // the deadline, or no clock of its own: the readers' deadline
		}
	}
	var handoff threadsWait
	if !p.streamsDone() && !time.Now().Before(deadline) {
		handoff = p.clock.threads()
		deadline = time.Now()
	}
	for _, s := range p.streams {
		select {
		case <-s.done: // at EOF already
		default:
			s.r.SetReadDeadline(deadline)
		}
	}
	for _, s := range p.streams {
		<-s.done
	}
	// Due at the deadline, or once the tree was gone if that came later
	// (a killed tree the machine was slow to end).
	p.tl.Drained = p.clock.event(latest(due, p.tl.Gone.At), p.clock.since(handoff))
}

// waitStreams waits until every stream is at EOF or stop fires.
func (p *Process) waitStreams(stop <-chan time.Time) {
	for _, s := range p.streams {
		select {
		case <-s.done:
		case <-stop:
			return
		}
	}
}

func (p *Process) streamsDone() bool {
	for _, s := range p.streams {
		select {
		case <-s.done:
		default:
			return false
		}
	}
	return true
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (p *Process) finish() {
	p.res.Duration = time.Since(p.start)
	over := latest(p.tl.Drained.At, p.tl.Gone.At)
	p.tree.Lock()
	if p.tr.recording() {
		p.tr.oomKills = oomKills(p.child)
	}
	st, err := p.child.finish(p.spec.Leftovers == corral.LeftoversDetach && p.res.Detached > 0)
	p.tree.Unlock()
	if d, ok := p.child.(detachNoter); ok && d.detachNote() != "" {
		p.res.BindingNote = d.detachNote()
	}
	if err != nil {
		p.err = fmt.Errorf("proc: finishing pid %d: %w", p.res.Pid, err)
	}
	if st.exited {
		p.res.ExitCode = st.code
		p.res.Signal = st.signal
	}
	p.mu.Lock()
	p.res.Killed = len(p.killed)
	p.mu.Unlock()
	if k, ok := p.child.(leftKiller); ok {
		p.res.Killed += k.killedLeft()
	}
	p.res.Stdout = p.streams[0].finish()
	p.res.Stderr = p.streams[1].finish()
	if r, ok := p.child.(sandboxReporter); ok {
		p.res.Sandbox = r.sandboxResult()
	}
	var credit time.Duration
	if w, ok := p.child.(othersWaiter); ok {
		credit = w.othersWait()
	}
	if r, ok := p.child.(guardReporter); ok {
		p.res.Guard = r.guardResult()
	}
	p.tl.Returned = p.clock.event(over, credit)
	p.res.Timeline = p.tl
	p.tr.end(&p.res, p.err)
}

// kernelTimer is a child whose finish makes calls that the kernel may
// block on others' behalf (a sandbox's private /tmp removed while the
// kernel takes the sandbox's mounts down, under a lock every namespace of
// the machine contends for): it makes them through kernel, which credits
// the time they were blocked to the machine, as for the tree's reads.
type kernelTimer interface {
	timeKernelBy(kernel func(func()))
}

// leftKiller is a child whose finish had another process kill what the
// command left where corral does not see it (an init, the processes that
// left the process group): it says how many.
type leftKiller interface {
	killedLeft() int
}

// othersWaiter is a child that, in finish, waited for other processes to
// finish their exit (a tree's last orphans): that time is theirs.
type othersWaiter interface {
	othersWait() time.Duration
}

// detachNoter is a child that may fail to detach what a run left: the
// note, in Result.BindingNote, says why those processes end with this
// process after all.
type detachNoter interface {
	detachNote() string
}

func (p *Process) closeStreams() {
	for _, s := range p.streams {
		if s != nil {
			s.r.Close()
			s.closeSpill(true)
		}
	}
}

// exitStatus is how the main process ended.
type exitStatus struct {
	exited bool // false if it could not be collected
	code   int  // exit code, -1 when signalled
	signal syscall.Signal
}

// procKey names one process: pid and start time (0 where unknown).
type procKey struct {
	pid   int
	start uint64
}

// sentProc is what escalate knew of a process when the stop signal went
// to it: the program it ran, when, how long the process had waited for a
// CPU in its life, and the machine's CPU stall time then; and whether a
// look found it running that program past execWindow.
type sentProc struct {
	image       string
	at          time.Time
	wait, stall time.Duration
	past        bool
}

func lookPath(spec *Spec) (string, error) {
	path := spec.Path
	if path == "" {
		path = spec.Args[0]
	}
	if strings.ContainsRune(path, filepath.Separator) || (filepath.Separator != '/' && strings.ContainsRune(path, '/')) {
		if fi, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("proc: %s: %w: %w", path, ErrNotFound, err)
		} else if fi.IsDir() {
			return "", fmt.Errorf("proc: %s is a directory: %w", path, ErrNotExecutable)
		}
		return path, nil
	}
	lp, err := exec.LookPath(path)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("proc: %w: %w", ErrNotFound, err)
		}
		return "", fmt.Errorf("proc: %w: %w", ErrNotExecutable, err)
	}
	return lp, nil
}

func startError(path string, spec *Spec, err error) error {
	switch {
	case errors.Is(err, ErrTierUnavailable):
		return fmt.Errorf("proc: %w", err)
	case errors.Is(err, os.ErrNotExist):
		if spec.Dir != "" {
			if _, serr := os.Stat(spec.Dir); serr != nil {
				return fmt.Errorf("proc: working directory %s: %w", spec.Dir, serr)
			}
		}
		return fmt.Errorf("proc: starting %s: %w: %w", path, ErrNotFound, err)
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return fmt.Errorf("proc: starting %s: %w: %w", path, ErrNotExecutable, err)
	}
	return fmt.Errorf("proc: starting %s: %w", path, err)
}

type errUnknownSignal string

func (e errUnknownSignal) Error() string { return "unknown signal " + string(e) }
